import pandas as pd
import pyterrier as pt

from mathir.pipelines.fusion import LinearFusion, rr_fusion

TOPICS = pd.DataFrame({"qid": ["1", "2"], "query": ["a", "b"]})


def ranked(rows):
    return pt.Transformer.from_df(pd.DataFrame(rows, columns=["qid", "docno", "score"]))


def test_linear_fusion_by_hand():
    a = ranked([("1", "x", 10.0), ("1", "y", 5.0), ("1", "z", 0.0), ("2", "x", 1.0)])
    b = ranked([("1", "z", 4.0), ("1", "y", 2.0), ("2", "w", 9.0), ("2", "x", 3.0)])
    out = LinearFusion([a, b], [0.5, 0.5])(TOPICS)
    got = {(q, d): s for q, d, s in out[["qid", "docno", "score"]].itertuples(index=False)}
    # q1: a -> x 1, y .5, z 0; b -> z 1, y 0. q2: a -> x 1 (single hit); b -> w 1, x 0.
    assert got == {("1", "x"): 0.5, ("1", "y"): 0.25, ("1", "z"): 0.5, ("2", "x"): 0.5, ("2", "w"): 0.5}
    assert out[out.qid == "1"]["rank"].tolist() == [0, 1, 2]
    assert "query" in out.columns


def test_rrf_by_hand():
    a = ranked([("1", "x", 3.0), ("1", "y", 2.0)])
    b = ranked([("1", "y", 3.0), ("1", "z", 2.0)])
    out = rr_fusion(a, b, k=60)(TOPICS[TOPICS.qid == "1"])
    got = dict(zip(out.docno, out.score, strict=True))
    assert abs(got["y"] - (1 / 62 + 1 / 61)) < 1e-12
    assert abs(got["x"] - 1 / 61) < 1e-12 and abs(got["z"] - 1 / 62) < 1e-12
    assert out.docno.tolist()[0] == "y"
