import numpy as np
import pandas as pd
import pytest

from mathir.evaluation.worldtree import evaluate
from mathir.indexing.worldtree import FactIndex
from mathir.pipelines.fusion import LinearFusion
from mathir.pipelines.worldtree import (
    CompleteRanking,
    ExplanationNeighbours,
    ExplanationQuery,
    FactRanker,
    IterativeExpansion,
    LexicalModel,
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


@pytest.mark.parametrize("make", [tfidf, bm25, multihop, fusion])
def test_every_pipeline_ranks_every_fact_once(index, dev, make):
    topics, qrels = dev
    res = make(index)(topics)
    sizes = res.groupby("qid")["docno"].nunique()
    assert (sizes == index.num_docs).all() and len(sizes) == len(topics)
    assert (res.groupby("qid")["rank"].min() == 0).all()
    assert evaluate(res, qrels)["MAP"] > 0.4  # the sample's questions share words with their facts


def test_bm25_matches_a_direct_computation(index):
    model = LexicalModel(index, "bm25", k1=0.9, b=0.4)
    counts = index.counts.toarray()
    n, dl = counts.shape[0], counts.sum(1)
    df = (counts > 0).sum(0)
    q = index.query_counts(["ice cube melting"]).toarray()[0]
    expected = np.zeros(n)
    for t in np.flatnonzero(q):
        idf = np.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
        tf = counts[:, t]
        expected += q[t] * idf * tf * 1.9 / (tf + 0.9 * (1 - 0.4 + 0.4 * dl / dl.mean()))
    assert np.allclose(model.score(index.query_counts(["ice cube melting"]))[0], expected)


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
