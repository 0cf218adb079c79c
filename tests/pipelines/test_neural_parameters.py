"""set_parameter on the neural transformers: a changed parameter changes the scores."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from mathir.pipelines import neural

RES = pd.DataFrame({"qid": ["1", "1"], "query": ["integral of $x$"] * 2, "docno": ["a", "b"],
                    "text": ["the integral of $x$ is $x^2/2$", "primes are infinite"]})


class _Encoder:
    """A stand-in bi-encoder: documents embed as (len(text), slope * len(text) + 1)."""

    batch_size = 8

    def __init__(self, slope: float):
        self.slope = slope
        self.st = self

    def encode_queries(self, texts, batch_size=None) -> np.ndarray:
        return np.tile([1.0, 1.0], (len(texts), 1))

    def encode_docs(self, texts, batch_size=None) -> np.ndarray:
        return np.array([[len(t), self.slope * len(t) + 1.0] for t in texts])


def test_bi_encoder_scorer_forgets_embeddings_of_a_replaced_encoder():
    scorer = neural.BiEncoderScorer(_Encoder(0.0))
    before = scorer(RES)["score"].tolist()
    scorer.set_parameter("encoder", _Encoder(-1.0))
    got = scorer(RES)["score"].tolist()
    assert got == pytest.approx(neural.BiEncoderScorer(_Encoder(-1.0))(RES)["score"].tolist())
    assert got != pytest.approx(before)


def test_remember_after_an_encoder_change_does_not_mix_encoders():
    scorer = neural.BiEncoderScorer(_Encoder(0.0))
    scorer(RES)
    scorer.set_parameter("encoder", _Encoder(-1.0))
    scorer.remember(["x"], np.array([[1.0, 0.0]]))
    assert set(scorer._cache) == {"x"}


def test_cross_encoder_scorer_reloads_for_a_new_max_length(trained_cross_encoder):
    scorer = neural.CrossEncoderScorer(trained_cross_encoder, max_length=64)
    before = scorer(RES)["score"].tolist()
    scorer.set_parameter("max_length", 4)  # cuts both texts to the query's first tokens
    got = scorer(RES)["score"].tolist()
    want = neural.CrossEncoderScorer(trained_cross_encoder, max_length=4)(RES)["score"].tolist()
    assert got == pytest.approx(want, abs=1e-6) and got != pytest.approx(before, abs=1e-6)


def test_dense_retriever_passage_depth(sample_index):
    topics = pd.DataFrame({"qid": ["1"], "query": ["integration by parts"]})
    dense = neural.dense(sample_index, num_results=50)
    full = dense(topics)
    dense.set_parameter("passage_depth", 3)  # at most 3 answers from the 3 best passages
    got = dense(topics)
    fresh = neural.DenseRetriever(dense.index, dense.encoder, num_results=50, passage_depth=3)
    assert got[["docno", "score"]].values.tolist() == fresh(topics)[["docno", "score"]].values.tolist()
    assert len(got) <= 3 < len(full)
