import pandas as pd
import pytest

from mathir.evaluation.prime import ARQMATH_MEASURES, compare, evaluate, per_query
from mathir.qrels.trec import read_qrels
from mathir.report.tables import format_table
from mathir.runs.trec import read_run
from tests.conftest import real_path

QRELS = pd.DataFrame({"qid": ["A.1", "A.1", "A.1", "A.2", "A.3"],
                      "docno": ["a", "b", "c", "x", "y"], "label": [3, 1, 0, 2, 5]})


def test_unjudged_documents_are_removed_before_scoring():
    with_unjudged = pd.DataFrame({"qid": ["A.1"] * 4, "docno": ["u1", "u2", "a", "b"],
                                  "score": [4.0, 3.0, 2.0, 1.0]})
    judged = with_unjudged[with_unjudged.docno.isin(["a", "b"])]
    assert evaluate(with_unjudged, QRELS) == evaluate(judged, QRELS)


def test_topics_missing_from_run_score_zero_and_codes_5_6_are_unjudged():
    run = pd.DataFrame({"qid": ["A.1", "A.1", "A.3"], "docno": ["a", "b", "y"], "score": [2.0, 1.0, 1.0]})
    table = per_query(run, QRELS)
    assert table.qid.tolist() == ["A.1", "A.2"]  # A.3 has only a code-5 judgment
    assert table["nDCG'"].tolist() == [1.0, 0.0]
    assert evaluate(run, QRELS)["nDCG'"] == 0.5


def test_binarisation_at_relevance_two():
    run = pd.DataFrame({"qid": ["A.1", "A.1"], "docno": ["b", "a"], "score": [2.0, 1.0]})
    r = evaluate(run, QRELS[QRELS.qid == "A.1"])
    assert r["MAP'"] == 0.5  # only "a" (3) is relevant at H+M; "b" (1) is not
    assert r["P'@10"] == 0.1


def test_compare_and_formats():
    run = pd.DataFrame({"qid": ["A.1"], "docno": ["a"], "score": [1.0]})
    t = compare({"one": run, "two": run.assign(docno="b")}, QRELS)
    assert list(t.index) == ["one", "two"] and list(t.columns) == list(ARQMATH_MEASURES)
    assert "\\textbf{0.5000}" in format_table(t, "latex")
    assert format_table(t, "json").startswith("{")
    assert "one" in format_table(t, "table")


@pytest.mark.realdata
@pytest.mark.parametrize("run,expected", [
    # Published (MIR-MU ARQMath-eval README): nDCG' 0.238; MAP'/P'@10 as recomputed with trec_eval.
    ("prim_MIRMU-task1-Ensemble-auto-both-A.tsv", {"nDCG'": 0.238, "MAP'": 0.064, "P'@10": 0.139}),
    # Published nDCG' 0.345 (Novotny et al. 2020).
    ("prim_MathDowsers-task1-alpha05noReRank-auto-both-A.tsv", {"nDCG'": 0.345, "MAP'": 0.139, "P'@10": 0.162}),
    # ARQMath-3 overview Table 3, "Linked MSE posts" on ARQMath-1: 0.279 / 0.194 / 0.384. The run
    # answers 71 of 77 topics, so it reproduces only when averaging over all qrels topics.
    ("Linked_MSE_baseline.tsv", {"nDCG'": 0.279, "MAP'": 0.194}),
])
def test_parity_with_published_arqmath1_scores(run, expected):
    qrels = read_qrels(real_path("arqmath", "qrels", "task1", "qrel_task1_2020_official.tsv"))
    scores = evaluate(read_run(real_path("arqmath", "runs", "arqmath1", run)), qrels)
    for name, value in expected.items():
        assert round(scores[name], 3) == value, name


@pytest.mark.realdata
def test_linked_mse_p10_differs_from_published_by_tie_order():
    # Published P'@10 is 0.384; this run file gives 0.3857. Its scores tie heavily, and
    # trec_eval's tie order (by docno) on the organisers' file is not recoverable here.
    qrels = read_qrels(real_path("arqmath", "qrels", "task1", "qrel_task1_2020_official.tsv"))
    scores = evaluate(read_run(real_path("arqmath", "runs", "arqmath1", "Linked_MSE_baseline.tsv")), qrels)
    assert scores["P'@10"] == pytest.approx(0.3857, abs=5e-5)  # published 0.384 (see above)


def test_qrels_that_judge_nothing_are_an_error_not_nan():
    from mathir.errors import InputError

    run = pd.DataFrame({"qid": ["A.3"], "docno": ["y"], "score": [1.0]})
    with pytest.raises(InputError, match="judge no document"):
        evaluate(run, QRELS[QRELS.qid == "A.3"])  # only a code 5: nothing judged


def test_an_empty_run_frame_scores_zero():
    for run in (pd.DataFrame(), pd.DataFrame(columns=["qid", "docno", "score"])):
        assert evaluate(run, QRELS) == dict.fromkeys(ARQMATH_MEASURES, 0.0)


def test_ir_measures_scores_only_the_answered_topics_whatever_the_qrels_size(monkeypatch):
    """A qrels file of 10^6 topics and a run of a few: ir_measures sees the run's topics
    (before: every qrels topic, a default tuple per topic and measure, then a dict filled
    per topic: 9 min 47 s and 2.6 GB); the others score 0 from one array."""
    import ir_measures

    import mathir.evaluation.prime as prime

    n = 5000
    qrels = pd.DataFrame({"qid": [f"T{i}" for i in range(n)], "docno": ["d"] * n,
                          "label": [2] * n})
    run = pd.DataFrame({"qid": ["T7", "T42"], "docno": ["d", "e"], "score": [1.0, 1.0]})
    seen = []
    original = ir_measures.iter_calc

    def iter_calc(measures, q, r):
        seen.append(len(q) if isinstance(q, dict) else q["query_id"].nunique())
        return original(measures, q, r)

    monkeypatch.setattr(prime.ir_measures, "iter_calc", iter_calc)
    table = per_query(run, qrels)
    # one call per trec_eval setting (nDCG'; MAP' and P'@10 at rel 2; bpref), each seeing
    # only the run's two topics
    assert seen == [2, 2, 2]
    assert len(table) == n and table.set_index("qid").loc["T7", "nDCG'"] == 1.0
    assert table["nDCG'"].sum() == 1.0 and table.attrs["aggregation"]["MAP'"] == "mean"
