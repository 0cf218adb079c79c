"""Task 2 evaluation: visual-id dedup and prime measures, worked out by hand."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from mathir.evaluation.formula_search import (
    deduplicate_visual_ids,
    evaluate_task2,
    visual_id_map,
    visual_id_qrels,
)
from mathir.qrels.trec import read_qrels
from mathir.runs.arqmath_task2 import read_task2_run
from tests.conftest import real_path

pytestmark = pytest.mark.filterwarnings("ignore:.*repeated:UserWarning")

# Formula index: f1, f2 share visual id 701; f3, f8 share 702; f6 has no visual id.
INDEX = """id\tpost_id\tthread_id\ttype\tcomment_id\told_visual_id\tvisual_id\tissue\tformula
1\t10\t10\tquestion\t\t\t701\t\tx^2
2\t11\t10\tanswer\t\t\t701\t\tx^2
3\t12\t12\tanswer\t\t\t702\t\ty=1
4\t13\t12\tanswer\t\t\t703\t\t\\frac{a}{b}
5\t14\t14\tanswer\t\t\t704\t\t\\sqrt{2}
6\t15\t14\tcomment\t\t\t\t\tz
7\t16\t16\tanswer\t\t\t705\t\te^x
8\t17\t16\tanswer\t\t\t702\t\ty = 1
"""
# Top-down: f2 (701), f1 (701 again: dropped), f5 (704, unjudged: dropped), f6 (no visual
# id: dropped), f3 (702, rel 0) and f4 (703, rel 2) tied at 0.5, f8 (702 again: dropped),
# f7 (705, rel 1), and f4 repeated (the first row of a repeated formula is kept).
RUN = """T\t2\t11\t1\t0.9\tr
T\t1\t10\t2\t0.8\tr
T\t5\t14\t3\t0.7\tr
T\t6\t15\t4\t0.6\tr
T\t3\t12\t5\t0.5\tr
T\t4\t13\t6\t0.5\tr
T\t8\t17\t7\t0.4\tr
T\t7\t16\t8\t0.3\tr
T\t4\t13\t9\t0.1\tr
"""
# Topic U is judged but not answered: it scores 0 and counts in the mean.
VISUAL_QRELS = "T 0 701 3\nT 0 702 0\nT 0 703 2\nT 0 705 1\nU 0 702 2\n"
FORMULA_QRELS = "T 0 1 3\nT 0 2 1\nT 0 3 0\nT 0 8 0\nT 0 4 2\nT 0 7 1\nU 0 3 2\n"


@pytest.fixture
def files(tmp_path):
    paths = {}
    for name, text in (("index.tsv", INDEX), ("r.tsv", RUN), ("qv.tsv", VISUAL_QRELS),
                       ("qf.tsv", FORMULA_QRELS)):
        (tmp_path / name).write_text(text)
        paths[name] = tmp_path / name
    return paths


def expected_scores():
    # After dedup and prime: 701 (3), then the 0.5 tie, then 705 (1). trec_eval orders
    # tied scores by doc id descending, so 703 (2) comes before 702 (0).
    dcg = 3 / math.log2(2) + 2 / math.log2(3) + 0 / math.log2(4) + 1 / math.log2(5)
    idcg = 3 / math.log2(2) + 2 / math.log2(3) + 1 / math.log2(4)  # judged: 3, 2, 1, 0
    ndcg_t = dcg / idcg
    ap_t = (1 / 1 + 2 / 2) / 2  # relevant (>= 2): 701 at 1, 703 at 2
    p10_t = 2 / 10
    return {"nDCG'": ndcg_t / 2, "MAP'": ap_t / 2, "P'@10": p10_t / 2}


def test_dedup_keeps_first_instance_and_drops_unjudged(files):
    run = read_task2_run(files["r.tsv"])
    vids = visual_id_map(files["index.tsv"])
    assert "6" not in vids
    q = read_qrels(files["qv.tsv"])
    out = deduplicate_visual_ids(run, vids, q)
    assert out[["docno", "formula_id"]].values.tolist() == [
        ["701", "2"], ["702", "3"], ["703", "4"], ["705", "7"]]


def test_hand_worked_scores_visual_qrels(files):
    run = read_task2_run(files["r.tsv"])
    with pytest.warns(UserWarning, match="1 of 8 retrieved formulas have no visual id"):
        table = evaluate_task2({"r": run}, read_qrels(files["qv.tsv"]), files["index.tsv"])
    for name, value in expected_scores().items():
        assert table.loc["r", name] == pytest.approx(value, abs=1e-9), name


def test_formula_qrels_become_visual_qrels_with_max(files):
    vids = visual_id_map(files["index.tsv"])
    q = visual_id_qrels(read_qrels(files["qf.tsv"]), vids)
    assert sorted(map(tuple, q[["qid", "docno", "label"]].values.tolist())) == sorted(
        [("T", "701", 3), ("T", "702", 0), ("T", "703", 2), ("T", "705", 1), ("U", "702", 2)])
    run = read_task2_run(files["r.tsv"])
    with pytest.warns(UserWarning):
        table = evaluate_task2({"r": run}, read_qrels(files["qf.tsv"]), files["index.tsv"],
                               qrels_key="formula_id")
    for name, value in expected_scores().items():
        assert table.loc["r", name] == pytest.approx(value, abs=1e-9), name


def test_repeated_formula_keeps_first_row(files):
    with pytest.warns(UserWarning, match="document 4 repeats line 6"):
        run = read_task2_run(files["r.tsv"])
    assert run[run.docno == "4"]["score"].tolist() == [0.5]


def test_missing_formula_index_is_an_input_error(files):
    from mathir.errors import InputError
    run = pd.DataFrame({"qid": ["T"], "docno": ["1"], "score": [1.0]})
    with pytest.raises(InputError, match="formula index"):
        evaluate_task2({"r": run}, read_qrels(files["qv.tsv"]))


def test_cli_evaluate_json(files, capsys):
    from mathir.cli import main
    rc = main(["evaluate", "arqmath-task2", "--qrels", str(files["qv.tsv"]), "--formula-index",
               str(files["index.tsv"]), "--format", "json", str(files["r.tsv"])])
    assert rc == 0
    scores = json.loads(capsys.readouterr().out)["r"]
    for name, value in expected_scores().items():
        assert scores[name] == pytest.approx(value, abs=1e-9)


@pytest.mark.realdata
def test_mirmu_task2_run_on_v3_visual_qrels():
    run_path = real_path("arqmath", "runs", "arqmath1", "MIRMU-posthoc-ensemble-all-runs-task2.tsv")
    qrels = read_qrels(real_path("arqmath", "qrels", "task2",
                                 "qrel_task2_2020_visual_id_v3_official.tsv"))
    index = real_path("arqmath", "collection_sample", "derived",
                      "formula_index_from_thread_html.tsv")
    run = read_task2_run(run_path)
    with pytest.warns(UserWarning, match="84426 of 85000"):
        table = evaluate_task2({"mirmu": run}, qrels, index)
    # Only 574 of the run's formulas are in the derived index (3,395 threads), so these
    # are far below the formula-level scores; values pinned from our evaluation.
    assert table.loc["mirmu", "nDCG'"] == pytest.approx(0.1215, abs=5e-5)
    assert table.loc["mirmu", "MAP'"] == pytest.approx(0.0640, abs=5e-5)
    assert table.loc["mirmu", "P'@10"] == pytest.approx(0.1133, abs=5e-5)
    # Parity of the prime machinery with the manifest: formula level, no dedup.
    from mathir.evaluation.prime import evaluate
    formula_qrels = read_qrels(real_path("arqmath", "qrels", "task2",
                                         "qrel_task2_2020_formula_id_official.tsv"))
    flat = evaluate(run, formula_qrels)
    assert flat["nDCG'"] == pytest.approx(0.4927, abs=5e-5)
    assert flat["MAP'"] == pytest.approx(0.2264, abs=5e-5)
    assert flat["P'@10"] == pytest.approx(0.2356, abs=5e-5)


def test_a_run_of_formulas_unknown_to_the_index_scores_zero_with_a_warning(files):
    # Officially, a formula the index does not know cannot be mapped to a visual id, so
    # it cannot be judged: such a run scores 0 (it used to raise KeyError: 'qid').
    run = pd.DataFrame({"qid": ["T", "T"], "docno": ["991", "992"], "score": [2.0, 1.0]})
    with pytest.warns(UserWarning, match="none of its 2 retrieved formulas is in the formula "
                                         "index"):
        table = evaluate_task2({"r": run}, read_qrels(files["qv.tsv"]), files["index.tsv"])
    assert table.loc["r"].tolist() == [0.0, 0.0, 0.0, 0.0]


def test_cli_unknown_formulas_score_zero_not_a_traceback(files, tmp_path, capsys):
    from mathir.cli import main

    run = tmp_path / "unknown.tsv"
    run.write_text("T\t991\t10\t1\t2.0\tr\nT\t992\t10\t2\t1.0\tr\n")
    with pytest.warns(UserWarning, match="cannot be judged"):
        rc = main(["evaluate", "arqmath-task2", "--qrels", str(files["qv.tsv"]),
                   "--formula-index", str(files["index.tsv"]), "--format", "json", str(run)])
    assert rc == 0
    assert json.loads(capsys.readouterr().out)["unknown"] == {
        "nDCG'": 0.0, "MAP'": 0.0, "P'@10": 0.0, "bpref": 0.0}


def test_dedup_of_a_run_with_nothing_judged_keeps_its_columns(files):
    run = pd.DataFrame({"qid": ["T"], "docno": ["5"], "score": [1.0]})  # 704: not judged
    for r in (run, run.iloc[:0]):
        out = deduplicate_visual_ids(r, visual_id_map(files["index.tsv"]),
                                     read_qrels(files["qv.tsv"]))
        assert out.empty and {"qid", "docno", "score", "formula_id"} <= set(out.columns)


def test_formula_id_qrels_read_as_visual_ids_warn(files):
    # Formula-id qrels with the default qrels_key: no retrieved visual id is judged, the
    # run scores 0, and the warning names the likely cause.
    run = read_task2_run(files["r.tsv"])
    with pytest.warns(UserWarning, match="qrels_key='formula_id'"):
        table = evaluate_task2({"r": run}, read_qrels(files["qf.tsv"]), files["index.tsv"])
    assert table.loc["r", "nDCG'"] == 0.0
