"""Pool completion (mathir.evaluation.pool_completion): how outside runs are compared with
systems that rank the whole pool (as benchmarks/arqmath_judged_pool.py --peers does)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from mathir.evaluation.pool_completion import (
    DEFAULT_SEEDS,
    complete_run,
    completed_row,
    completed_scores,
    coverage,
    length_run,
    random_floor,
    seed_row,
    seed_summary,
    thread_file_sizes,
)
from mathir.evaluation.prime import per_query


def _qrels(rows):
    return pd.DataFrame(rows, columns=["qid", "docno", "label"])


def _run(rows):
    return pd.DataFrame(rows, columns=["qid", "docno", "score"])


QRELS = _qrels([("A.1", "a", 3), ("A.1", "b", 1), ("A.1", "c", 0), ("A.1", "d", 2),
                ("A.2", "e", 2), ("A.2", "f", 0)])
POOL = {"a", "b", "c", "d", "e", "f", "g"}  # g: in the pool, judged for no topic


def _ordered(run: pd.DataFrame, qid: str) -> list[str]:
    # trec_eval's order: score descending (no ties among appended rows)
    return run[run["qid"] == qid].sort_values("score", ascending=False)["docno"].tolist()


def test_missing_pool_answers_are_appended_after_the_runs_own_ranking():
    run = _run([("A.1", "b", 9.0), ("A.1", "zz", 8.5), ("A.1", "a", 2.0), ("A.1", "g", 1.0)])
    out = complete_run(run, QRELS, seed=0, collection=POOL)
    order = _ordered(out, "A.1")
    assert order[:3] == ["b", "a", "g"]  # its own ranking first, "zz" (not in the pool) gone
    assert sorted(order[3:]) == ["c", "d"]  # then exactly the judged answers it missed
    assert "zz" not in set(out["docno"])
    # a topic the run lacks gets every judged answer of the pool, nothing else
    assert sorted(_ordered(out, "A.2")) == ["e", "f"]


def test_appended_answers_rank_below_tied_and_negative_scores():
    run = _run([("A.1", "a", -3.0), ("A.1", "b", -3.0)])
    out = complete_run(run, QRELS, seed=1)
    appended = out[out["docno"].isin(["c", "d"])]
    assert (appended["score"] < -3.0).all()
    assert appended["score"].nunique() == 2
    # the run's own rows are untouched, so ties are broken as trec_eval would anyway
    assert out[out["docno"].isin(["a", "b"])]["score"].tolist() == [-3.0, -3.0]


def test_the_appended_order_depends_on_the_seed_only():
    run = _run([("A.1", "a", 1.0)])
    orders = {tuple(_ordered(complete_run(run, QRELS, seed=s), "A.1")) for s in range(20)}
    assert all(o[0] == "a" for o in orders)
    assert len(orders) > 1  # b, c, d come in several orders over 20 seeds
    same = [_ordered(complete_run(run, QRELS, seed=7), "A.1") for _ in range(2)]
    assert same[0] == same[1]


def test_scores_are_the_mean_over_seeds_of_each_completed_run():
    run = _run([("A.1", "c", 5.0)])  # a non-relevant answer first, the rest random
    seeds = list(range(20))
    per_topic, per_seed = completed_scores(run, QRELS, seeds, collection=POOL)
    by_hand = [per_query(complete_run(run, QRELS, s, POOL), QRELS) for s in seeds]
    for m in ("nDCG'", "MAP'", "P'@10", "bpref"):
        assert per_seed[m].tolist() == pytest.approx([t[m].mean() for t in by_hand])
        assert per_topic["qid"].tolist() == ["A.1", "A.2"]
        for i in range(2):
            assert per_topic[m].iloc[i] == pytest.approx(
                sum(t[m].iloc[i] for t in by_hand) / len(seeds))
    assert per_seed["nDCG'"].nunique() > 1  # the seeds differ, so averaging matters
    summary = seed_summary(per_seed)["nDCG'"]
    assert summary["min"] < summary["mean"] < summary["max"] and summary["sd"] > 0


def test_a_run_with_every_judged_answer_has_no_seed_spread():
    run = _run([("A.1", d, s) for d, s in zip("dacb", (4.0, 3.0, 2.0, 1.0), strict=True)]
               + [("A.2", "f", 2.0), ("A.2", "e", 1.0)])
    per_topic, per_seed = completed_scores(run, QRELS, seeds=[0, 1, 2])
    plain = per_query(run, QRELS)
    assert per_topic["nDCG'"].tolist() == pytest.approx(plain["nDCG'"].tolist())
    assert seed_summary(per_seed)["nDCG'"]["sd"] == 0.0


def test_random_floor_on_a_tiny_pool_by_hand():
    # One topic, two judged answers: x (3) and y (0). Random order: x first with
    # probability 1/2 (nDCG' 1, MAP' 1), else y first (nDCG' = (3/log2 3)/3, MAP' 1/2).
    qrels = _qrels([("T", "x", 3), ("T", "y", 0)])
    seeds = list(range(20))
    per_topic, per_seed = random_floor(qrels, seeds)
    x_first = [_ordered(complete_run(_run([]), qrels, s), "T")[0] == "x" for s in seeds]
    k = sum(x_first)
    assert 0 < k < 20
    low = 1 / math.log2(3)
    assert per_seed["nDCG'"].tolist() == pytest.approx([1.0 if f else low for f in x_first])
    assert float(per_topic["nDCG'"].iloc[0]) == pytest.approx((k + (20 - k) * low) / 20)
    assert float(per_topic["MAP'"].iloc[0]) == pytest.approx((k + (20 - k) * 0.5) / 20)
    # with many seeds, the floor is the exact expectation (1 + 1/log2 3) / 2 = 0.8155
    many = random_floor(qrels, range(400))[0]
    assert float(many["nDCG'"].iloc[0]) == pytest.approx((1 + low) / 2, abs=0.03)


def test_random_floor_is_fixed_where_the_order_cannot_matter():
    qrels = _qrels([("T", "x", 3), ("U", "p", 2), ("U", "q", 2)])  # one answer; all equal
    per_topic, _ = random_floor(qrels, seeds=[0, 1, 2])
    assert per_topic["nDCG'"].tolist() == [1.0, 1.0]
    assert per_topic["P'@10"].tolist() == pytest.approx([0.1, 0.2])


# --- the rows no system makes, and what a run covers ---


def test_length_only_ranks_each_topics_judged_answers_by_length():
    lengths = {"a": 40, "b": 10, "c": 30, "d": 20, "e": 5, "f": 5}  # g: in no qrels
    run = length_run(QRELS, {**lengths, "g": 99})
    assert _ordered(run, "A.1") == ["a", "c", "d", "b"]
    assert run[run["qid"] == "A.1"]["score"].max() == 1.0
    assert run[run["qid"] == "A.1"]["score"].min() == 0.0
    assert run[run["qid"] == "A.2"]["score"].tolist() == [1.0, 1.0]  # one length: a tie
    assert "g" not in set(run["docno"])
    # every judged answer is in it, so pool completion appends nothing
    _, per_seed = completed_scores(run, QRELS, seeds=[0, 1, 2], collection=POOL)
    assert per_seed["nDCG'"].nunique() == 1
    # a judged answer of no known length (not in the pool) is left out
    assert "d" not in set(length_run(QRELS, {k: v for k, v in lengths.items() if k != "d"})["docno"])


def test_coverage_counts_a_runs_rows_in_the_pool_and_judged_there():
    run = _run([("A.1", "b", 9.0), ("A.1", "zz", 8.5), ("A.1", "g", 2.0), ("A.2", "e", 1.0)])
    assert coverage(run, QRELS, POOL) == {
        "rows": 4, "topics": 2, "in_pool": 3, "judged_in_pool": 2, "of_pool_judged": 6,
        "share_of_pool_judged": round(2 / 6, 4)}


def test_a_completed_row_is_the_seed_summary_with_coverage():
    run = _run([("A.1", "b", 9.0), ("A.1", "zz", 8.5), ("A.2", "e", 1.0)])
    seeds = [0, 1, 2, 3]
    row, per_topic = completed_row(run, QRELS, POOL, seeds)
    by_hand_topic, per_seed = completed_scores(run, QRELS, seeds, collection=POOL)
    pd.testing.assert_frame_equal(per_topic, by_hand_topic)
    summary = seed_summary(per_seed)
    assert list(row)[:4] == ["nDCG'", "MAP'", "P'@10", "bpref"]
    for m in ("nDCG'", "MAP'", "P'@10", "bpref"):
        assert row[m] == round(summary[m]["mean"], 4)
    assert row["nDCG'_seed_sd"] == round(summary["nDCG'"]["sd"], 4)
    assert row["nDCG'_seed_range"] == [round(summary["nDCG'"]["min"], 4),
                                       round(summary["nDCG'"]["max"], 4)]
    assert row["nDCG'_not_completed"] == round(float(per_query(run, QRELS)["nDCG'"].mean()), 4)
    assert row["coverage"] == coverage(run, QRELS, POOL)
    # a row scored elsewhere (the floor): no mean before completion, no coverage
    floor = seed_row(random_floor(QRELS, seeds)[1])
    assert "nDCG'_not_completed" not in floor and "coverage" not in floor


def test_thread_file_sizes_name_each_answer_by_its_file(tmp_path):
    (tmp_path / "10_20.html").write_text("x" * 7)
    (tmp_path / "10_21.html").write_text("")
    (tmp_path / "notes.txt").write_text("not a thread")
    assert thread_file_sizes(tmp_path) == {"20": 7, "21": 0}


@pytest.mark.realdata
def test_thread_file_size_alone_on_the_uncut_pool():
    """The data MANIFEST's figures for ``threads_all``: ranking each topic's judged
    answers by thread-file size gives nDCG' 0.662 / 0.619 / 0.680 (2020 / 2021 / 2022),
    averaged over the topics with a pool answer judged above 0. mathir averages over every
    qrels topic of the pool (as ARQMath does), where a topic with none scores 0 in every
    row: 0.531 / 0.576 / 0.602, against a random order's 0.532 / 0.514 / 0.603."""
    from mathir.qrels.trec import read_qrels
    from tests.conftest import real_path

    sizes = thread_file_sizes(real_path("arqmath", "collection_sample", "threads_all"))
    assert len(sizes) == 3395
    got = {}
    for year in ("2020", "2021", "2022"):
        qrels = read_qrels(real_path("arqmath", "qrels", "task1",
                                     f"qrel_task1_{year}_official.tsv"))
        qrels = qrels[qrels["docno"].isin(sizes)]
        ndcg = per_query(length_run(qrels, sizes), qrels).set_index("qid")["nDCG'"]
        some = set(qrels.loc[qrels["label"] > 0, "qid"])
        floor = random_floor(qrels, DEFAULT_SEEDS)[1]["nDCG'"].mean()
        got[year] = (round(ndcg[ndcg.index.isin(some)].mean(), 3), round(ndcg.mean(), 3),
                     round(float(floor), 3))
    assert got == {"2020": (0.662, 0.531, 0.532), "2021": (0.619, 0.576, 0.514),
                   "2022": (0.680, 0.602, 0.603)}
