"""PyTerrier's parameter contract: set_parameter (pt.GridScan) changes what a transformer does.

Each test changes a parameter of a built (and already used) transformer and compares
its output with a transformer built with that value from the start.
"""

from __future__ import annotations

import pandas as pd
import pyterrier as pt
import pytest

from mathir.evaluation.prime import ARQMATH_MEASURES
from mathir.pipelines.lexical import MathWordsQuery, PisaBM25
from mathir.qrels.trec import read_qrels
from mathir.topics.arqmath import read_task1_topics, read_task2_topics

GRID = {"k1": [0.5, 2.0], "b": [0.3, 0.75]}


def _ranking(res: pd.DataFrame) -> list[tuple]:
    return list(zip(res["qid"], res["docno"], res["score"].round(5), strict=True))


@pytest.fixture(scope="module")
def task1(sample):
    return read_task1_topics(sample.task1_topics), read_qrels(sample.task1_qrels)


def test_gridscan_over_pisa_bm25_scores_each_setting(sample_index, task1):
    topics, qrels = task1
    bm25 = PisaBM25(sample_index)
    pipe = MathWordsQuery() >> bm25
    pipe(topics)  # built once before the scan, as a reused pipeline is
    measures = list(ARQMATH_MEASURES.values())
    grid = pt.GridScan(pipe, {bm25: GRID}, topics, qrels, measures)
    names = [str(m) for m in measures]
    assert grid[str(ARQMATH_MEASURES["nDCG'"])].nunique() > 1  # settings differ in nDCG'
    assert len(grid) == 4
    for _, row in grid.iterrows():
        k1, b = row["tran_0_k1"], row["tran_1_b"]
        fresh = pt.Experiment([MathWordsQuery() >> PisaBM25(sample_index, k1=k1, b=b)],
                              topics, qrels, measures)
        assert row[names].tolist() == pytest.approx(fresh.iloc[0][names].tolist()), (k1, b)


def test_pisa_bm25_num_results_and_threads_can_change(sample_index, task1):
    topics = MathWordsQuery()(task1[0])
    bm25 = PisaBM25(sample_index, num_results=50)
    bm25(topics)
    bm25.set_parameter("num_results", 5)
    bm25.set_parameter("threads", 1)
    assert _ranking(bm25(topics)) == _ranking(PisaBM25(sample_index, num_results=5)(topics))


@pytest.fixture(scope="module")
def findex(sample_formula_index):
    return sample_formula_index


def test_formula_retriever_and_query_parameters(findex, sample):
    from mathir.pipelines.formula import FormulaQuery, FormulaRetriever

    topics = read_task2_topics(sample.task2_topics)
    query, retriever = FormulaQuery("tuples"), FormulaRetriever(findex, "tuples", 20)
    (query >> retriever)(topics)
    for name, value in (("k1", 2.0), ("b", 0.3), ("num_results", 7)):
        retriever.set_parameter(name, value)
    for name, value in (("abstract", False), ("symbols", True)):
        query.set_parameter(name, value)
    want = (FormulaQuery("tuples", abstract=False, symbols=True)
            >> FormulaRetriever(findex, "tuples", 7, k1=2.0, b=0.3))(topics)
    assert _ranking((query >> retriever)(topics)) == _ranking(want)
    # The representation of both stages, words instead of tuples.
    query.set_parameter("representation", "words")
    retriever.set_parameter("representation", "words")
    want = (FormulaQuery("words") >> FormulaRetriever(findex, "words", 7, k1=2.0, b=0.3))(topics)
    assert _ranking((query >> retriever)(topics)) == _ranking(want)


def test_formula_query_rejects_an_unknown_representation_set_later():
    from mathir.errors import InputError
    from mathir.pipelines.formula import FormulaQuery

    q = FormulaQuery("words")
    q.set_parameter("representation", "slt")
    with pytest.raises(InputError, match="representation"):
        q(pd.DataFrame({"qid": ["1"], "query": ["$x$"]}))


def test_formula_aware_answers_per_formula(sample_index, sample):
    from mathir.pipelines.formula import FormulaAwareAnswers, answer_formula_index

    topics = read_task1_topics(sample.task1_topics)
    fidx = answer_formula_index(sample_index)
    answers = set(sample_index.docnos())
    stage = FormulaAwareAnswers(fidx, answers, per_formula=1000)
    full = stage(topics)
    stage.set_parameter("per_formula", 3)
    want = FormulaAwareAnswers(fidx, answers, per_formula=3)(topics)
    got = stage(topics)
    assert _ranking(got) == _ranking(want) and len(got) < len(full)


@pytest.fixture(scope="module")
def facts(tmp_path_factory):
    from mathir.indexing.fact_index import FactIndex
    from mathir.samples import worldtree_sample

    return FactIndex.build(worldtree_sample().tables, tmp_path_factory.mktemp("wt") / "f")


QUESTIONS = pd.DataFrame({"qid": ["1", "2"], "query": ["an ice cube melts in the sun",
                                                       "a plant needs light to grow"]})


@pytest.mark.parametrize("cls", ["FactRanker", "IterativeExpansion"])
def test_worldtree_rankers_k1_b_and_model(facts, cls):
    from mathir.pipelines import worldtree_lexical

    make = getattr(worldtree_lexical, cls)
    ranker = make(facts, "bm25")
    before = _ranking(ranker(QUESTIONS))
    ranker.set_parameter("k1", 2.0)
    ranker.set_parameter("b", 0.9)
    got = _ranking(ranker(QUESTIONS))
    assert got == _ranking(make(facts, "bm25", k1=2.0, b=0.9)(QUESTIONS)) and got != before
    assert ranker.get_parameter("model") == "bm25"
    ranker.set_parameter("model", "tfidf")
    assert _ranking(ranker(QUESTIONS)) == _ranking(make(facts, "tfidf")(QUESTIONS))


def test_worldtree_ranker_rejects_an_unknown_model_set_later(facts):
    from mathir.pipelines.worldtree_lexical import FactRanker

    ranker = FactRanker(facts)
    ranker.set_parameter("model", "dph")
    with pytest.raises(ValueError, match="unknown model"):
        ranker(QUESTIONS)


def test_an_index_fixed_at_construction_cannot_be_swapped(facts):
    from mathir.pipelines.worldtree_lexical import PythonBaseline

    stage = PythonBaseline(facts)  # its vectorizer is fitted on the index's facts
    with pytest.raises(AttributeError, match="build a new PythonBaseline"):
        stage.set_parameter("index", None)
    assert stage.get_parameter("index") is facts


class _Texts:
    """A stand-in fact index: only ``texts()``."""

    def __init__(self, texts: dict[str, str]):
        self._texts = texts

    def texts(self) -> dict[str, str]:
        return self._texts


def test_fact_texts_follow_the_index():
    from mathir.pipelines.worldtree_ltr import AddFactText

    stage = AddFactText(_Texts({"f1": "ice melts"}))
    res = pd.DataFrame({"qid": ["1"], "docno": ["f1"]})
    assert stage(res)["text"][0] == "ice melts"
    stage.set_parameter("index", _Texts({"f1": "water boils"}))
    assert stage(res)["text"][0] == "water boils"
