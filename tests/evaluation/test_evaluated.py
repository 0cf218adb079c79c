"""The evaluated run: one order, one judged set, one mean behind every view."""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import pandas as pd
import pytest

from mathir import arqmath_sample
from mathir.cli import main
from mathir.errors import InputError
from mathir.evaluation.evaluated import evaluate, trec_mean, trec_order
from mathir.experiment import evaluate_runs, run_experiment, view_runs
from mathir.experiment.reports import explorer_lookups
from mathir.qrels.trec import read_qrels
from mathir.report.explorer_views import build_explorer
from mathir.tasks import TaskData, get_task
from tests.conftest import error_lines, memoized_bertscore

TASK1 = get_task("arqmath-task1")


def _write_run(path: Path, rows: list[tuple]) -> Path:
    """ARQMath-format lines ``topic post_id rank score run``."""
    path.write_text("".join(f"{q}\t{d}\t{r}\t{s}\tmine\n" for q, d, r, s in rows))
    return path


def test_trec_order_is_score_then_docno_descending_whatever_the_rank_column():
    run = pd.DataFrame({"qid": ["A.1"] * 4 + ["A.2"], "docno": ["1", "3", "2", "9", "5"],
                        "rank": [1, 2, 3, 4, 1], "score": [1.0, 5.0, 5.0, 0.5, 2.0]})
    out = trec_order(run)
    assert out[["qid", "docno", "rank"]].values.tolist() == [
        ["A.1", "3", 1], ["A.1", "2", 2], ["A.1", "1", 3], ["A.1", "9", 4], ["A.2", "5", 1]]


def test_the_explorer_lists_a_run_in_the_order_it_was_scored(tmp_path):
    """A run whose rank column is reversed: the same nDCG' (trec_eval ignores ranks) and the
    same page (before: the explorer sorted by the rank column and showed it reversed; tied
    scores were shown in file order, not docno descending)."""
    s = arqmath_sample()
    topics = TASK1.read_topics(s.task1_topics)
    qrels = read_qrels(s.task1_qrels)
    qid = "A.1"
    judged = qrels[qrels.qid == qid].docno.tolist()[:4]
    scores = [4.0, 3.0, 3.0, 1.0]
    forward = _write_run(tmp_path / "forward.tsv",
                         [(qid, d, i + 1, sc) for i, (d, sc) in enumerate(zip(judged, scores, strict=False))])
    backward = _write_run(tmp_path / "backward.tsv",
                          [(qid, d, 4 - i, sc) for i, (d, sc) in enumerate(zip(judged, scores, strict=False))])
    runs = {p.stem: TASK1.read_run(p) for p in (forward, backward)}
    ev = evaluate(TASK1, runs, qrels)
    assert ev.table.loc["forward"].tolist() == ev.table.loc["backward"].tolist()
    ex, _ = build_explorer(ev, topics, TaskData("sample", s.posts, s.task1_topics, s.task1_qrels),
                           all_topics=True)
    view = next(t for t in ex.topics if t.qid == qid)
    expected = [judged[0], *sorted(judged[1:3], reverse=True), judged[3]]
    for name in ("forward", "backward"):
        assert [h.docno for h in view.hits[name]] == expected
        assert [h.rank for h in view.hits[name]] == [1, 2, 3, 4]


def _cut_collection(tmp_path: Path, drop: set[str]) -> Path:
    """The sample's Posts file without the answers ``drop`` (one row per line)."""
    src = arqmath_sample().posts.read_text(encoding="utf-8").splitlines(keepends=True)
    kept = [line for line in src if not any(f'Id="{d}"' in line.split("PostTypeId")[0]
                                           for d in drop)]
    assert len(kept) == len(src) - len(drop)
    out = tmp_path / "cut" / "Posts.V1.3.xml"
    out.parent.mkdir()
    out.write_text("".join(kept), encoding="utf-8")
    return out


@pytest.fixture(scope="module")
def cut(tmp_path_factory):
    """An experiment on a collection that lacks two judged relevant answers of A.1."""
    tmp = tmp_path_factory.mktemp("cut")
    s = arqmath_sample()
    qrels = read_qrels(s.task1_qrels)
    gone = qrels[(qrels.qid == "A.1") & (qrels.label >= 2)].docno.tolist()[:2]
    posts = _cut_collection(tmp, set(gone))
    data = TaskData("sample", posts, s.task1_topics, s.task1_qrels)
    res = run_experiment(TASK1, data, ["bm25"], out=tmp / "runs", quiet=True,
                         index_dir=tmp / "index")
    # a run that ranks the missing answers first: the score treats them as unjudged
    run = _write_run(tmp / "missing.tsv", [("A.1", gone[0], 1, 9.0), ("A.1", gone[1], 2, 8.0)])
    return {"data": data, "res": res, "gone": gone, "run": run, "tmp": tmp}


