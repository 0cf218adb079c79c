"""Fusion of ranked lists: min-max normalised linear combination, and reciprocal rank fusion.

Both run each input pipeline on the same topics and merge per query. Written here
rather than taken from pyterrier-alpha: its ``RRFusion`` uses PyTerrier's 0-based ranks
(1 / (k + rank - 1) in TREC terms), and its ``PerQueryMaxMinScore`` fails to import its
validator in the installed version and, like scikit-learn's ``minmax_scale``, maps a
query whose scores all tie (e.g. a single hit) to 0, the same as not retrieved; we map
it to 1. PyTerrier's ``+`` cannot weight several inputs or keep documents that only
some inputs retrieved, hence ``LinearFusion``.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import pyterrier as pt


def minmax_per_query(results: pd.DataFrame) -> pd.Series:
    """Scores scaled to [0, 1] within each query; a query whose scores all tie gets 1.

    >>> minmax_per_query(pd.DataFrame({"qid": ["1", "1", "2"], "score": [4.0, 2.0, 7.0]})).tolist()
    [1.0, 0.0, 1.0]
    """
    score = results["score"].astype(float)
    by_query = score.groupby(results["qid"])
    low, high = by_query.transform("min"), by_query.transform("max")
    span = high - low
    return ((score - low) / span.where(span > 0, 1.0)).where(span > 0, 1.0)


def _ranked(topics: pd.DataFrame, fused: pd.DataFrame, num_results: int | None) -> pd.DataFrame:
    """Fused scores joined to the topics' columns, ranked (ties by docno) and cut."""
    keep = [c for c in topics.columns if c not in ("docno", "score", "rank")]
    out = topics[keep].merge(fused, on="qid")
    out = out.sort_values(["qid", "score", "docno"], ascending=[True, False, True], kind="stable")
    out["rank"] = out.groupby("qid").cumcount()
    if num_results is not None:
        out = out[out["rank"] < num_results]
    return out.reset_index(drop=True)


class LinearFusion(pt.Transformer):
    """Per-query min-max normalise each input's scores, then sum them with weights.

    A document missing from one input gets 0 from it (the minimum after normalisation).

    >>> a = pt.Transformer.from_df(pd.DataFrame({"qid": ["1", "1"], "docno": ["x", "y"], "score": [10.0, 0.0]}))
    >>> b = pt.Transformer.from_df(pd.DataFrame({"qid": ["1"], "docno": ["y"], "score": [3.0]}))
    >>> LinearFusion([a, b], [0.25, 0.75])(pd.DataFrame({"qid": ["1"], "query": ["q"]}))[["docno", "score", "rank"]].values.tolist()
    [['y', 0.75, 0], ['x', 0.25, 1]]
    """

    def __init__(self, pipelines: Sequence[pt.Transformer], weights: Sequence[float] | None = None,
                 num_results: int | None = 1000):
        if not pipelines:
            raise ValueError("LinearFusion needs at least one pipeline")
        self.pipelines = list(pipelines)
        self.weights = list(weights) if weights is not None else [1.0 / len(pipelines)] * len(pipelines)
        if len(self.weights) != len(self.pipelines):
            raise ValueError("one weight per pipeline")
        self.num_results = num_results

    def __repr__(self) -> str:
        return f"LinearFusion({self.pipelines!r}, weights={self.weights!r})"

    def transform(self, topics: pd.DataFrame) -> pd.DataFrame:
        scores = None
        for i, (pipe, w) in enumerate(zip(self.pipelines, self.weights, strict=True)):
            res = pipe.transform(topics)
            part = res[["qid", "docno"]].copy()
            part[f"s{i}"] = w * minmax_per_query(res)
            scores = part if scores is None else scores.merge(part, on=["qid", "docno"], how="outer")
        cols = [c for c in scores.columns if c.startswith("s")]
        scores["score"] = scores[cols].fillna(0.0).sum(axis=1)
        return _ranked(topics, scores[["qid", "docno", "score"]], self.num_results)


class RRFusion(pt.Transformer):
    """Reciprocal rank fusion: ``score(d) = sum over inputs of 1 / (k + rank(d))``.

    Ranks start at 1 as in Cormack et al. (2009) and in TREC run files. (pyterrier-alpha's
    ``RRFusion`` uses PyTerrier's 0-based ranks, i.e. 1 / (k + rank - 1), hence our own.)
    Ties in the fused score are broken by docno.
    """

    def __init__(self, pipelines: Sequence[pt.Transformer], k: int = 60,
                 num_results: int | None = 1000):
        self.pipelines = list(pipelines)
        self.k = k
        self.num_results = num_results

    def __repr__(self) -> str:
        return f"RRFusion({self.pipelines!r}, k={self.k})"

    def transform(self, topics: pd.DataFrame) -> pd.DataFrame:
        parts = []
        for pipe in self.pipelines:
            res = pipe.transform(topics)[["qid", "docno", "score"]]
            res = res.sort_values(["qid", "score", "docno"], ascending=[True, False, True],
                                  kind="stable")
            rank = res.groupby("qid").cumcount() + 1
            parts.append(pd.DataFrame({"qid": res["qid"], "docno": res["docno"],
                                       "score": 1.0 / (self.k + rank)}))
        fused = pd.concat(parts).groupby(["qid", "docno"], as_index=False)["score"].sum()
        return _ranked(topics, fused, self.num_results)


def rr_fusion(*pipelines: pt.Transformer, k: int = 60, num_results: int = 1000) -> RRFusion:
    """Reciprocal rank fusion (k = 60 by default) of the pipelines' rankings.

    >>> a = pt.Transformer.from_df(pd.DataFrame({"qid": ["1", "1"], "docno": ["x", "y"], "score": [2.0, 1.0]}))
    >>> b = pt.Transformer.from_df(pd.DataFrame({"qid": ["1"], "docno": ["y"], "score": [5.0]}))
    >>> rr_fusion(a, b)(pd.DataFrame({"qid": ["1"], "query": ["q"]})).docno.tolist()
    ['y', 'x']
    """
    return RRFusion(pipelines, k=k, num_results=num_results)
