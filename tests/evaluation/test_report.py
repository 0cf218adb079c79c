import base64
import re
import shutil
import subprocess

import pandas as pd
import pytest

from mathir.evaluation.report import breakdown_chart, html_report, per_topic_chart, write_report
from mathir.evaluation.significance import significance_table

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
    assert "(baseline)" in page and "0.6250" in page
    p = write_report(tmp_path / "r.html", page)
    assert p.read_text(encoding="utf-8") == page


def test_report_renders_in_headless_chromium(tmp_path):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("Chromium is not installed (Debian package 'chromium')")
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
