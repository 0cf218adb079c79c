"""Exporting a model for a CPU backend (:mod:`mathir.neural.backends`): ONNX, fused and
optionally int8, or OpenVINO, optionally int8; the export cache; the run identity.

Nothing is downloaded and optimum is not needed. An export is made once per model and
backend and cached (:func:`export_dir`): beside the model's folder when its parent folder
can be written (``<model>.mathir-export/<backend>/``), else under mathir's cache
(``$MATHIR_CACHE_DIR/exports``); ``$MATHIR_EXPORT_DIR`` chooses another root. Its
``manifest.json`` records the source weights' fingerprint, the library versions and the
SHA-256 of the ONNX file, which enters every run's identity
(:func:`mathir.experiment.identity.pipeline_identity`): a run made with int8 never passes for
a float32 run.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mathir.errors import InputError
from mathir.models import offline, resolve_model
from mathir.neural.backends import (
    BI_ENCODER,
    CROSS_ENCODER,
    check_backend,
    query_backend,
    require_onnx,
    runtime,
)
from mathir.neural.calibration import calibration_texts
from mathir.neural.tokenizing import Tokenize

EXPORT_FORMAT = 1


def export_root(model_path: str | Path) -> Path:
    """Where the exports of the model at ``model_path`` are cached (see the module doc).

    >>> before = os.environ.get("MATHIR_EXPORT_DIR")
    >>> os.environ["MATHIR_EXPORT_DIR"] = "/tmp/exports"
    >>> export_root("/models/minilm").as_posix().startswith("/tmp/exports/minilm-")
    True
    >>> if before is None: del os.environ["MATHIR_EXPORT_DIR"]
    ... else: os.environ["MATHIR_EXPORT_DIR"] = before
    """
    src = Path(model_path).expanduser().resolve()
    named = f"{src.name}-{model_key(src)}"
    if os.environ.get("MATHIR_EXPORT_DIR"):
        return Path(os.environ["MATHIR_EXPORT_DIR"]).expanduser() / named
    beside = src.parent / f"{src.name}.mathir-export"
    if beside.is_dir() or os.access(src.parent, os.W_OK):
        return beside
    from mathir.storage import cache_dir

    return cache_dir() / "exports" / named


def export_dir(model_path: str | Path, backend: str, kind: str = BI_ENCODER) -> Path:
    """The folder of one export: ``<export root>/<kind>-<backend>``."""
    return export_root(model_path) / f"{kind}-{check_backend(backend)}"


@dataclass(frozen=True)
class Exported:
    """An exported model: its folder, ONNX file and the manifest's settings."""

    path: Path
    manifest: dict

    @property
    def onnx_file(self) -> Path:
        return self.path / self.manifest["file"]

    @property
    def sha256(self) -> str:
        """SHA-256 of the exported model (what the run identity records): of the ONNX
        file, or for OpenVINO of its ``.xml`` then its ``.bin`` (:func:`model_sha256`)."""
        return self.manifest["onnx_sha256"]

    @property
    def runtime(self) -> str:
        """``onnxruntime`` or ``openvino``."""
        return runtime(self.manifest["backend"])

    def identity(self) -> dict:
        """What a run made with this export is identified by."""
        m = self.manifest
        return {"backend": m["backend"], "kind": m["model_kind"], "source": m["source"],
                "onnx_sha256": m["onnx_sha256"]}


def _versions(backend: str) -> dict:
    """Versions of the libraries that make and run an export of ``backend`` (only those:
    installing OpenVINO does not invalidate the ONNX Runtime exports)."""
    from importlib import metadata

    out = {}
    tools = ("openvino", "nncf") if runtime(backend) == "openvino" else ("onnx", "onnxruntime")
    for name in ("torch", "transformers") + tools:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def _weights(model_path: Path) -> dict:
    """Fingerprints of the model's weight files (what an export is made from)."""
    from mathir.storage import file_fingerprint

    files = sorted(p for p in model_path.iterdir()
                   if p.suffix in (".safetensors", ".bin") and p.is_file())
    if not files:
        raise InputError("no weights (*.safetensors or *.bin) in the model folder",
                         path=model_path)
    return {p.name: {"size": p.stat().st_size, "sha256": file_fingerprint(p)["sha256"]}
            for p in files}


