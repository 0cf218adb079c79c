"""The run explorer of the HTML report: its DOM contract, checked with lxml (fast path)
and in headless Chromium after the page's scripts ran, for a report of every task."""

from __future__ import annotations

import re
import shutil

import lxml.html
import numpy as np
import pytest

from mathir.cli import main
from mathir.experiment import run_experiment, write_experiment_report
from mathir.report.explorer import Explorer
from mathir.report.explorer_views import formula_matcher
from mathir.report.mathml import MathRenderer
from mathir.tasks import get_task
from tests.browser import run_chromium
from tests.conftest import error_lines, memoized_bertscore

# task -> (pipelines, topics with judgments in the sample)
TASKS = {
    "arqmath-task1": (None, 10),
    "arqmath-task2": (None, 10),
    "arqmath-task3": (None, None),
    "worldtree": (["tfidf", "bm25"], None),
    "word-problems": (None, 5),
}
ARQMATH_LABELS = {"0", "1", "2", "3", "unjudged"}


class _Reports(dict):
    """Each task's report, written on first use: a worker of ``pytest -n`` that runs
    only some of this module's tests runs only their experiments."""

    def __init__(self, out):
        super().__init__()
        self.out = out

    def __missing__(self, task):
        pipelines, _ = TASKS[task]
        with memoized_bertscore():  # Task 3's CS: the sample's texts, encoded once
            res = run_experiment(task, out=self.out, quiet=True, pipelines=pipelines)
        self[task] = (write_experiment_report(res), res)
        return self[task]


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """One report per task, written by the experiment (as ``--format html`` writes it)."""
    return _Reports(tmp_path_factory.mktemp("explorer"))


def _doc(path):
    return lxml.html.document_fromstring(path.read_text(encoding="utf-8"))


def _formulas(text: str) -> int:
    return len(re.findall(r"\$\$(.+?)\$\$|\$(.+?)\$", text, re.S))


# --- formulas -------------------------------------------------------------------------------


def test_formulas_matching_the_query_are_marked():
    mark = formula_matcher([r"\ln y=x\ln x"])
    assert mark(r"\ln y = x \ln x")[0] == "exact"
    assert mark(r"\ln y = x \ln x + 1")[0] == "match"
    assert mark(r"y=x-1") is None and formula_matcher([])("x") is None


# --- the DOM contract, read with lxml (no browser) -------------------------------------------


@pytest.mark.parametrize("task", list(TASKS))
def test_report_holds_one_section_per_topic_and_labelled_results(reports, task):
    path, res = reports[task]
    doc = _doc(path)
    sections = doc.xpath("//section[@data-qid]")
    qids = [s.get("data-qid") for s in sections]
    expected = TASKS[task][1] or len(next(iter(res.per_topic.values())))
    assert len(qids) == len(set(qids)) == expected
    assert set(qids) == set(doc.xpath("//table[@class='topics']/tbody/tr/@data-qid"))
    hits = doc.xpath("//li[contains(@class,'hit')]")
    assert hits and all(h.get("data-docno") and h.get("data-rank", "").isdigit()
                        and h.get("data-label") for h in hits)
    runs = list(res.runs)
    for s in sections:  # one column per run, ranks ascending from 1
        cols = s.xpath(".//div[@class='col']")
        assert [c.get("data-run") for c in cols] == runs
        for c in cols:
            ranks = [int(r) for r in c.xpath(".//li[contains(@class,'hit')]/@data-rank")]
            assert ranks == sorted(ranks) and (not ranks or ranks[0] >= 1)
    # every listed snippet is in the topic's document store
    for s in sections:
        store = set(s.xpath(".//div[@class='docs']/div/@data-doc"))
        assert set(s.xpath(".//div[@class='snip']/@data-doc")) <= store
    page = path.read_text(encoding="utf-8")
    assert "http://" not in page and "https://" not in page
    assert not doc.xpath("//script[@src] | //link | //iframe | //img[not(starts-with(@src,'data:'))]")


