import base64
import io
import re
import subprocess

import numpy as np
import pandas as pd

from mathir.evaluation.significance import significance_table
from mathir.report.report import breakdown_chart, html_report, per_topic_chart, write_report

PER_TOPIC = {
    "bm25": pd.DataFrame({"qid": ["A.1", "A.2", "A.3", "A.4"], "nDCG'": [0.2, 0.5, 0.4, 0.9]}),
    "new": pd.DataFrame({"qid": ["A.1", "A.2", "A.3", "A.4"], "nDCG'": [0.6, 0.7, 0.3, 0.9]}),
}


def make_page():
    table = pd.DataFrame({n: {"nDCG'": df["nDCG'"].mean()} for n, df in PER_TOPIC.items()}).T
    sig = significance_table(PER_TOPIC, ["nDCG'"], baseline="bm25")
    groups = pd.Series({"A.1": "Proof", "A.2": "Proof", "A.3": "Concept", "A.4": "Computation"})
    figs = [("Per topic", per_topic_chart(PER_TOPIC, "nDCG'", "bm25")),
            ("By category", breakdown_chart(PER_TOPIC, "nDCG'", groups, "nDCG' by category"))]
    return html_report("ARQMath Task 1 <sample>", table, "bm25", sig, figs)


def test_report_is_self_contained_html_with_png_figures(tmp_path):
    page = make_page()
    assert "<title>ARQMath Task 1 &lt;sample&gt;</title>" in page
    images = re.findall(r"src='data:image/png;base64,([^']+)'", page)
    assert len(images) == 2
    assert all(base64.b64decode(i).startswith(b"\x89PNG") for i in images)
    assert "http://" not in page and "https://" not in page  # nothing to fetch
    p = write_report(tmp_path / "r.html", page)
    assert p.read_text(encoding="utf-8") == page


def _png_image(src: str):
    from PIL import Image

    head, data = src.split(",", 1)
    assert head == "data:image/png;base64"
    image = Image.open(io.BytesIO(base64.b64decode(data)))
    assert image.format == "PNG"
    return np.asarray(image.convert("RGB"))


def _columns_of(pixels: np.ndarray, color: str) -> int:
    """How many pixel columns of the image hold ``color`` (#rrggbb) somewhere."""
    rgb = np.array([int(color[i:i + 2], 16) for i in (1, 3, 5)])
    return int((np.abs(pixels.astype(int) - rgb).sum(axis=2) < 12).any(axis=0).sum())


def test_report_structure_parsed_as_html():
    """What a browser would show, read with lxml's HTML parser (no browser needed)."""
    import lxml.html

    doc = lxml.html.document_fromstring(make_page())
    assert doc.findtext(".//title") == "ARQMath Task 1 <sample>"
    assert [h.text_content() for h in doc.iter("h1", "h2")] == [
        "ARQMath Task 1 <sample>", "Per topic", "By category"]
    assert not doc.xpath("//script | //link | //iframe")  # self-contained, nothing runs
    (table,) = doc.xpath("//table")
    assert [th.text_content() for th in table.xpath("./thead/tr/th")] == ["run", "nDCG'"]
    rows = table.xpath("./tbody/tr")
    assert [[td.text_content() for td in tr.xpath("./td")] for tr in rows] == [
        ["bm25 (baseline)", "0.5000"], ["new", "0.6250"]]  # means of the per-topic values
    # The best run's cell is bold; the tooltip gives the paired difference to the baseline
    # (0.125, not significant on 4 topics: no † and no "sig" class).
    base_cell, new_cell = (tr.xpath("./td")[1] for tr in rows)
    assert new_cell.get("class") == "best" and base_cell.get("class") == ""
    assert new_cell.get("title").startswith("Δ +0.1250, 95% CI [")
    assert "significantly different" in doc.xpath("//p[@class='note']")[0].text_content()
    # One embedded PNG per figure, after its caption.
    images = doc.xpath("//img")
    assert [img.get("alt") for img in images] == ["Per topic", "By category"]
    assert [img.getprevious().text_content() for img in images] == ["Per topic", "By category"]
    per_topic, by_category = (_png_image(img.get("src")) for img in images)
    # Per topic: "new" gains on A.1 and A.2 (green bars), loses on A.3 (red), ties on A.4.
    green, red = _columns_of(per_topic, "#2b8a3e"), _columns_of(per_topic, "#c92a2a")
    assert red > 10 and 1.8 < green / red < 2.2, (green, red)
    # By category: one bar colour per run (matplotlib's first two), three categories each.
    assert _columns_of(by_category, "#1f77b4") > 30 and _columns_of(by_category, "#ff7f0e") > 30