def _st_settings(model_path: Path) -> dict:
    """Pooling, normalisation and sequence length from a sentence-transformers folder."""
    modules = _read_json(model_path / "modules.json") or []
    pooling, normalize = "mean", False
    for m in modules:
        kind = m.get("type", "")
        if kind.endswith("Pooling"):
            modes = _pooling_modes(
                _read_json(model_path / m.get("path", "") / "config.json") or {})
            if modes not in (["cls"], ["mean"]):
                raise InputError(f"pooling {' + '.join(modes) or 'none'} is not supported by "
                                 "the ONNX backends (mean or CLS only); use backend='torch'",
                                 path=model_path)
            pooling = modes[0]
        elif kind.endswith("Normalize"):
            normalize = True
        elif not kind.endswith("Transformer") and kind:
            raise InputError(f"module {kind} is not supported by the ONNX backends; use "
                             "backend='torch'", path=model_path)
    st_cfg = _read_json(model_path / "sentence_bert_config.json") or {}
    return {"pooling": pooling, "normalize": normalize,
            "max_length": int(st_cfg.get("max_seq_length") or 0) or None}


def _pooling_modes(config: dict) -> list[str]:
    """The pooling modes a sentence-transformers Pooling config names, in either format:
    ``"pooling_mode": "mean"`` (or a list), as sentence-transformers 6 saves it, or the
    older ``"pooling_mode_mean_tokens": true`` flags (before, a model saved by version 6 was
    refused as "pooling mean is not supported").

    >>> _pooling_modes({"pooling_mode": "mean"}), _pooling_modes({"pooling_mode": ["cls"]})
    (['mean'], ['cls'])
    >>> _pooling_modes({"pooling_mode_cls_token": True, "pooling_mode_mean_tokens": False})
    ['cls']
    """
    named = config.get("pooling_mode")
    if named is not None:
        return [named] if isinstance(named, str) else [str(m) for m in named]
    legacy = {"cls_token": "cls", "mean_tokens": "mean", "max_tokens": "max",
              "mean_sqrt_len_tokens": "mean_sqrt_len_tokens",
              "weightedmean_tokens": "weightedmean", "lasttoken": "lasttoken"}
    return [mode for key, mode in legacy.items() if config.get(f"pooling_mode_{key}")]


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def export(model_path: str | Path, backend: str, kind: str = BI_ENCODER, *,
           quiet: bool = True) -> Exported:
    """The ONNX export of the model at ``model_path`` for ``backend`` (made on first use).

    ``kind`` is :data:`BI_ENCODER` (last hidden state, pooled here) or
    :data:`CROSS_ENCODER` (the classification logits).
    """
    backend = check_backend(backend)
    if backend == "torch":
        raise ValueError("the torch backend needs no export")
    require_onnx(f"backend {backend!r}", backend)
    from mathir.storage import build_or_reuse, read_manifest

    src = Path(model_path).expanduser().resolve()
    path = export_dir(src, backend, kind)
    wanted = {"kind": "onnx-export", "format": EXPORT_FORMAT, "backend": backend,
              "model_kind": kind, "source": {"path": str(src), "weights": _weights(src)},
              "versions": _versions(backend)}

    def build_into(tmp: Path) -> dict:
        return _export_into(src, tmp, backend, kind, quiet)

    build_or_reuse(path, wanted, build_into)
    return Exported(path, read_manifest(path))


