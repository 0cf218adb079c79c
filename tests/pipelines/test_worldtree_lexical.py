import math

import numpy as np
import pandas as pd
import pytest

from mathir.evaluation.explanation_scorer import evaluate
from mathir.indexing.fact_index import FactIndex
from mathir.pipelines.fusion import LinearFusion
from mathir.pipelines.worldtree_lexical import (
    CompleteRanking,
    ExplanationNeighbours,
    ExplanationQuery,
    FactRanker,
    IterativeExpansion,
    bm25,
    fusion,
    multihop,
    neighbours,
    tfidf,
)
from mathir.qrels.worldtree import qrels_from_topics, read_qrels
from mathir.samples import worldtree_sample
from mathir.topics.worldtree import read_questions


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    return FactIndex.build(worldtree_sample().tables, tmp_path_factory.mktemp("wt") / "facts")


@pytest.fixture(scope="module")
def dev():
    s = worldtree_sample()
    return read_questions(s.questions("Dev"), explained_only=True), read_qrels(s.questions("Dev"))


# MAP on the sample's Dev questions (they share words with their facts); deterministic.
@pytest.mark.parametrize(("make", "expected"), [(tfidf, 0.6915), (bm25, 0.6454),
                                                (multihop, 0.7228), (fusion, 0.6889)])
def test_every_pipeline_ranks_every_fact_once(index, dev, make, expected):
    topics, qrels = dev
    res = make(index)(topics)
    sizes = res.groupby("qid")["docno"].nunique()
    assert (sizes == index.num_docs).all() and len(sizes) == len(topics)
    assert (res.groupby("qid")["rank"].min() == 0).all()
    assert evaluate(res, qrels)["MAP"] == pytest.approx(expected, abs=1e-4)


@pytest.fixture(scope="module")
def three_facts(tmp_path_factory):
    """f1 "ice melts", f2 "ice ice cube", f3 "sun heat": N = 3, df(ice) = 2, df(cube) = 1,
    lengths 2, 3, 2 (avgdl 7/3)."""
    d = tmp_path_factory.mktemp("three")
    (d / "T.tsv").write_text("FACT\t[SKIP] UID\nice melts\tf1\nice ice cube\tf2\nsun heat\tf3\n")
    return FactIndex.build(d, d / "facts")


def test_bm25_scores_match_a_hand_computation(three_facts):
    # PISA's BM25 (k1 0.9, b 0.4), query terms weighted by their count, not by idf:
    # score = sum over query terms of idf * tf (k1 + 1) / (tf + k1 (1 - b + b dl / avgdl)),
    # idf = ln(1 + (N - df + 0.5) / (df + 0.5)).
    idf_ice, idf_cube = math.log(1 + 1.5 / 2.5), math.log(1 + 2.5 / 1.5)
    norm2, norm3 = 0.9 * (0.6 + 0.4 * 2 / (7 / 3)), 0.9 * (0.6 + 0.4 * 3 / (7 / 3))
    f1 = idf_ice * 1 * 1.9 / (1 + norm2)
    f2 = idf_ice * 2 * 1.9 / (2 + norm3) + idf_cube * 1 * 1.9 / (1 + norm3)
    assert (f1, f2) == pytest.approx((0.483079, 1.525230), abs=1e-6)
    res = FactRanker(three_facts, "bm25", k1=0.9, b=0.4).search("ice cube")
    assert res["docno"].tolist() == ["f2", "f1", "f3"]
    assert res["score"].tolist() == pytest.approx([f2, f1, 0.0], abs=1e-9)


def test_tfidf_scores_are_cosines_of_smooth_idf_vectors(three_facts):
    # scikit-learn's smooth idf ln((1 + N) / (1 + df)) + 1, both sides l2-normalised.
    ice, rare = math.log(4 / 3) + 1, math.log(4 / 2) + 1  # rare: df 1 (melt, cube)
    query = np.array([ice, rare]) / math.hypot(ice, rare)   # (ice, cube)
    f1 = query[0] * ice / math.hypot(ice, rare)             # f1: (ice, melt)
    f2 = query @ np.array([2 * ice, rare]) / math.hypot(2 * ice, rare)
    assert (f1, f2) == pytest.approx((0.366447, 0.943086), abs=1e-6)
    res = FactRanker(three_facts, "tfidf").search("ice cube")
    assert res["docno"].tolist() == ["f2", "f1", "f3"]
    assert res["score"].tolist() == pytest.approx([f2, f1, 0.0], abs=1e-9)


def test_query_fields_are_configurable(index, dev):
    topics, _ = dev
    q = ExplanationQuery(("choices",))(topics)
    assert q["query"][0] == topics["choices"][0]
    with pytest.raises(Exception, match="unknown query fields"):
        ExplanationQuery(("nope",))(topics)


def test_iterative_expansion_puts_picked_facts_first(index):
    exp = IterativeExpansion(index, "tfidf", hops=3, weight=0.5)
    plain = FactRanker(index, "tfidf")
    a = exp.search("an ice cube melts in the sun")
    b = plain.search("an ice cube melts in the sun")
    assert a.docno[0] == b.docno[0]  # hop 0 is the plain best fact
    assert a["score"].is_monotonic_decreasing and len(a) == index.num_docs
    assert set(a.docno) == set(b.docno)


def test_complete_ranking_after_a_cut_fusion(index, dev):
    topics, _ = dev
    cut = LinearFusion([FactRanker(index, "bm25", num_results=3), FactRanker(index, "tfidf", num_results=3)],
                       num_results=None)
    partial = cut(topics)
    assert partial.groupby("qid").size().max() <= 6
    full = CompleteRanking(index)(partial)
    assert (full.groupby("qid")["docno"].nunique() == index.num_docs).all()
    first = full[full["rank"] < 1].set_index("qid")["docno"]
    assert first.to_dict() == partial[partial["rank"] == 0].set_index("qid")["docno"].to_dict()


def test_neighbours_use_training_gold_but_never_a_questions_own(index):
    s = worldtree_sample()
    train = read_questions(s.questions("Train"), explained_only=True)
    gold = qrels_from_topics(train)
    stage = ExplanationNeighbours(index, train, gold, k=5, weight=100.0, prior=0.0)
    # On a training question itself, its own gold must not be pushed up: leave-one-out.
    q = train.iloc[[4]]  # the rabbit question: its gold facts are used by no other question
    own = set(gold[gold.qid == q.qid.iloc[0]].docno)
    first = FactRanker(index, "tfidf")(q)
    boosted = stage(first)
    unseen = first.assign(qid="new-question")
    boosted_new = stage(unseen)
    top_new = set(boosted_new.docno[: len(own)])
    assert own <= top_new  # a new question with the same text gets the neighbours' facts
    assert boosted[boosted.docno.isin(own)]["score"].max() < 2.0  # own gold: no knn boost
    pipe = neighbours(index)
    assert "ExplanationNeighbours" in repr(pipe)


def test_empty_topics(index):
    empty = pd.DataFrame({"qid": pd.Series([], dtype=str), "query": pd.Series([], dtype=str)})
    assert FactRanker(index).transform(empty).empty
    assert IterativeExpansion(index).transform(empty).empty