def test_report_renders_in_headless_chromium(tmp_path):
    """Optional: layout and image decoding by a real browser (the structure is checked
    without one above)."""
    from tests.browser import chromium_or_skip

    chromium = chromium_or_skip()  # skips, or fails in CI (.ci/run installs Chromium)
    page = write_report(tmp_path / "report.html", make_page())
    shot = tmp_path / "shot.png"
    dom = subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert "nDCG" in dom.stdout and dom.stdout.count("<img") == 2
    subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={tmp_path / 'profile2'}", f"--screenshot={shot}", "--window-size=1000,1400",
         page.as_uri()], capture_output=True, timeout=120, check=True)
    assert shot.read_bytes().startswith(b"\x89PNG") and shot.stat().st_size > 10_000


def test_breakdown_figures_chart_each_grouping_the_caller_gives():
    from mathir.report.report import breakdown_figures

    groups = pd.DataFrame({"qid": ["A.1", "A.2", "A.3", "A.4"],
                           "category": ["Proof", "Proof", "Concept", "Computation"],
                           "difficulty": ["Low", "High", "High", "Low"]})
    figures = breakdown_figures(PER_TOPIC, "nDCG'", groups)
    assert [caption for caption, _ in figures] == ["nDCG' by topic category",
                                                   "nDCG' by topic difficulty"]
    # the same chart as breakdown_chart draws for that column, qid a column or the index
    by_category = groups.set_index("qid")["category"]
    assert figures[0][1] == breakdown_chart(PER_TOPIC, "nDCG'", by_category,
                                            "nDCG' by topic category")
    assert breakdown_figures(PER_TOPIC, "nDCG'", groups.set_index("qid")) == figures


def test_the_report_reads_no_task_files():
    # The caller passes topic groupings in (breakdown_figures): the report imports no
    # reader of a task's files.
    import ast
    import inspect

    from mathir.report import report

    tree = ast.parse(inspect.getsource(report))
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert {m for m in imported if m and m.startswith("mathir")} == {"mathir.report.charts",
                                                                   "mathir.storage"}


# --- user strings in figures and on the page ------------------------------------------------

HOSTILE = r"$\frac{$"  # mathtext would parse (and fail on) it
SURROGATE = "bad\ud800id"  # a lone surrogate (e.g. from a JSON \ud800 escape)


def _hostile_per_topic():
    qids = [f"A{HOSTILE}1", f"B{SURROGATE}", "C.3"]
    return {f"base{HOSTILE}": pd.DataFrame({"qid": qids, "m$": [0.2, 0.5, 0.4]}),
            f"new{SURROGATE}": pd.DataFrame({"qid": qids, "m$": [0.6, 0.1, 0.4]}),
            "plain": pd.DataFrame({"qid": qids, "m$": [0.3, 0.5, 0.9]})}