def test_view_never_badges_a_judgment_the_score_did_not_use(cut):
    """A judged answer that is not in the collection is shown as such ("(H)", grey), not
    with a badge that implies it counted (before: H, H beside an nDCG' of 0)."""
    path = view_runs(TASK1, [cut["run"]], cut["data"], out=cut["tmp"] / "v.html")
    page = path.read_text(encoding="utf-8")
    res_ev = evaluate(TASK1, {"missing": TASK1.read_run(cut["run"])},
                      read_qrels(cut["data"].qrels), docnos=TASK1.index(
                          cut["data"], cut["tmp"] / "index").docnos())
    assert res_ev.per_topic["missing"].set_index("qid").loc["A.1", "nDCG'"] == 0.0
    ex, _ = build_explorer(res_ev, TASK1.read_topics(cut["data"].topics), cut["data"])
    hits = next(t for t in ex.topics if t.qid == "A.1").hits["missing"]
    assert [h.label for h in hits] == ["unjudged", "unjudged"]
    assert all(h.badge.css == "gu" and h.badge.text.startswith("(") for h in hits)
    assert "not in the collection" in hits[0].badge.title
    assert "Judged set: judged on the" in page


def test_evaluate_of_an_experiments_run_gives_its_table(cut, capsys):
    """``mathir evaluate`` of a run with its manifest scores it as its experiment did, and
    says so; ``--judged file`` scores it on the whole qrels file (before: always the whole
    file, another number with no warning)."""
    res = cut["res"]
    run = res.runs["bm25"]
    qrels = cut["data"].qrels
    manifest = json.loads(run.with_name("bm25.manifest.json").read_text())
    assert manifest["evaluation"]["judged"] == "collection"
    table = evaluate_runs(TASK1, qrels, [run])
    assert table.loc["bm25"].tolist() == res.table.loc["bm25"].tolist()
    whole = evaluate_runs(TASK1, qrels, [run], judged="file")
    assert whole.loc["bm25", "nDCG'"] != res.table.loc["bm25", "nDCG'"]
    assert main(["evaluate", "arqmath-task1", "--qrels", str(qrels), str(run),
                 "--format", "json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["bm25"]["nDCG'"] == pytest.approx(res.table.loc["bm25", "nDCG'"])
    assert "judged set: judged on the" in err and "as their experiment scored them" in err
    assert main(["evaluate", "arqmath-task1", "--qrels", str(qrels), str(run),
                 "--judged", "file", "--format", "json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["bm25"]["nDCG'"] == pytest.approx(whole.loc["bm25", "nDCG'"])
    assert "whole qrels file" in err


def test_experiment_says_its_judged_set_with_the_table(cut, capsys):
    assert "of" in cut["res"].judged_note and cut["res"].evaluation.judged == "collection"
    assert main(["experiment", "arqmath-task1", "--pipelines", "bm25", "--quiet",
                 "--out", str(cut["tmp"] / "cli"), "--index", str(cut["tmp"] / "index")]) == 0
    assert "judged set: judged on all" in capsys.readouterr().err


@pytest.mark.parametrize("case", ["other-year", "task2-as-task1", "task1-vs-task2-qrels"])
def test_a_run_sharing_no_topic_with_the_qrels_is_one_error_line(tmp_path, capsys, case):
    """Before: 0.0000 everywhere, exit 0, no warning."""
    s = arqmath_sample()
    if case == "other-year":
        run = _write_run(tmp_path / "r.tsv", [("A.301", "1002", 1, 1.0)])
        args = ["arqmath-task1", "--qrels", str(s.task1_qrels)]
    elif case == "task2-as-task1":
        run = tmp_path / "r.tsv"
        run.write_text("B.1\t20011\t1\t1.0\tmine\n")
        args = ["arqmath-task1", "--qrels", str(s.task1_qrels)]
    else:
        run = _write_run(tmp_path / "r.tsv", [("A.1", "1002", 1, 1.0)])
        args = ["arqmath-task1", "--qrels", str(s.task2_qrels_visual_id)]
    assert main(["evaluate", *args, str(run)]) == 2
    err = error_lines(capsys.readouterr().err)
    assert len(err) == 1 and err[0].startswith("error: run 'r' shares no topic with the qrels")


def test_a_run_of_mostly_unjudged_topics_warns(tmp_path):
    s = arqmath_sample()
    run = _write_run(tmp_path / "r.tsv", [("A.1", "1002", 1, 1.0), ("A.301", "1", 1, 1.0),
                                         ("A.302", "1", 1, 1.0)])
    with pytest.warns(UserWarning, match=r"only 1 of its 3 topics are judged"):
        evaluate_runs(TASK1, s.task1_qrels, [run])


def test_every_task_refuses_a_run_sharing_no_topic():
    """Word problems, WorldTree and Task 3 too (each through the one evaluation)."""
    for name in ("worldtree", "word-problems"):
        task = get_task(name)
        data = task.data()
        qrels = task.read_qrels(data.qrels)
        run = pd.DataFrame({"qid": ["nope"], "docno": ["x"], "rank": [1], "score": [1.0]})
        with pytest.raises(InputError, match="shares no topic"):
            evaluate(task, {"r": run}, qrels, **data.extras)


def test_means_are_summed_as_trec_eval_sums_them():
    """MAP' of 16 topics whose APs sum to a tie at the fourth decimal: trec_eval adds the
    per-topic values in topic order and prints 0.4438; a pairwise mean gives 0.44375 and
    prints 0.4437 (before)."""
    aps = [1.0, 0.5, 0.5, 0.2, 1 / 3, 0.0, 0.2, 1.0, 0.25, 0.5, 0.25, 0.5, 1.0, 1 / 3, 1 / 3, 0.2]
    run, qrels = [], []
    for i, ap in enumerate(aps):
        qid = f"T{i + 1:02d}"
        depth = 0 if ap == 0 else round(1 / ap)  # the relevant answer at rank 1/AP
        qrels.append((qid, "rel", 2))
        for r in range(1, max(depth, 2) + 1):
            doc = "rel" if r == depth else f"n{r}"
            if doc != "rel":
                qrels.append((qid, doc, 0))
            run.append((qid, doc, 100.0 - r))
    run_df = pd.DataFrame(run, columns=["qid", "docno", "score"])
    qrels_df = pd.DataFrame(qrels, columns=["qid", "docno", "label"])
    ev = evaluate(TASK1, {"r": run_df}, qrels_df)
    assert ev.per_topic["r"]["MAP'"].round(12).tolist() == [round(a, 12) for a in aps]
    total = 0.0
    for a in ev.per_topic["r"]["MAP'"]:
        total += a
    assert ev.table.loc["r", "MAP'"] == total / 16 == trec_mean(aps)
    assert f"{ev.table.loc['r', 'MAP' + chr(39)]:.4f}" == "0.4438"
    assert f"{pd.Series(aps).mean():.4f}" == "0.4437"  # the pairwise mean it replaces


def test_the_task2_explorer_counts_the_instance_the_evaluation_counted():
    """Visual ids listed as trec_eval ranks them, each with the instance the evaluation
    kept (the first by score, then rank), whatever the rank column says; the other
    instances of a visual id are listed with it, not counted again."""
    task = get_task("arqmath-task2")
    data = task.data()
    from mathir.readers.formula_tsv import iter_formula_index

    by_vid: dict = {}
    for rec in iter_formula_index(data.extras["formula_index"]):
        by_vid.setdefault(rec.visual_id, []).append(rec)
    vid, recs = next((v, r) for v, r in by_vid.items() if v and len(r) >= 2)
    other = next(rs[0] for v, rs in by_vid.items() if v and v != vid)
    topics = task.read_topics(data.topics).head(1)
    qid = topics.qid[0]
    # rank column reversed against the scores: the scores decide
    run = pd.DataFrame({"qid": [qid] * 3, "rank": [3, 2, 1], "score": [3.0, 2.0, 1.0],
                        "docno": [recs[1].formula_id, other.formula_id, recs[0].formula_id]})
    ev = evaluate(task, {"r": run}, task.read_qrels(data.qrels), **data.extras)
    ex, _ = build_explorer(ev, topics, data, all_topics=True,
                           lookups=explorer_lookups(task, data))
    hits = ex.topics[0].hits["r"]
    assert [(h.docno, h.rank) for h in hits] == [(vid, 1), (other.visual_id, 2)]
    assert hits[0].about.startswith(f'formula <bdi dir="ltr">{recs[1].formula_id}</bdi>')
    assert (f'same visual id, not counted again: <bdi dir="ltr">{recs[0].formula_id}</bdi> '
            "(score 1)") in hits[0].about


def test_task3_report_and_explorer_on_the_sample(tmp_path):
    """``mathir experiment arqmath-task3 --format html`` (before: KeyError 'docno').

    One pipeline: the report's Task 3 path is the same for any number of them, and each
    costs its answers' BERTScore (CS) encoding (tests/tasks/test_arqmath_task3.py scores
    both of the sample's)."""
    with memoized_bertscore():  # the sample's CS, encoded once per test process
        assert main(["experiment", "arqmath-task3", "--quiet", "--format", "html",
                     "--pipelines", "bm25", "--out", str(tmp_path)]) == 0
    page = next(tmp_path.rglob("report.html")).read_text(encoding="utf-8")
    assert 'data-qid="A.1"' in page and "one answer per topic" in page


def test_view_shows_each_reader_warning_once(tmp_path):
    """Each run file is read once (before: again for the explorer, each warning twice)."""
    import subprocess
    import sys

    run = _write_run(tmp_path / "r.tsv", [("A.1", "1002", 1, "1_0")])
    done = subprocess.run([sys.executable, "-m", "mathir", "view", "--task", "arqmath-task1",
                           str(run), "--out", str(tmp_path / "v.html")],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert len(re.findall(r"score '1_0' is not a number", done.stderr)) == 1, done.stderr


def test_view_and_experiment_agree_with_the_evaluation(cut):
    """The explorer of an experiment reads its evaluation: no run file is read again."""
    res = cut["res"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        from mathir.experiment import experiment_explorer

        ex, _ = experiment_explorer(res)
    ranked = res.evaluation.runs["bm25"]
    for view in ex.topics:
        listed = [(h.docno, h.rank) for h in view.hits["bm25"]]
        top = ranked[ranked.qid == view.qid].head(ex.depth)
        assert listed == list(zip(top.docno, top["rank"], strict=False))


@pytest.mark.realdata
@pytest.mark.slow
def test_view_of_arqmath1_runs_badges_only_what_the_score_used(tmp_path):
    """The 2020 view of the issue: before, 1,874 of 2,056 listed hits carried an H/M/L/N
    badge of an answer the collection does not hold, and 76 topic columns scored 0.0000
    beside answers badged relevant (A.33: Linked MSE's top three H, H, H)."""
    import lxml.html

    from tests.conftest import real_path

    data_dir = real_path("arqmath")
    threads = real_path("arqmath", "collection_sample", "threads_all")
    runs = [real_path("arqmath", "runs", "arqmath1", f"{n}.tsv")
            for n in ("Linked_MSE_baseline", "prim_Approach0")]
    data = TASK1.data(data_dir, "2020", threads)
    page = view_runs(TASK1, runs, data, out=tmp_path / "v.html")
    doc = lxml.html.parse(str(page)).getroot()
    ev = evaluate(TASK1, {p.stem: TASK1.read_run(p) for p in runs}, read_qrels(data.qrels),
                  docnos=TASK1.index(data, quiet=True).docnos(), where=threads.name)
    # (not "//section[@data-qid]//div...": libxml2 merges each section's descendant set
    # into the last, 15 s of CPU on this 2 MB page, for the same columns in the same order)
    columns = doc.xpath("//div[@class='col'][@data-run][ancestor::section[@data-qid]]")
    assert len(columns) == 2 * 76
    zero = 0
    for col in columns:
        qid = col.xpath("ancestor::section[@data-qid]")[0].get("data-qid")
        score = float(re.search(r"nDCG' ([0-9.]+)", col.text_content()).group(1))
        labels = []
        for hit in col.xpath(".//li[contains(@class,'hit')]"):
            found = ev.judgment(qid, hit.get("data-docno"))
            used = found is not None and found[1]
            badge = hit.xpath(".//span[contains(@class,'badge')]")[0]
            assert (hit.get("data-label") != "unjudged") == used
            assert badge.get("class").split()[-1] == "gu" or used
            if used:
                labels.append(int(found[0]))
        if score == 0:
            zero += 1
            assert not any(lab > 0 for lab in labels), (qid, col.get("data-run"))
    assert zero > 0
    a33 = doc.xpath("//section[@data-qid='A.33']//div[@data-run='Linked_MSE_baseline']"
                    "//span[contains(@class,'badge')]")
    assert [b.text_content() for b in a33[:3]] == ["(H)", "(H)", "(H)"]