def _export_into(src: Path, tmp: Path, backend: str, kind: str, quiet: bool) -> dict:
    import torch
    from transformers import (
        AutoConfig,
        AutoModel,
        AutoModelForSequenceClassification,
        AutoTokenizer,
    )

    from mathir.storage import sha256_file

    offline()
    tokenizer = AutoTokenizer.from_pretrained(str(src), use_fast=True)
    if not getattr(tokenizer, "is_fast", False):
        raise InputError("the ONNX backends need a fast (Rust) tokenizer", path=src)
    tokenizer.backend_tokenizer.save(str(tmp / "tokenizer.json"))
    config = AutoConfig.from_pretrained(str(src))
    cls = AutoModel if kind == BI_ENCODER else AutoModelForSequenceClassification
    inputs = [n for n in ("input_ids", "attention_mask", "token_type_ids")
              if n in tokenizer.model_input_names]
    output = "last_hidden_state" if kind == BI_ENCODER else "logits"
    settings: dict[str, Any] = {"inputs": inputs, "output": output,
                                "pad_id": int(tokenizer.pad_token_id or 0),
                                "pad_token": str(tokenizer.pad_token or "[PAD]"),
                                "model_max_length": int(min(tokenizer.model_max_length, 1 << 20))}
    if kind == BI_ENCODER:
        settings.update(_st_settings(src))
    else:
        settings["num_labels"] = int(config.num_labels)
        settings["activation"] = _activation_name(config)
    sample = tokenizer(["an example $x^2$", "b"], padding=True, return_tensors="pt")
    openvino = runtime(backend) == "openvino"
    # OpenVINO converts PyTorch's scaled-dot-product attention to one operation; the ONNX
    # graph is fused from the eager attention's operations
    model = cls.from_pretrained(str(src), attn_implementation="sdpa" if openvino else "eager",
                                torch_dtype=torch.float32).eval()
    if openvino:
        files = _openvino_export(model, dict(sample), tmp, backend, kind, settings, output)
        return {"file": files[0].name, "onnx_sha256": model_sha256(files),
                "graph_fused": False, "bytes": sum(f.stat().st_size for f in files),
                "settings": settings}

    class Wrapper(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, *args):
            return getattr(self.inner(**dict(zip(inputs, args, strict=True))), output)

    wrapper = Wrapper(model).eval()
    raw = tmp / "raw.onnx"
    axes = {n: {0: "batch", 1: "sequence"} for n in inputs}
    axes[output] = {0: "batch", 1: "sequence"} if kind == BI_ENCODER else {0: "batch"}
    with torch.no_grad():
        torch.onnx.export(wrapper, tuple(sample[n] for n in inputs), str(raw),
                          input_names=inputs, output_names=[output], dynamic_axes=axes,
                          opset_version=17, do_constant_folding=True, dynamo=False)
    fused = tmp / "model.onnx"
    model_type = getattr(config, "model_type", "")
    optimised = False
    if model_type in ("bert", "roberta", "xlm-roberta", "distilbert", "mpnet", "electra"):
        from onnxruntime.transformers import optimizer

        opt_type = "bert" if model_type in ("roberta", "xlm-roberta", "mpnet", "electra") \
            else model_type
        opt = optimizer.optimize_model(str(raw), model_type=opt_type,
                                       num_heads=int(config.num_attention_heads),
                                       hidden_size=int(config.hidden_size), opt_level=1)
        opt.save_model_to_file(str(fused))
        optimised = True
    else:
        shutil.copyfile(raw, fused)
    raw.unlink()
    file = fused
    if backend == "onnx-int8":
        from onnxruntime.quantization import QuantType, quantize_dynamic

        file = tmp / "model_int8.onnx"
        import onnx

        # the fused operators (com.microsoft domain) have no shape inference: their
        # outputs are float32
        quantize_dynamic(str(fused), str(file), weight_type=QuantType.QInt8, per_channel=True,
                         extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
        fused.unlink()
    return {"file": file.name, "onnx_sha256": sha256_file(file), "graph_fused": optimised,
            "bytes": file.stat().st_size, "settings": settings}



def model_sha256(files: Sequence[Path]) -> str:
    """SHA-256 of ``files`` read one after the other (an OpenVINO model: .xml then .bin)."""
    h = hashlib.sha256()
    for f in files:
        with open(f, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    return h.hexdigest()


def _openvino_export(hf_model, example: dict, tmp: Path, backend: str, kind: str,
                     settings: dict, output: str) -> list[Path]:
    """The transformers model ``hf_model`` as an OpenVINO model in ``tmp`` (``model.xml``
    and ``model.bin``), quantised to int8 by NNCF for ``openvino-int8``; its files.

    Converted from PyTorch (scaled-dot-product attention) rather than from the ONNX
    export: OpenVINO then keeps the attention as one operation that its CPU plugin fuses
    (in int8, measured 10% faster than the model read from the ONNX export, with vectors
    as close to PyTorch's: min cosine 0.993 against 0.994 on 240 real passages).
    """
    import openvino as ov
    import torch

    class Named(torch.nn.Module):
        # the model's inputs by name, so that the OpenVINO model's inputs carry them
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask, token_type_ids=None):
            kw = {"input_ids": input_ids, "attention_mask": attention_mask}
            if token_type_ids is not None:
                kw["token_type_ids"] = token_type_ids
            return getattr(self.inner(**kw), output)

    with torch.no_grad():
        model = ov.convert_model(Named(hf_model).eval(),
                                 example_input={n: example[n] for n in settings["inputs"]})
    model.reshape({port.get_any_name(): ov.PartialShape([-1, -1]) for port in model.inputs})
    if backend == "openvino-int8":
        import nncf

        max_length = int(settings.get("max_length") or min(settings["model_max_length"], 256))
        tokenize = Tokenize(str(tmp / "tokenizer.json"), max_length,
                            tuple(settings["inputs"]), settings["pad_id"],
                            settings["pad_token"])
        # one text an item: the activation statistics see no padding
        items = [tokenize([t]) for t in calibration_texts(kind)]
        model = nncf.quantize(model, nncf.Dataset(items), subset_size=len(items),
                              model_type=nncf.ModelType.TRANSFORMER)
    xml = tmp / "model.xml"
    ov.save_model(model, str(xml), compress_to_fp16=False)
    return [xml, xml.with_suffix(".bin")]


def _activation_name(config) -> str:
    """``sigmoid`` or ``identity``: what ``CrossEncoder.predict`` applies to the logits."""
    path = (getattr(config, "sentence_transformers", None) or {}).get("activation_fn") \
        or getattr(config, "sbert_ce_default_activation_function", None)
    if path is None:
        return "sigmoid" if int(config.num_labels) == 1 else "identity"
    name = path.rsplit(".", 1)[-1]
    if name in ("Sigmoid", "Identity"):
        return name.lower()
    raise InputError(f"cross-encoder activation {path!r} is not supported by the ONNX "
                     "backends; use backend='torch'")



def model_key(model_path: str | Path) -> str:
    """A short, stable name for a model path (in the names of exports and dense indexes).

    >>> len(model_key("/models/minilm"))
    10
    """
    return hashlib.sha1(str(Path(model_path).expanduser().resolve()).encode()).hexdigest()[:10]


def backend_identity(factory: Any, kwargs: dict) -> dict | None:
    """What a run of ``factory(index, **kwargs)`` adds to its identity for its backend:
    None for torch, else the backend and the identity (weights, ONNX file SHA-256) of every
    model it exports (exported now when not cached yet).

    The models: a factory's ``encoders`` attribute names them (``bi-encoder``,
    ``cross-encoder``); by default the bi-encoder (``model``, default the packaged MiniLM)
    and, when given, ``cross_encoder``.
    """
    backend = check_backend(kwargs.get("backend"))
    if backend == "torch":
        return None
    kinds = getattr(factory, "encoders", None) or (
        (BI_ENCODER,) + ((CROSS_ENCODER,) if kwargs.get("cross_encoder") else ()))
    models = {}
    for kind in kinds:
        source = kwargs.get("model") if kind == BI_ENCODER else kwargs.get("cross_encoder")
        if kind == CROSS_ENCODER and not source:
            continue
        models[kind] = export(resolve_model(source), backend, kind).identity()
        if kind == BI_ENCODER and query_backend(backend) != backend:
            models[BI_ENCODER + " queries"] = export(
                resolve_model(source), query_backend(backend), kind).identity()
    return {"backend": backend, "models": models}



__all__ = ["EXPORT_FORMAT", "Exported", "backend_identity", "export", "export_dir",
           "export_root", "model_key", "model_sha256"]
