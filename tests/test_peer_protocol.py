"""Pool completion: how outside runs are compared with systems that rank the whole pool
(benchmarks/arqmath_judged_pool.py --peers)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from mathir.evaluation.pool_completion import (
    complete_run,
    completed_scores,
    random_floor,
    seed_summary,
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


# --- the size-matched part of the pool (benchmarks/arqmath_judged_pool.size_matched_pool) ---


def _pool_folder(tmp_path, sizes: dict[str, int], qrels: dict[str, str]):
    threads = tmp_path / "thread_html"
    threads.mkdir()
    for name, size in sizes.items():
        (threads / f"{name}.html").write_bytes(b"x" * size)
    files = []
    for name, text in qrels.items():
        files.append(tmp_path / name)
        files[-1].write_text(text)
    return threads, files


def test_size_matched_pool_keeps_answers_up_to_the_largest_never_relevant_one(tmp_path):
    from benchmarks.arqmath_judged_pool import size_matched_pool

    threads, files = _pool_folder(
        tmp_path, {"1_10": 50, "1_11": 80, "2_12": 70, "2_13": 90, "3_14": 60, "3_15": 100},
        # 15 is judged 0 in one year and 2 in another: relevant somewhere, so its 100
        # bytes do not raise the limit; 14 is judged 0 in both files
        {"q2020.tsv": "A.1\t0\t10\t0\nA.1\t0\t11\t2\nA.2\t0\t12\t0\nA.2\t0\t13\t1\n"
                      "A.3\t0\t15\t0\n",
         "q2021.tsv": "A.201\t0\t15\t2\nA.201\t0\t14\t0\n"})
    pool = size_matched_pool(threads, files)
    assert pool["max_bytes"] == 70
    assert pool["docnos"] == {"10", "12", "14"}
    assert (pool["answers"], pool["of"], pool["relevant_beyond"]) == (3, 6, 3)


def test_size_matched_pool_needs_an_answer_judged_zero_everywhere(tmp_path):
    from benchmarks.arqmath_judged_pool import size_matched_pool

    threads, files = _pool_folder(tmp_path, {"1_10": 50}, {"q.tsv": "A.1\t0\t10\t1\n"})
    with pytest.raises(ValueError, match="no size to match"):
        size_matched_pool(threads, files)


@pytest.mark.realdata
def test_the_real_pools_cut_by_size_makes_length_predict_relevance():
    """The reason for the size-matched part: on the whole pool every answer judged 0
    everywhere is at most 11,718 bytes while half the relevant ones are larger."""
    from benchmarks.arqmath_judged_pool import size_matched_pool
    from tests.conftest import real_path

    root = real_path("arqmath")
    pool = size_matched_pool(root / "collection_sample" / "thread_html_arqmath2",
                             sorted(root.rglob("qrel_task1_*.tsv")))
    assert (pool["max_bytes"], pool["answers"], pool["of"]) == (11718, 1116, 1444)
    assert pool["relevant_beyond"] == 1444 - 1116 == 635 - 307
