"""Visual-id deduplication of formula results (ARQMath Task 2 judges visual ids)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyterrier as pt


class VisualDedup(pt.Transformer):
    """Keep the highest-scored instance of each visual id per query, then re-rank.

    Rows need a ``visual_id`` column (the formula pipelines add it); rows without one
    (``""`` or missing) are each their own visual formula. Among equal scores the input
    order decides. At most ``num_results`` rows per query are kept.

    >>> res = pd.DataFrame({"qid": ["1"] * 3, "docno": ["a", "b", "c"],
    ...                     "visual_id": ["v", "v", "w"], "score": [1.0, 3.0, 2.0]})
    >>> VisualDedup()(res)[["docno", "rank"]].values.tolist()
    [['b', 0], ['c', 1]]
    """

    def __init__(self, num_results: int | None = 1000):
        self.num_results = num_results

    def __repr__(self) -> str:
        return f"VisualDedup(num_results={self.num_results})"

    def transform(self, results: pd.DataFrame) -> pd.DataFrame:
        if "visual_id" not in results.columns:
            raise ValueError("VisualDedup needs a visual_id column (from a formula retriever)")
        if results.empty:
            return results.assign(rank=pd.Series(dtype="int64"))
        # numpy rather than DataFrame.sort_values: this runs once per query in formula
        # search, where pandas' overhead on a few thousand rows dominated the latency.
        qcodes, _ = pd.factorize(results["qid"], sort=True)
        score = results["score"].to_numpy(dtype=float)
        # Sort on numbers only (strings would be compared in Python); ties keep the
        # input order, which the retriever fixes.
        order = np.lexsort((-score, qcodes))
        vid = results["visual_id"].to_numpy(dtype=object)[order]
        docno = results["docno"].to_numpy(dtype=object)[order]
        key = [v if isinstance(v, str) and v else "\0" + str(d) for v, d in zip(vid, docno, strict=True)]
        keep = ~pd.DataFrame({"q": qcodes[order], "k": key}).duplicated().to_numpy()
        rows, q = order[keep], qcodes[order][keep]
        starts = np.r_[0, np.flatnonzero(q[1:] != q[:-1]) + 1]
        rank = np.arange(len(q)) - np.repeat(starts, np.diff(np.r_[starts, len(q)]))
        if self.num_results is not None:  # cut before copying the rows
            rows, rank = rows[rank < self.num_results], rank[rank < self.num_results]
        out = results.iloc[rows].reset_index(drop=True)
        out["rank"] = rank
        return out


class VisualIdDocno(pt.Transformer):
    """Make ``docno`` the visual id, so Task 2 results score in ``pt.Experiment``.

    Task 2 judges visual ids, but the formula pipelines' ``docno`` is the formula id
    (what run files list). Against visual-id qrels (``read_qrels`` of the official
    ``qrels_task2_visual_id`` file) every formula-id docno is unjudged and the run scores
    0.0 without a warning. This stage keeps the first instance of each visual id per
    query (highest score; :class:`VisualDedup` is a no-op before it), drops rows
    without a visual id (the official evaluation cannot judge them), keeps the formula
    id in ``formula_id`` and sets ``docno`` to the visual id. With the prime measures
    (:data:`mathir.evaluation.prime.ARQMATH_MEASURES`, which drop unjudged visual ids),
    ``pt.Experiment`` then gives :func:`mathir.evaluation.formula_search.evaluate_task2`'s
    scores. Do not write its output as a run file: runs list formula ids.

    >>> res = pd.DataFrame({"qid": ["1"] * 3, "docno": ["a", "b", "c"],
    ...                     "visual_id": ["v", "", "w"], "score": [3.0, 2.0, 1.0]})
    >>> VisualIdDocno()(res)[["docno", "formula_id", "rank"]].values.tolist()
    [['v', 'a', 0], ['w', 'c', 1]]
    """

    def __repr__(self) -> str:
        return "VisualIdDocno()"

    def transform(self, results: pd.DataFrame) -> pd.DataFrame:
        if "visual_id" not in results.columns:
            raise ValueError("VisualIdDocno needs a visual_id column (from a formula retriever)")
        vid = results["visual_id"]
        known = vid.notna().to_numpy() & (vid.astype(str) != "").to_numpy()
        out = results[known]
        if "formula_id" not in out.columns:
            out = out.assign(formula_id=out["docno"])
        out = VisualDedup(num_results=None).transform(out.reset_index(drop=True))
        return out.assign(docno=out["visual_id"].astype(str))