def test_arqmath_task1_shows_questions_with_rendered_formulas_and_hml_badges(reports):
    path, res = reports["arqmath-task1"]
    doc = _doc(path)
    topics = get_task("arqmath-task1").read_topics(res.data.topics).set_index("qid")
    for s in doc.xpath("//section[@data-qid]"):
        query = s.xpath(".//div[@class='query']")[0]
        t = topics.loc[s.get("data-qid")]
        # each formula of the title and body is rendered (or kept as source)
        assert len(query.xpath(".//math | .//code[contains(@class,'tex')]")) == \
            _formulas(t["title"]) + _formulas(t["question"]) > 0
    hits = doc.xpath("//li[contains(@class,'hit')]")
    assert {h.get("data-label") for h in hits} <= ARQMATH_LABELS
    badges = {h.get("data-label"): h.xpath(".//span[contains(@class,'badge')]")[0].text
              for h in hits}
    assert {badges.get(k) for k in ("3", "2", "1", "0", "unjudged")} - {None} <= \
        {"H", "M", "L", "N", "?"}
    assert badges.get("3") == "H" and badges.get("unjudged") == "?"
    # the labels are the qrels' (the gains nDCG' uses)
    qrels = get_task("arqmath-task1").read_qrels(res.data.qrels)
    judged = {(q, d): str(v) for q, d, v in zip(qrels.qid, qrels.docno, qrels.label, strict=True)}
    for h in hits:
        qid = h.xpath("ancestor::section/@data-qid")[0]
        assert h.get("data-label") == judged.get((qid, h.get("data-docno")), "unjudged")
    # answer snippets render their formulas; a document in both runs is marked "moved"
    assert doc.xpath("//div[@class='docs']//math")
    assert doc.xpath("//li[contains(@class,'hit')]//span[@class='mv']")
    # the bars link to their topics
    bars = doc.xpath("//svg//a/@href")
    assert sorted(bars) == sorted(f"#q-{q}" for q in topics.index)


def test_arqmath_task2_groups_results_by_visual_id(reports):
    from mathir.evaluation.formula_search import visual_id_map

    path, res = reports["arqmath-task2"]
    doc = _doc(path)
    vids = set(visual_id_map(res.data.extras["formula_index"]).values())
    for s in doc.xpath("//section[@data-qid]"):
        assert s.xpath(".//div[@class='qformula']/math")  # the query formula, rendered
        for col in s.xpath(".//div[@class='col']"):
            docnos = col.xpath(".//li[contains(@class,'hit')]/@data-docno")
            assert len(docnos) == len(set(docnos))  # one entry per visual id
            assert set(docnos) <= vids
    assert doc.xpath("//div[@class='docs']//math")


def test_worldtree_shows_question_answer_and_roles(reports):
    path, res = reports["worldtree"]
    doc = _doc(path)
    qrels = get_task("worldtree").read_qrels(res.data.qrels)
    roles = dict(zip(zip(qrels.qid, qrels.docno, strict=True), qrels.role, strict=True))
    for s in doc.xpath("//section[@data-qid]"):
        assert "answer:" in s.xpath(".//div[@class='query']")[0].text_content()
        for h in s.xpath(".//li[contains(@class,'hit')]"):
            badge = h.xpath(".//span[contains(@class,'badge')]")[0]
            role = roles.get((s.get("data-qid"), h.get("data-docno")))
            assert badge.get("title") == (role or "not in the gold explanation")
            assert h.get("data-label") == ("1" if role else "unjudged")


def test_word_problems_judge_each_answer(reports):
    path, res = reports["word-problems"]
    doc = _doc(path)
    hits = doc.xpath("//li[contains(@class,'hit')]")
    assert {h.get("data-label") for h in hits} <= {"correct", "wrong", "unanswered"}
    for s in doc.xpath("//section[@data-qid]"):
        assert s.xpath(".//div[@class='query']//math")  # the gold equations
    # the page's per-problem correctness is the table's mean
    for run in res.runs:
        labels = doc.xpath(f"//div[@class='col'][@data-run='{run}']//li/@data-label")
        assert labels.count("correct") / 5 == pytest.approx(res.table.loc[run, "solution_acc"])


