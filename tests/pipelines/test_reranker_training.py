import functools
import json

import numpy as np
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


@functools.cache
def _untrained_cross_encoder(max_length: int = 32):
    """The model train_cross_encoder starts from: the packaged MiniLM with a new one-logit
    head, drawn after torch.manual_seed(seed) (seed 0), on the CPU. Loaded once for the
    tests that compare with it (they only predict with it)."""
    import torch
    from sentence_transformers import CrossEncoder

    from mathir.pipelines.neural import resolve_model

    torch.manual_seed(0)
    return CrossEncoder(resolve_model(None), num_labels=1, max_length=max_length, device="cpu")


def _logits(model, pairs: pd.DataFrame):
    import torch

    return torch.as_tensor(model.predict(list(zip(pairs["query"], pairs["text"], strict=True)),
                                         activation_fn=torch.nn.Identity()))


PLANTS = pd.DataFrame({"qid": ["1"] * 4 + ["2"] * 2,
                       "query": ["which gas do plants take in"] * 4 + ["is 2 prime"] * 2,
                       "text": ["plants take in carbon dioxide", "a rock is hard",
                                "the moon orbits the earth", "iron is a metal",
                                "2 is a prime number", "a cat sleeps"],
                       "label": [1, 0, 0, 0, 1, 0]})


def test_pointwise_training_lowers_the_loss_and_saves_a_loadable_cross_encoder(tmp_path):
    pytest.importorskip("sentence_transformers")
    import torch
    from sentence_transformers import CrossEncoder

    out = train_cross_encoder(PLANTS, tmp_path / "ce", batch_size=6, max_length=32, epochs=3,
                              learning_rate=2e-4, warmup=0.0, device="cpu", quiet=True)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["steps"] == 3 and manifest["pairs"] == 6 and manifest["positives"] == 2
    assert manifest["base"].endswith("model")  # the packaged all-MiniLM-L6-v2
    # Three full-batch steps must lower the binary cross-entropy on the training pairs
    # below that of the model training started from (about ln 2: its new head says ~0.5).
    labels = torch.tensor(PLANTS["label"].to_numpy(), dtype=torch.float32)
    bce = torch.nn.functional.binary_cross_entropy_with_logits
    before = bce(_logits(_untrained_cross_encoder(), PLANTS), labels).item()
    trained = CrossEncoder(str(out))
    logits = _logits(trained, PLANTS)
    after = bce(logits, labels).item()
    assert after < before - 0.05, (before, after)
    assert logits[0] > logits[1:4].max() and logits[4] > logits[5]  # positives above negatives
    # The saved model reads like any CrossEncoder: predict() gives sigmoid(logit).
    assert np.allclose(trained.predict([(PLANTS["query"][4], PLANTS["text"][4])]),
                       torch.sigmoid(logits[4:5]).numpy(), atol=1e-5)


def test_listwise_training_learns_to_put_the_positive_first(tmp_path):
    pytest.importorskip("sentence_transformers")
    import torch
    from sentence_transformers import CrossEncoder

    # One query, its positive and three negatives (three copies: three groups, one step
    # each per epoch). The untrained head ranks a negative first (see `before`).
    pairs = PLANTS.iloc[:4]
    out = train_cross_encoder(pairs.iloc[[0, 1, 2, 3] * 3], tmp_path / "ce", batch_size=4,
                              max_length=32, epochs=2, learning_rate=2e-4, warmup=0.0,
                              loss="listwise", device="cpu", quiet=True)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["loss"] == "listwise" and manifest["groups"] == 3 and manifest["steps"] == 6

    def listwise_loss(logits):  # softmax cross-entropy with the positive (row 0) as target
        return -torch.log_softmax(logits, 0)[0].item()

    before = _logits(_untrained_cross_encoder(), pairs)
    after = _logits(CrossEncoder(str(out)), pairs)
    assert listwise_loss(after) < listwise_loss(before) - 0.3, (before, after)
    assert after.argmax() == 0


def test_bi_encoder_training_pulls_positives_closer_and_checks_its_input(tmp_path):
    pytest.importorskip("sentence_transformers")
    from sentence_transformers import SentenceTransformer

    from mathir.pipelines.neural import load_bi_encoder, resolve_model
    from mathir.pipelines.reranker_training import train_bi_encoder

    pairs = pd.DataFrame({"qid": ["1", "1", "1", "2", "2"],
                          "query": ["ice melts", "ice melts", "ice melts", "sun", "sun"],
                          "text": ["melting is a phase change", "heat melts ice", "a rock",
                                   "the sun is a star", "a cat"],
                          "label": [1, 1, 0, 1, 0]})
    out = train_bi_encoder(pairs, tmp_path / "bi", batch_size=4, max_length=32, max_steps=2,
                           learning_rate=1e-4, warmup=0.0, device="cpu", quiet=True)
    manifest = json.loads((out / "manifest.json").read_text())
    # three positives, two of one query: the batches hold at most one of each query
    assert manifest["steps"] == 2 and manifest["positives"] == 3
    assert load_bi_encoder(out).encode(["ice"]).shape == (1, 384)

    def margins(model):
        """Per query: mean cosine to its positives minus cosine to its negative."""
        q = model.encode(["ice melts", "sun"], normalize_embeddings=True)
        d = model.encode(pairs["text"].tolist(), normalize_embeddings=True)
        s = q @ d.T
        return np.array([s[0, :2].mean() - s[0, 2], s[1, 3] - s[1, 4]])

    before = margins(SentenceTransformer(resolve_model(None), device="cpu"))
    after = margins(SentenceTransformer(str(out), device="cpu"))
    assert (after > before + 0.1).all(), (before, after)
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
