"""pyterrier_caching.ScorerCache around mathir's neural scorers (the ``neural`` extra)."""

from __future__ import annotations

import pandas as pd
import pytest

pytest.importorskip("sentence_transformers")
pyterrier_caching = pytest.importorskip("pyterrier_caching")

from mathir.pipelines import neural  # noqa: E402

TEXTS = {"a": "the integral of $x$ is $x^2/2$", "b": "primes are infinite",
         "c": "integration by parts: $\\int u dv = uv - \\int v du$"}


def _first_stage() -> pd.DataFrame:
    """Two topics as a lexical stage leaves them: rewritten query, original in query_0."""
    rows = [("1", "integral of x", "integral of $x$", d, 3.0 - i, i)
            for i, d in enumerate(TEXTS)]
    rows += [("2", "integration by parts", "integration by parts", d, 1.0 - i, i)
             for i, d in enumerate(["c", "a"])]
    return pd.DataFrame(rows, columns=["qid", "query", "query_0", "docno", "score", "rank"])


def _scores(res: pd.DataFrame) -> dict[tuple[str, str], float]:
    return {(q, d): s for q, d, s in zip(res["qid"], res["docno"], res["score"], strict=True)}


def test_scorer_cache_wraps_the_bi_encoder_scorer(tmp_path):
    inp = neural.AddAnswerText(TEXTS)(neural.OriginalQuery()(_first_stage()))
    plain = neural.bi_encoder_scorer()(inp)
    cached = pyterrier_caching.ScorerCache(str(tmp_path / "c"), neural.bi_encoder_scorer())(inp)
    assert _scores(cached) == pytest.approx(_scores(plain), abs=1e-6)
    assert cached["query"].tolist() == inp["query"].tolist()
    # Second call: every score from the cache (a cache without a scorer fails on a miss).
    reopened = pyterrier_caching.ScorerCache(str(tmp_path / "c"), None)
    assert _scores(reopened(inp)) == pytest.approx(_scores(plain), abs=1e-6)
    with pytest.raises(LookupError):
        reopened(inp.assign(query="another query"))


def test_reranker_cache_keys_the_original_query(tmp_path):
    res = _first_stage()
    plain = neural.bi_encoder_reranker(TEXTS)(res)
    cached = neural.bi_encoder_reranker(TEXTS, cache=tmp_path / "c")(res)
    assert _scores(cached) == pytest.approx(_scores(plain), abs=1e-6)
    assert "text" not in cached.columns and cached["query"].tolist() == plain["query"].tolist()
    rank = {(q, d): r for q, d, r in zip(plain["qid"], plain["docno"], plain["rank"], strict=True)}
    assert {(q, d): r for q, d, r in zip(cached["qid"], cached["docno"], cached["rank"],
                                         strict=True)} == rank
    again = neural.bi_encoder_reranker(TEXTS, cache=tmp_path / "c")(res)
    assert _scores(again) == pytest.approx(_scores(plain), abs=1e-6)
    # The cache holds scores for the query the model read ($x$), not the rewritten one.
    reopened = pyterrier_caching.ScorerCache(str(tmp_path / "c"), None)
    hits = reopened(pd.DataFrame({"qid": ["1"], "query": ["integral of $x$"], "docno": ["a"]}))
    assert hits["score"][0] == pytest.approx(_scores(plain)[("1", "a")], abs=1e-6)


def test_scorers_keep_query_and_docno():
    # What ScorerCache needs: it looks scores up by (query, docno) of its input rows.
    inp = neural.AddAnswerText(TEXTS)(_first_stage())
    out = neural.bi_encoder_scorer()(inp)
    assert sorted(zip(out["query"], out["docno"], strict=True)) == \
        sorted(zip(inp["query"], inp["docno"], strict=True))


def test_cache_without_pyterrier_caching_names_the_extra(monkeypatch, tmp_path):
    from mathir.errors import InputError

    monkeypatch.setitem(__import__("sys").modules, "pyterrier_caching", None)
    with pytest.raises(InputError, match="pyterrier-caching.*neural"):
        neural.bi_encoder_reranker(TEXTS, cache=tmp_path / "c")