# --- mathir view --------------------------------------------------------------------------


def test_view_writes_the_same_report_for_any_run_files(reports, tmp_path, capsys):
    _, res = reports["arqmath-task1"]
    copies = []
    for name, p in res.runs.items():  # someone else's run files, elsewhere
        copies.append(tmp_path / f"their-{name}.tsv")
        shutil.copy(p, copies[-1])
    out = tmp_path / "view.html"
    assert main(["view", "--task", "arqmath-task1", "--out", str(out), "--baseline",
                 "their-bm25", *map(str, copies)]) == 0
    said = capsys.readouterr()
    assert f"report: {out}" in said.err.splitlines()
    assert said.out.splitlines()[0].split() == ["run", "nDCG'", "MAP'", "P'@10", "bpref"]
    doc = _doc(out)
    assert len(doc.xpath("//section[@data-qid]")) == 10
    assert "their-bm25 (baseline)" in doc.text_content()
    assert main(["view", "--task", "arqmath-task1", "--baseline", "nope", str(copies[0])]) == 2
    assert error_lines(capsys.readouterr().err)[0].startswith("error: baseline 'nope'")
    assert main(["view", "--task", "arqmath-task1", str(tmp_path / "missing.tsv")]) == 2
    assert error_lines(capsys.readouterr().err)[0].startswith("error: ")


# --- in a real browser ----------------------------------------------------------------------


def _non_blank(png) -> bool:
    from PIL import Image

    pixels = np.asarray(Image.open(png).convert("L"))
    return pixels.std() > 10 and (pixels < 128).mean() > 0.005


@pytest.mark.parametrize("task", list(TASKS))
def test_explorer_in_headless_chromium(reports, task, tmp_path):
    path, res = reports[task]
    first = _doc(path).xpath("//table[@class='topics']/tbody/tr/@data-qid")[0]
    shot = tmp_path / "shot.png"
    dom = lxml.html.document_fromstring(
        run_chromium(path.as_uri(), tmp_path / "profile", shot))
    (ex,) = dom.xpath("//div[@id='explorer']")
    assert ex.get("data-ready") == "1"  # the script ran to its end
    sections = dom.xpath("//section[@data-qid]")
    assert len(sections) == len(_doc(path).xpath("//section[@data-qid]"))
    hits = dom.xpath("//li[contains(@class,'hit')]")
    assert hits and all(h.get("data-label") for h in hits)
    # the first topic of the list is open, its snippets filled in, top 10 shown
    (opened,) = dom.xpath("//section[contains(@class,'open')]")
    assert opened.get("data-qid") == first
    if task != "word-problems":
        assert all(len(s) or s.text_content().strip()
                   for s in opened.xpath(".//li[contains(@class,'hit')]//div[@class='snip']"))
    for h in hits:
        assert (h.get("hidden") is not None) == (int(h.get("data-rank")) > 10)
    if task.startswith("arqmath"):
        assert all(s.xpath(".//div[@class='query']//math") for s in sections)
        assert opened.xpath(".//div[@class='snip']//math")
    if task == "word-problems":
        assert all(s.xpath(".//div[@class='query']//math") for s in sections)
    if task == "arqmath-task2":  # after the scripts ran: query formula, visual-id groups
        from mathir.evaluation.formula_search import visual_id_map

        vids = set(visual_id_map(res.data.extras["formula_index"]).values())
        for s in sections:
            assert s.xpath(".//div[@class='qformula']/math")
            for col in s.xpath(".//div[@class='col']"):
                docnos = col.xpath(".//li[contains(@class,'hit')]/@data-docno")
                assert len(docnos) == len(set(docnos)) and set(docnos) <= vids
    assert shot.read_bytes().startswith(b"\x89PNG") and _non_blank(shot)


# --- real data ------------------------------------------------------------------------------


