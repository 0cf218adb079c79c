"""Fixtures shared by the pipeline tests."""

import pandas as pd
import pytest


@pytest.fixture(scope="session")
def trained_cross_encoder(tmp_path_factory, two_layer_minilm):
    """A cross-encoder trained for one step on four pairs (the smoke run), trained once
    for every test file that needs one, from MiniLM's first 2 layers (../conftest.py):
    the tests that take it check what is done with a model, at any depth."""
    pytest.importorskip("sentence_transformers")
    from mathir.pipelines.reranker_training import train_cross_encoder

    pairs = pd.DataFrame({"query": ["integral of $x$"] * 2 + ["prime numbers"] * 2,
                          "text": ["$x^2/2$ is the integral", "soup recipe",
                                   "there are infinitely many primes", "a cat"],
                          "label": [1, 0, 1, 0]})
    return train_cross_encoder(pairs, tmp_path_factory.mktemp("ce") / "model",
                               base=two_layer_minilm, batch_size=4, max_length=32, max_steps=1,
                               quiet=True)
