"""VisualDedup: highest-scored instance of each visual id."""

from __future__ import annotations

import pandas as pd
import pytest

from mathir.pipelines.dedup import VisualDedup


def test_keeps_best_instance_per_query_and_reranks():
    res = pd.DataFrame({
        "qid": ["1", "1", "1", "2", "2", "1"],
        "docno": ["a", "b", "c", "a", "d", "e"],
        "visual_id": ["v", "v", "w", "v", "v", ""],
        "score": [1.0, 3.0, 2.0, 5.0, 4.0, 0.5],
    })
    out = VisualDedup().transform(res)
    assert out[["qid", "docno", "rank"]].values.tolist() == [
        ["1", "b", 0], ["1", "c", 1], ["1", "e", 2], ["2", "a", 0]]


def test_ties_keep_input_order_and_cut():
    res = pd.DataFrame({"qid": ["1"] * 4, "docno": ["z", "y", "x", "w"],
                        "visual_id": ["1", "2", "1", "3"], "score": [1.0, 1.0, 1.0, 2.0]})
    assert VisualDedup(num_results=2).transform(res).docno.tolist() == ["w", "z"]


def test_needs_visual_ids():
    with pytest.raises(ValueError, match="visual_id"):
        VisualDedup().transform(pd.DataFrame({"qid": ["1"], "docno": ["a"], "score": [1.0]}))