@pytest.mark.realdata
@pytest.mark.slow
def test_real_2022_task1_explorer_renders_every_question_formula(tmp_path):
    """Every topic's title and body formulas are rendered, or (latex2mathml could not
    convert them) shown as their LaTeX source; none is dropped."""
    from mathir.experiment import experiment_explorer
    from tests.conftest import real_path

    root = real_path("arqmath")
    threads = real_path("arqmath", "collection_sample", "threads_all")
    task = get_task("arqmath-task1")
    # one pipeline: the topics' formulas are the property, not the runs' lists
    res = run_experiment(task, task.data(root, "2022", threads), ["bm25"], out=tmp_path,
                         quiet=True)
    ex, renderer = experiment_explorer(res, depth=10)
    assert len(ex.topics) == len(next(iter(res.per_topic.values()))) > 70
    topics = task.read_topics(res.data.topics).set_index("qid")
    stats = renderer.stats["topic"]
    expected = sum(_formulas(topics.loc[t.qid, "title"]) + _formulas(topics.loc[t.qid, "question"])
                   for t in ex.topics)
    assert stats.formulas == expected > 500
    shown = 0
    for t in ex.topics:
        query = lxml.html.fragment_fromstring(f"<div>{t.query_html}</div>")
        sources = [c.text_content() for c in query.xpath(".//code[contains(@class,'tex')]")]
        shown += len(query.xpath(".//math")) + len(sources)
        assert all(s.startswith("$") and s.endswith("$") for s in sources)
    assert shown == expected
    # few fail (measured: 1 of 853, a formula cut in two by a '$' inside its \text{});
    # each is on the page as its source
    assert len(stats.unconverted) <= 0.01 * expected


# --- hostile input: ids, names and formulas from anywhere --------------------------------

RLO = "\u202e"  # RIGHT-TO-LEFT OVERRIDE
HUGE = "x+" * 100_000 + "1"  # a 200 KB formula


def hostile_explorer() -> Explorer:
    """Three runs over topics whose ids hold '%' (and one that reads as another when
    decoded twice), a docno and a run name with a bidi override, and a 200 KB formula
    in a document every topic lists."""
    from mathir.report.explorer import Hit, Judged, TopicView, label_badges

    badge = label_badges({"1": "R"})
    renderer = MathRenderer()
    runs = ["bm25", "tfidf", f"spoof{RLO}gnp.exe"]
    topics = []
    for i, qid in enumerate(["A.1", "A%2E1", "50%", f"Q{RLO}1.A"]):
        t = TopicView(qid, f"topic {i}", f"<div class='body'>query {i}: {renderer.text('$x^2$')}</div>")
        for j, run in enumerate(runs):
            docs = ["BIG", f"D{RLO}2", f"d{i}"] if j != 1 else [f"D{RLO}2", "BIG", f"d{i}"]
            t.hits[run] = [Hit(d, k + 1, 3.0 - k, "1" if d == "BIG" else "unjudged",
                               badge("1" if d == "BIG" else "unjudged"))
                           for k, d in enumerate(docs)]
            t.ranks[run] = {d: k + 1 for k, d in enumerate(docs)}
            t.scores[run] = {"m": j * (4 - i) / 10}  # A.1 gains most: the first listed
        t.judged = [Judged("BIG", "1", badge("1"))]
        t.snippets = {"BIG": renderer.text(f"a long one: ${HUGE}$ and $y$"),
                      f"D{RLO}2": "two", f"d{i}": f"doc {i}"}
        topics.append(t)
    return Explorer(runs, "bm25", "m", ["m"], topics, depth=20)


@pytest.fixture(scope="module")
def hostile_page(tmp_path_factory):
    import pandas as pd

    from mathir.report.explorer import explorer_html
    from mathir.report.report import html_report, write_report

    ex = hostile_explorer()
    table = pd.DataFrame({"m": [0.1, 0.2, 0.3]}, index=ex.runs)
    page = html_report("hostile", table, "bm25", explorer=explorer_html(ex))
    return write_report(tmp_path_factory.mktemp("hostile") / "page.html", page)


def test_topic_ids_are_percent_encoded_in_links(hostile_page):
    doc = _doc(hostile_page)
    links = {a.get("href") for a in doc.xpath("//table[@class='topics']//a")}
    assert {"#q-A.1", "#q-A%252E1", "#q-50%25", "#q-Q%E2%80%AE1.A"} == links
    assert set(doc.xpath("//svg//a/@href")) == links
    js = hostile_page.read_text(encoding="utf-8")
    # the page's script never decodes a fragment without catching a malformed escape
    assert "decodeURIComponent(location" not in js