def test_charts_draw_dollars_and_lone_surrogates_as_text():
    """Run names, topic ids, groups and titles are drawn as given: `$` starts no mathtext
    (it crashed on `$\\frac{$`), and a lone surrogate is drawn as U+FFFD."""
    per_topic = _hostile_per_topic()
    png = per_topic_chart(per_topic, "m$", f"base{HOSTILE}")
    assert png.startswith(b"\x89PNG")
    groups = pd.Series({f"A{HOSTILE}1": f"kind {HOSTILE}", f"B{SURROGATE}": SURROGATE,
                        "C.3": "plain"})
    png = breakdown_chart(per_topic, "m$", groups, f"title {HOSTILE} {SURROGATE}")
    assert png.startswith(b"\x89PNG")


def test_chart_texts_are_the_strings_given(monkeypatch):
    from mathir.report import report

    figures = []
    monkeypatch.setattr(report, "png_bytes", lambda fig: figures.append(fig) or b"")
    per_topic_chart(_hostile_per_topic(), "m$", f"base{HOSTILE}")
    fig = figures[0]
    fig.canvas.draw()
    texts = [t.get_text() for ax in fig.axes for t in ax.get_xticklabels()]
    assert f"A{HOSTILE}1" in texts and "Bbad\ufffdid" in texts
    assert fig.axes[0].get_title().startswith(f"newbad\ufffdid vs base{HOSTILE}:")


def test_report_page_isolates_names_from_bidi_and_survives_surrogates(tmp_path):
    import lxml.html

    spoof = "bm25\u202egnp.exe"  # RIGHT-TO-LEFT OVERRIDE: would read "bm25exe.png"
    table = pd.DataFrame({"MAP": [0.5, 0.6, 0.7]}, index=[spoof, SURROGATE, "x"])
    page = html_report(f"title {spoof}", table, spoof)
    write_report(tmp_path / "r.html", page)  # lone surrogates do not stop the UTF-8 write
    doc = lxml.html.document_fromstring((tmp_path / "r.html").read_text(encoding="utf-8"))
    first = doc.xpath("//tbody/tr/td")[0]
    (bdi,) = first.xpath("./bdi")
    assert bdi.get("dir") == "ltr" and bdi.text_content() == "bm25<U+202E>gnp.exe"
    assert "\u202e" not in page and "\ud800" not in page and "bad\ufffdid" in page
    assert doc.findtext(".//title") == "title bm25<U+202E>gnp.exe"


HOSTILE_MEASURES = ["nDCG(judged_only=True)@10", "\\input{/etc/passwd}", "a|b", "<script>x</script>",
           "P'@10"]


def _hostile_table():
    return pd.DataFrame([[0.5, 0.25, 0.125, 0.75, 0.3]], columns=HOSTILE_MEASURES, index=["bm|25_<b>"])


def test_every_format_escapes_the_measure_columns_as_well_as_the_runs():
    from mathir.report.tables import format_table

    latex = format_table(_hostile_table(), "latex")
    header = latex.splitlines()[2]
    assert header == (r"Run & nDCG(judged\_only=True)@10 & \textbackslash{}input\{/etc/passwd\} & "
                      r"a\textbar{}b & \textless{}script\textgreater{}x\textless{}/script"
                      r"\textgreater{} & P$'$@10 \\")  # the prime still as a prime
    assert r"bm\textbar{}25\_\textless{}b\textgreater{}" in latex
    markdown = format_table(_hostile_table(), "markdown").splitlines()
    # every line has as many unescaped column breaks as the table has columns, plus one
    breaks = {len(re.findall(r"(?<!\\)\|", line)) for line in markdown}
    assert breaks == {len(HOSTILE_MEASURES) + 2}
    assert "a\\|b" in markdown[0] and "bm\\|25" in markdown[2]
    page = html_report("t", _hostile_table(), "bm|25_<b>")
    assert "<script>x" not in page and "&lt;script&gt;x&lt;/script&gt;" in page


def test_the_report_names_runs_relative_to_its_folder(tmp_path):
    from mathir.report.report import shown_path

    assert shown_path(tmp_path / "t1" / "bm25.tsv", tmp_path) == "t1/bm25.tsv"
    assert shown_path("/elsewhere/runs/bm25.tsv", tmp_path) == "bm25.tsv"
