"""The public building blocks of a reranker over answer texts (mathir.pipelines.reranking)."""

from __future__ import annotations

import pandas as pd
import pyterrier as pt
import pytest

import mathir
from mathir.indexing.dense_index import AnswerTexts
from mathir.pipelines.reranking import DropText, rerank, text_store


def _shortest_first(calls: list | None = None) -> pt.Transformer:
    """A toy scorer: shorter answers score higher; records the (query, text) it read."""
    def score(row):
        if calls is not None:
            calls.append((row["query"], row["title"], row["text"]))
        return -float(len(row["text"]))
    return pt.apply.doc_score(score)


def test_text_store_of_an_index_is_its_answer_texts(sample_index):
    texts = text_store(sample_index)
    assert isinstance(texts, AnswerTexts) and len(texts) == sample_index.num_docs
    assert texts.path == sample_index.path.parent / f"{sample_index.path.name}-texts"
    mapping = {"a": "text"}
    assert text_store(mapping) is mapping and text_store(texts) is texts


def test_rerank_scores_bm25s_answers_by_their_text_and_original_query(sample_index):
    calls: list = []
    first = mathir.bm25(sample_index, num_results=5)
    pipe = first >> rerank(sample_index, _shortest_first(calls))
    out = pipe.search("integration by parts $\\int x e^x dx$")
    bm25 = first.search("integration by parts $\\int x e^x dx$")
    assert sorted(out["docno"]) == sorted(bm25["docno"])
    assert "text" not in out.columns and "title" not in out.columns
    assert "query_0" not in out.columns
    texts = text_store(sample_index).fetch(out["docno"])
    ranked = out.sort_values("rank")["docno"].tolist()
    assert ranked == sorted(ranked, key=lambda d: len(texts[d][1]))
    # the model read the query as written (formulas as LaTeX) and the answers' LaTeX
    assert {q for q, _, _ in calls} == {"integration by parts $\\int x e^x dx$"}
    assert {(t, x) for _, t, x in calls} == {texts[d] for d in out["docno"]}


def test_rerank_with_a_cache_scores_each_pair_once(tmp_path):
    pytest.importorskip("pyterrier_caching")
    calls: list = []
    res = pd.DataFrame({"qid": ["1", "1"], "query": ["q", "q"], "docno": ["a", "b"],
                        "score": [1.0, 2.0], "rank": [1, 0]})
    texts = {"a": "short", "b": "a longer answer"}
    first = rerank(texts, _shortest_first(calls), cache=tmp_path / "cache")(res)
    again = rerank(texts, _shortest_first(calls), cache=tmp_path / "cache")(res)
    assert len(calls) == 2  # the second reranker read the cache
    assert first.sort_values("docno")["score"].tolist() == again.sort_values("docno")[
        "score"].tolist() == [-5.0, -15.0]
    assert "text" not in again.columns


def test_drop_text_leaves_other_frames_alone():
    frame = pd.DataFrame({"qid": ["1"], "docno": ["a"], "score": [1.0]})
    assert DropText()(frame).equals(frame)
    assert DropText()(frame.assign(title="t", text="x")).columns.tolist() == list(frame.columns)