def test_ids_and_names_are_isolated_from_bidi(hostile_page):
    doc = _doc(hostile_page)
    shown = doc.xpath("//div[@id='explorer']")[0].text_content()
    assert RLO not in shown and "spoof<U+202E>gnp.exe" in shown and "D<U+202E>2" in shown
    # ids in the DOM contract stay as they are
    assert f"D{RLO}2" in doc.xpath("//li[contains(@class,'hit')]/@data-docno")
    assert f"Q{RLO}1.A" in doc.xpath("//section/@data-qid")
    for b in doc.xpath("//li[contains(@class,'hit')]//div[@class='meta']/b"):
        (bdi,) = b.xpath("./bdi")
        assert bdi.get("dir") == "ltr"
    for h in doc.xpath("//div[@class='col']/h3 | //section/h3"):
        assert h.xpath("./bdi[@dir='ltr']"), lxml.html.tostring(h)
    assert all(RLO not in t for t in doc.xpath("//@title | //svg//title/text() | //@aria-label"))


def test_a_huge_formula_keeps_the_page_small(hostile_page):
    size = hostile_page.stat().st_size
    assert size < 60_000, size  # the formula alone is 200 KB, in 4 topics
    doc = _doc(hostile_page)
    big = doc.xpath("//div[@class='docs']/div[@data-doc='BIG']//code")
    assert len(big) == 4 and all("200,001 characters" in c.text_content() for c in big)


@pytest.mark.parametrize(("fragment", "opened"), [
    ("", "A.1"),  # no fragment: the first topic of the list
    ("link", "A%2E1"),  # the page's own link: the id, not A.1 (its id decoded twice)
    ("link", "50%"),
    ("#q-50%", "50%"),  # a malformed escape (typed): left as it is, the script goes on
    ("link", f"Q{RLO}1.A"),
])
def test_hostile_page_in_headless_chromium(hostile_page, tmp_path, fragment, opened):
    """Ids with '%', a bidi override in a docno and a run name, a 200 KB formula, three
    runs: after the page's script ran."""
    if fragment == "link":  # as a click on the topic in the list opens it
        (fragment,) = _doc(hostile_page).xpath(
            f"//table[@class='topics']//tr[@data-qid='{opened}']//a/@href")
    shot = tmp_path / "shot.png"
    dom = lxml.html.document_fromstring(run_chromium(
        hostile_page.as_uri() + fragment, tmp_path / "profile", shot if not fragment else None))
    (ex,) = dom.xpath("//div[@id='explorer']")
    assert ex.get("data-ready") == "1"  # the script ran to its end
    (section,) = dom.xpath("//section[contains(@class,'open')]")
    assert section.get("data-qid") == opened
    assert dom.xpath("//tr[contains(@class,'cur')]/@data-qid") == [opened]
    cols = section.xpath(".//div[@class='col']")
    assert [c.get("data-run") for c in cols] == ["bm25", "tfidf", f"spoof{RLO}gnp.exe"]
    # the snippets were filled in: the huge formula shortened, in each run's list
    big = section.xpath(".//li[contains(@class,'hit')][@data-docno='BIG']//div[@class='snip']//code")
    assert len(big) == 3 and all("200,001 characters" in c.text_content() for c in big)
    assert section.xpath(".//div[@class='snip']//math")  # the small formula beside it
    # the docno and the run name with a bidi override are isolated, the override written out
    for li in section.xpath(f".//li[contains(@class,'hit')][@data-docno='D{RLO}2']"):
        assert li.xpath(".//b/bdi[@dir='ltr']")[0].text_content() == "D<U+202E>2"
    assert cols[2].xpath("./h3/bdi[@dir='ltr']")[0].text_content() == "spoof<U+202E>gnp.exe"
    assert RLO not in ex.text_content()
    if not fragment:
        assert _non_blank(shot)
