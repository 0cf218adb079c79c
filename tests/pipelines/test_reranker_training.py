import json

import pandas as pd
import pytest

from mathir.errors import InputError
from mathir.pipelines.reranker_training import (
    listwise_groups,
    pairs_from_qrels,
    train_cross_encoder,
)

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


def test_listwise_groups_put_each_positive_first_with_its_query_negatives():
    pairs = pd.DataFrame({"qid": ["1"] * 5 + ["2"] * 2 + ["3"],
                          "query": ["q1"] * 5 + ["q2"] * 2 + ["q3"],
                          "text": ["p1", "p2", "n1", "n2", "n3", "p3", "n4", "p4"],
                          "label": [1, 1, 0, 0, 0, 1, 0, 1]})
    groups = listwise_groups(pairs)
    # 4 negatives for 4 positives: k = 1; query 3 has no negative and is left out.
    assert [g[0] for g in groups] == [("q1", "p1"), ("q1", "p2"), ("q2", "p3")]
    assert all(len(g) == 2 for g in groups)
    assert all(text.startswith("n") and q == g[0][0] for g in groups for q, text in g[1:])
    assert {g[1][1] for g in groups[:2]} <= {"n1", "n2", "n3"} and groups[0][1] != groups[1][1]
    # Too few negatives for k = 3: a query's negatives are reused.
    few = pairs[pairs["qid"] == "2"]
    more = pd.concat([few, few.assign(qid="9", label=0)])  # 3 negatives, 1 positive
    assert listwise_groups(more) == [[("q2", "p3")] + [("q2", "n4")] * 3]


def test_training_needs_both_classes(tmp_path):
    pytest.importorskip("sentence_transformers")
    pairs = pd.DataFrame({"query": ["q"], "text": ["t"], "label": [1]})
    with pytest.raises(InputError, match="positive and negative"):
        train_cross_encoder(pairs, tmp_path / "m")
    with pytest.raises(InputError, match="lack column"):
        train_cross_encoder(pairs.drop(columns=["label"]), tmp_path / "m")
    with pytest.raises(InputError, match="lack column"):  # listwise groups by qid
        train_cross_encoder(pairs.assign(label=[0]), tmp_path / "m", loss="listwise")
    with pytest.raises(InputError, match="unknown loss"):
        train_cross_encoder(pairs, tmp_path / "m", loss="pairwise")


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


def test_listwise_training_learns_to_put_the_positive_first(tmp_path):
    pytest.importorskip("sentence_transformers")
    from sentence_transformers import CrossEncoder

    # One query, its positive and three negatives: a few listwise steps at a high
    # learning rate must rank the positive first (the untrained head cannot be relied on).
    pairs = pd.DataFrame({"qid": ["1"] * 4, "query": ["which gas do plants take in"] * 4,
                          "text": ["plants take in carbon dioxide", "a rock is hard",
                                   "the moon orbits the earth", "iron is a metal"],
                          "label": [1, 0, 0, 0]})
    out = train_cross_encoder(pairs.iloc[[0, 1, 2, 3] * 3].assign(label=[1, 0, 0, 0] * 3),
                              tmp_path / "ce", batch_size=4, max_length=32, epochs=4,
                              learning_rate=2e-4, warmup=0.0, loss="listwise", quiet=True)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["loss"] == "listwise" and manifest["groups"] == 3
    scores = CrossEncoder(str(out)).predict(list(zip(pairs["query"], pairs["text"], strict=True)))
    assert scores.argmax() == 0


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


def test_in_batch_texts_in_the_query_gold_set_are_not_negatives():
    from mathir.pipelines.reranker_training import false_negatives

    gold = {"q1": {"a shared fact", "only q1"}, "q2": {"a shared fact"}, "q3": {"other"}}
    texts = ["a shared fact", "a shared fact", "other", "only q1"]  # 3 targets, 1 hard negative
    mask = false_negatives(["q1", "q2", "q3"], texts, gold)
    assert mask == [[False, True, False, True],   # q2's positive and the hard one are q1's gold
                    [True, False, False, False],  # q1's positive is q2's gold too
                    [False, False, False, False]]
    assert not any(row[i] for i, row in enumerate(mask))  # a target is never masked
