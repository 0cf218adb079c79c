import json

import pandas as pd
import pytest

from mathir.errors import InputError
from mathir.pipelines.reranker_training import pairs_from_qrels, train_cross_encoder

TOPICS = pd.DataFrame({"qid": ["1", "2", "3"], "query": ["q1", "q2", "q3"]})
TEXTS = {d: f"text {d}" for d in "abcdefg"}


def test_pairs_positives_judged_negatives_then_hard_negatives():
    qrels = pd.DataFrame({"qid": ["1", "1", "1", "2", "2"], "docno": ["a", "b", "z", "c", "d"],
                          "label": [3, 1, 2, 0, 1]})
    bm25 = pd.DataFrame({"qid": ["1"] * 4, "docno": ["c", "a", "d", "e"], "rank": [0, 1, 2, 3]})
    pairs = pairs_from_qrels(TOPICS, qrels, TEXTS, bm25, rel=2, negatives_per_positive=2)
    # topic 1: "z" has no text (skipped); positive a; negatives: judged b, then BM25's c, d.
    # topic 2: no positive at M/H, so no pairs; topic 3: not judged.
    assert pairs[["qid", "docno", "label"]].values.tolist() == [["1", "a", 1], ["1", "b", 0],
                                                                 ["1", "c", 0]]
    assert pairs["text"].tolist() == ["text a", "text b", "text c"]
    assert pairs["query"].eq("q1").all()


def test_pairs_with_binary_relevance_and_no_first_stage():
    qrels = pd.DataFrame({"qid": ["2", "2", "2"], "docno": ["c", "d", "e"], "label": [1, 0, 1]})
    pairs = pairs_from_qrels(TOPICS, qrels, TEXTS, rel=1)
    assert sorted(pairs[pairs.label == 1].docno) == ["c", "e"]
    assert pairs[pairs.label == 0].docno.tolist() == ["d"]


def test_training_needs_both_classes(tmp_path):
    pytest.importorskip("sentence_transformers")
    pairs = pd.DataFrame({"query": ["q"], "text": ["t"], "label": [1]})
    with pytest.raises(InputError, match="positive and negative"):
        train_cross_encoder(pairs, tmp_path / "m")
    with pytest.raises(InputError, match="lack column"):
        train_cross_encoder(pairs.drop(columns=["label"]), tmp_path / "m")


def test_smoke_training_one_step_saves_a_loadable_cross_encoder(tmp_path):
    pytest.importorskip("sentence_transformers")
    from sentence_transformers import CrossEncoder

    pairs = pd.DataFrame({"query": ["sum of squares"] * 2 + ["prime"] * 2,
                          "text": ["$\\sum k^2 = n(n+1)(2n+1)/6$", "soup", "2 is prime", "a cat"],
                          "label": [1, 0, 1, 0]})
    out = train_cross_encoder(pairs, tmp_path / "ce", batch_size=2, max_length=32,
                              max_steps=1, quiet=True)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["steps"] == 1 and manifest["pairs"] == 4 and manifest["positives"] == 2
    assert manifest["base"].endswith("model")  # the packaged all-MiniLM-L6-v2
    scores = CrossEncoder(str(out)).predict([("prime", "2 is prime"), ("prime", "a cat")])
    assert len(scores) == 2 and all(0.0 <= s <= 1.0 for s in scores)


def test_bi_encoder_training_saves_a_loadable_model_and_checks_its_input(tmp_path):
    pytest.importorskip("sentence_transformers")
    from mathir.pipelines.neural import load_bi_encoder
    from mathir.pipelines.reranker_training import train_bi_encoder

    pairs = pd.DataFrame({"qid": ["1", "1", "1", "2", "2"],
                          "query": ["ice melts", "ice melts", "ice melts", "sun", "sun"],
                          "text": ["melting is a phase change", "heat melts ice", "a rock",
                                   "the sun is a star", "a cat"],
                          "label": [1, 1, 0, 1, 0]})
    out = train_bi_encoder(pairs, tmp_path / "bi", batch_size=4, max_length=32, max_steps=2,
                           quiet=True)
    manifest = json.loads((out / "manifest.json").read_text())
    # three positives, two of one query: the batches hold at most one of each query
    assert manifest["steps"] == 2 and manifest["positives"] == 3
    assert load_bi_encoder(out).encode(["ice"]).shape == (1, 384)
    with pytest.raises(InputError, match="positive pairs"):
        train_bi_encoder(pairs.assign(label=0), tmp_path / "none")
    with pytest.raises(InputError, match="lack column"):
        train_bi_encoder(pairs.drop(columns=["qid"]), tmp_path / "none")
