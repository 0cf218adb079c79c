"""CPU backends for the bi- and cross-encoders: ONNX Runtime or OpenVINO, float32 or int8.

One argument picks how a model computes (``backend=``; ``--backend`` on the CLI):

* ``torch`` (default): sentence-transformers on PyTorch, float32, as before;
* ``onnx``: the model exported to ONNX locally from its own weights (``torch.onnx``),
  its graph fused for BERT-like models (``onnxruntime.transformers.optimizer``: fused
  attention, skip-layer-norm, GELU), run by ONNX Runtime in float32;
* ``onnx-int8``: the same graph with its weights dynamically quantised to 8-bit integers
  (``onnxruntime.quantization.quantize_dynamic``, per channel); on a CPU with AVX-512 VNNI
  or AVX2 the matrix products then run on integers;
* ``openvino``: the model converted from PyTorch by OpenVINO (``openvino.convert_model``)
  and run by its CPU runtime in float32 (inference precision pinned to f32, so that a CPU
  with bf16 units computes the same);
* ``openvino-int8``: that model quantised statically, weights and activations, by NNCF's
  post-training quantisation for transformers (SmoothQuant, fast bias correction),
  calibrated on the texts of mathir's embedded ARQMath sample (:func:`calibration_texts`),
  so that every machine makes the same export from the same weights.

Nothing is downloaded and optimum is not needed. An export is made once per model and
backend and cached (:func:`export_dir`): beside the model's folder when its parent folder
can be written (``<model>.mathir-export/<backend>/``), else under mathir's cache
(``$MATHIR_CACHE_DIR/exports``); ``$MATHIR_EXPORT_DIR`` chooses another root. Its
``manifest.json`` records the source weights' fingerprint, the library versions and the
SHA-256 of the ONNX file, which enters every run's identity
(:func:`mathir.runs.provenance.pipeline_identity`): a run made with int8 never passes for
a float32 run.

Texts are tokenised by the Rust ``tokenizers`` library directly (``encode_batch``), not
through transformers' Python layer, in batches sorted by length as sentence-transformers
does; ``workers=N`` tokenises in N processes ahead of the model (worth it where the model
is faster than one core's tokenising: on a GPU). The encoders follow the model's
sentence-transformers modules (mean or CLS pooling, Normalize) and the cross-encoder's
activation (sigmoid for one-logit models, as ``CrossEncoder.predict``).

>>> check_backend("onnx-int8")
'onnx-int8'
>>> check_backend("tensorrt")
Traceback (most recent call last):
mathir.errors.InputError: unknown backend 'tensorrt'; expected one of torch, onnx, onnx-int8, openvino, openvino-int8
"""

from __future__ import annotations

import collections
import functools
import hashlib
import json
import os
import shutil
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mathir.errors import InputError
from mathir.models import (
    BI_ENCODER_MODULES,
    model_fingerprint,
    model_identity,
    offline,
    require_extra,
    resolve_model,
    torch_device,
)

#: backend -> what it is, in words
BACKENDS = {"torch": "PyTorch (sentence-transformers), float32",
            "onnx": "ONNX Runtime, float32, fused graph (exported locally)",
            "onnx-int8": "ONNX Runtime, int8 dynamic quantisation (exported locally)",
            "openvino": "OpenVINO, float32 (converted locally from the weights)",
            "openvino-int8": "OpenVINO, int8 static quantisation by NNCF, calibrated on "
                             "the embedded sample (exported locally)"}
EXPORT_FORMAT = 1
#: the modules an ONNX Runtime backend needs (in the `neural` extra)
ONNX_MODULES = ("torch", "transformers", "onnx", "onnxruntime")
#: the modules the OpenVINO backends need (in the `neural` extra; nncf for int8 only)
OPENVINO_MODULES = ("torch", "transformers", "openvino")
BI_ENCODER = "bi-encoder"
CROSS_ENCODER = "cross-encoder"
#: the float32 backend that encodes a bi-encoder's queries for an int8 backend: queries
#: are few (one a topic), so their vectors are computed exactly while the passages' are
#: int8; on the 2022 pool this took openvino-int8's nDCG' difference to torch from -0.0074
#: to -0.0012 (docs/neural.md)
QUERY_BACKENDS = {"onnx-int8": "onnx", "openvino-int8": "openvino"}


def query_backend(backend: str | None) -> str:
    """The backend that encodes a bi-encoder's queries when ``backend`` encodes its passages.

    >>> query_backend("openvino-int8"), query_backend("onnx"), query_backend(None)
    ('openvino', 'onnx', 'torch')
    """
    backend = check_backend(backend)
    return QUERY_BACKENDS.get(backend, backend)


def check_backend(backend: str | None) -> str:
    """``backend`` when it is one of :data:`BACKENDS` (None: ``torch``), else InputError."""
    backend = backend or "torch"
    if backend not in BACKENDS:
        raise InputError(f"unknown backend {backend!r}; expected one of {', '.join(BACKENDS)}")
    return backend


def runtime(backend: str) -> str:
    """``onnxruntime`` or ``openvino``: what runs an exported ``backend``.

    >>> runtime("onnx-int8"), runtime("openvino")
    ('onnxruntime', 'openvino')
    """
    return "openvino" if check_backend(backend).startswith("openvino") else "onnxruntime"


def require_onnx(what: str = "an ONNX backend", backend: str = "onnx") -> None:
    """InputError naming the ``neural`` extra when a module ``backend`` needs is missing
    (onnx and onnxruntime; openvino, and nncf for ``openvino-int8``)."""
    if runtime(backend) == "onnxruntime":
        modules = ONNX_MODULES
    else:
        modules = OPENVINO_MODULES + (("nncf",) if backend == "openvino-int8" else ())
    require_extra("neural", what, modules)


def export_root(model_path: str | Path) -> Path:
    """Where the exports of the model at ``model_path`` are cached (see the module doc).

    >>> os.environ["MATHIR_EXPORT_DIR"] = "/tmp/exports"
    >>> export_root("/models/minilm").as_posix().startswith("/tmp/exports/minilm-")
    True
    >>> del os.environ["MATHIR_EXPORT_DIR"]
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
            cfg = _read_json(model_path / m.get("path", "") / "config.json") or {}
            modes = [k for k in ("cls_token", "mean_tokens", "max_tokens",
                                 "mean_sqrt_len_tokens", "weightedmean_tokens",
                                 "lasttoken") if cfg.get(f"pooling_mode_{k}")]
            if modes not in (["cls_token"], ["mean_tokens"]):
                raise InputError(f"pooling {modes or cfg.get('pooling_mode')} is not supported "
                                 "by the ONNX backends (mean or CLS only); use backend='torch'",
                                 path=model_path)
            pooling = "cls" if modes == ["cls_token"] else "mean"
        elif kind.endswith("Normalize"):
            normalize = True
        elif not kind.endswith("Transformer") and kind:
            raise InputError(f"module {kind} is not supported by the ONNX backends; use "
                             "backend='torch'", path=model_path)
    st_cfg = _read_json(model_path / "sentence_bert_config.json") or {}
    return {"pooling": pooling, "normalize": normalize,
            "max_length": int(st_cfg.get("max_seq_length") or 0) or None}


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


#: how many texts calibrate an int8 OpenVINO export
CALIBRATION_TEXTS = 300


def calibration_texts(kind: str = BI_ENCODER, n: int = CALIBRATION_TEXTS) -> list:
    """The texts that calibrate an ``openvino-int8`` export, the same on every machine.

    The embedded ARQMath sample's answers (mathir's own text, with their questions'
    titles), alone and joined two to four at a time, so that their lengths reach the
    model's limit as real passages do, in a fixed random order; for a cross-encoder,
    ``(question title, answer)`` pairs, half of them from the same thread.

    >>> texts = calibration_texts(n=8)
    >>> len(texts), all(isinstance(t, str) for t in texts)
    (8, True)
    >>> [len(p) for p in calibration_texts(CROSS_ENCODER, n=3)]
    [2, 2, 2]
    """
    from mathir.indexing.answer_index import AnswerCollection
    from mathir.samples import arqmath_sample

    coll = AnswerCollection.at(arqmath_sample().posts)
    titled = [a["text"] for a in coll.iter_answers(with_title=True)]
    bare = [a["text"] for a in coll.iter_answers(with_title=False)]
    rng = np.random.default_rng(0)
    out: list = []
    for i in range(n):
        if kind == CROSS_ENCODER:
            j = int(rng.integers(len(bare)))
            k = j if i % 2 == 0 else int(rng.integers(len(bare)))
            title = titled[j][:max(0, len(titled[j]) - len(bare[j]))].strip()
            out.append((title or bare[j][:80], bare[k]))
        else:
            pick = rng.choice(len(titled), 1 + i % 4, replace=False)
            out.append(" ".join(titled[j] for j in pick))
    return out


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


# --- tokenising ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Tokenize:
    """Picklable tokeniser: ``tokenizer.json`` + truncation -> padded numpy arrays.

    Called with a list of texts (or of ``(query, text)`` pairs) it returns a dict of
    int64 arrays named as the model's inputs. Worker processes get this object and load
    the tokenizer once.
    """

    file: str
    max_length: int
    inputs: tuple[str, ...]
    pad_id: int
    pad_token: str

    def _load(self, padding: bool):
        from tokenizers import Tokenizer

        tok = Tokenizer.from_file(self.file)
        tok.enable_truncation(self.max_length, strategy="longest_first")
        if padding:
            tok.enable_padding(pad_id=self.pad_id, pad_token=self.pad_token)
        else:  # the file may carry a padding of its own
            tok.no_padding()
        return tok

    @functools.cached_property
    def tokenizer(self):
        """Truncating and padding to the batch's longest text."""
        return self._load(padding=True)

    @functools.cached_property
    def unpadded_tokenizer(self):
        """Truncating, not padding."""
        return self._load(padding=False)

    def __getstate__(self) -> dict:
        # the loaded tokenizers stay behind: a worker loads its own once, instead of
        # receiving them with every task
        return {k: v for k, v in self.__dict__.items()
                if k not in ("tokenizer", "unpadded_tokenizer")}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)

    def unpadded(self, texts: Sequence) -> list[tuple[list[int], list[int]]]:
        """Each text's (ids, type ids), truncated and not padded."""
        return [(e.ids, e.type_ids) for e in self.unpadded_tokenizer.encode_batch(list(texts))]

    def pad(self, rows: Sequence[tuple[list[int], list[int]]]) -> dict[str, np.ndarray]:
        """:meth:`unpadded` rows as the padded arrays :meth:`__call__` returns.

        >>> t = Tokenize("unused.json", 8, ("input_ids", "attention_mask"), 0, "[PAD]")
        >>> {k: v.tolist() for k, v in t.pad([([5, 6, 7], [0, 0, 0]), ([8], [0])]).items()}
        {'input_ids': [[5, 6, 7], [8, 0, 0]], 'attention_mask': [[1, 1, 1], [1, 0, 0]]}
        """
        width = max((len(ids) for ids, _ in rows), default=0)
        ids = np.full((len(rows), width), self.pad_id, dtype=np.int64)
        mask = np.zeros((len(rows), width), dtype=np.int64)
        types = np.zeros((len(rows), width), dtype=np.int64)
        for i, (row, type_ids) in enumerate(rows):
            ids[i, :len(row)] = row
            mask[i, :len(row)] = 1
            types[i, :len(type_ids)] = type_ids
        out = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        return {k: out[k] for k in self.inputs}

    def __call__(self, texts: Sequence) -> dict[str, np.ndarray]:
        encs = self.tokenizer.encode_batch(list(texts))
        out = {"input_ids": np.array([e.ids for e in encs], dtype=np.int64),
               "attention_mask": np.array([e.attention_mask for e in encs], dtype=np.int64)}
        if "token_type_ids" in self.inputs:
            out["token_type_ids"] = np.array([e.type_ids for e in encs], dtype=np.int64)
        return {k: out[k] for k in self.inputs}


def _length_order(texts: Sequence) -> np.ndarray:
    """Longest first, as sentence-transformers batches (less padding per batch)."""
    lengths = [len(t) if isinstance(t, str) else sum(map(len, t)) for t in texts]
    return np.argsort([-n for n in lengths], kind="stable")


def tokenized_batches(tokenize: Tokenize, texts: Sequence, batch_size: int,
                      workers: int = 0) -> Iterator[dict[str, np.ndarray]]:
    """``tokenize`` applied to consecutive ``batch_size`` slices of ``texts``, in order.

    With ``workers`` > 0 the slices are tokenised in that many processes (forked where the
    system can; each loads the tokenizer once), at most ``2 * workers`` batches ahead of
    the consumer.
    """
    chunks = [texts[i:i + batch_size] for i in range(0, len(texts), batch_size)]
    if workers <= 0 or len(chunks) < 2:
        for chunk in chunks:
            yield tokenize(chunk)
        return
    pool = _pool(tokenize, workers)
    window: list = []
    it = iter(chunks)
    for chunk in it:
        window.append(pool.apply_async(tokenize, (chunk,)))
        if len(window) >= 2 * workers:
            break
    for chunk in it:
        yield window.pop(0).get()
        window.append(pool.apply_async(tokenize, (chunk,)))
    for res in window:
        yield res.get()


@functools.lru_cache(maxsize=2)
def _pool(tokenize: Tokenize, workers: int):
    """A process pool kept for the process's life (spawned once per tokenizer and size)."""
    import atexit
    import multiprocessing

    # fork where there is one (as torch's DataLoader): a spawned child would import the
    # user's script again, which breaks scripts without a __main__ guard
    methods = multiprocessing.get_all_start_methods()
    pool = multiprocessing.get_context("fork" if "fork" in methods else "spawn").Pool(workers)
    atexit.register(pool.terminate)
    return pool


# --- ONNX Runtime models -------------------------------------------------------------------


class OnnxModel:
    """An :class:`Exported` model with its tokeniser, in an ONNX Runtime session or, for
    the OpenVINO backends, compiled by OpenVINO for the CPU.

    ``threads``: the runtime's threads (default: torch's thread count, so that every
    backend uses the same cores); ``max_length``: truncation (default: the model's).
    """

    def __init__(self, exported: Exported, threads: int | None = None,
                 max_length: int | None = None, workers: int = 0):
        s = exported.manifest["settings"]
        self.exported = exported
        self.settings = s
        self.workers = workers
        self.max_length = int(max_length or s.get("max_length") or s["model_max_length"])
        self.tokenize = Tokenize(str(exported.path / "tokenizer.json"), self.max_length,
                                 tuple(s["inputs"]), s["pad_id"], s["pad_token"])
        if exported.runtime == "openvino":
            import openvino as ov

            compiled = ov.Core().compile_model(str(exported.onnx_file), "CPU", {
                "INFERENCE_NUM_THREADS": str(threads or _torch_threads()),
                # several streams of a thread or two each, fed by as many requests in
                # flight (``outputs``): up to 4% more passages/s than one request on both
                # cores in interleaved measurements (batches of 8-16; none at 32)
                "PERFORMANCE_HINT": "THROUGHPUT",
                # flush denormal floats to zero, in OpenVINO's threads only (about 2% in
                # one interleaved measurement)
                "CPU_DENORMALS_OPTIMIZATION": "YES",
                # the same arithmetic on every CPU: OpenVINO would pick bf16 on one with
                # AMX or AVX-512 BF16 units
                "INFERENCE_PRECISION_HINT": "f32"})
            n = max(1, int(compiled.get_property("OPTIMAL_NUMBER_OF_INFER_REQUESTS")))
            self._requests = [compiled.create_infer_request() for _ in range(n)]
            self._output = compiled.output(0)
            self.session = None
            return
        import onnxruntime as ort

        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        opts.intra_op_num_threads = threads or _torch_threads()
        opts.inter_op_num_threads = 1
        # ONNX Runtime's threads spin while waiting for work by default: on a machine
        # whose cores other jobs share, that burns the CPU time the model needs
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.session = ort.InferenceSession(str(exported.onnx_file), opts,
                                            providers=["CPUExecutionProvider"])

    def outputs(self, texts: Sequence, batch_size: int
                ) -> Iterator[tuple[np.ndarray, dict, np.ndarray]]:
        """(positions, inputs, model output) for each batch of :meth:`batches`.

        OpenVINO runs several batches at once, one per infer request (see ``__init__``);
        they are started in order and their outputs read back in that order.
        """
        if self.session is not None:
            for positions, feeds in self.batches(texts, batch_size):
                yield positions, feeds, self.session.run(None, feeds)[0]
            return
        pending: collections.deque = collections.deque()
        free = list(self._requests)
        for positions, feeds in self.batches(texts, batch_size):
            if not free:
                yield self._finish(pending.popleft(), free)
            request = free.pop()
            request.start_async(feeds)
            pending.append((request, positions, feeds))
        while pending:
            yield self._finish(pending.popleft(), free)

    def _finish(self, item: tuple, free: list) -> tuple[np.ndarray, dict, np.ndarray]:
        request, positions, feeds = item
        request.wait()
        out = request.get_tensor(self._output).data.copy()
        free.append(request)
        return positions, feeds, out

    def batches(self, texts: Sequence, batch_size: int) -> Iterator[tuple[np.ndarray, dict]]:
        """(positions, padded inputs) per batch of ``batch_size`` texts, the texts with the
        most word pieces first (tokenised in ``workers`` processes when > 0)."""
        if self.workers > 0 and len(texts) > batch_size:
            chunks = [texts[i:i + batch_size] for i in range(0, len(texts), batch_size)]
            rows = [r for part in _pool(self.tokenize, self.workers).map(
                self.tokenize.unpadded, chunks) for r in part]
        else:
            rows = self.tokenize.unpadded(texts)
        # longest first by word pieces, not characters (sentence-transformers' order): a
        # formula's LaTeX takes many word pieces a character, so ordering by characters
        # left 16% of the batches' positions padding on real passages in batches of 32,
        # this 1% (chunks of 2,048 passages, as DenseAnswerIndex.build encodes them)
        order = np.argsort([-len(ids) for ids, _ in rows], kind="stable")
        for start in range(0, len(order), batch_size):
            positions = order[start:start + batch_size]
            yield positions, self.tokenize.pad([rows[i] for i in positions])


def _torch_threads() -> int:
    try:
        import torch

        return int(torch.get_num_threads())
    except ImportError:  # pragma: no cover - the neural extra brings torch
        return os.cpu_count() or 1


def pool_embeddings(hidden: np.ndarray, mask: np.ndarray, pooling: str,
                    normalize: bool) -> np.ndarray:
    """Sentence embeddings from token embeddings, as sentence-transformers' Pooling and
    Normalize modules compute them.

    >>> h = np.array([[[1.0, 0.0], [3.0, 4.0], [9.0, 9.0]]]); m = np.array([[1, 1, 0]])
    >>> pool_embeddings(h, m, "mean", False).tolist(), pool_embeddings(h, m, "cls", True).tolist()
    ([[2.0, 2.0]], [[1.0, 0.0]])
    """
    if pooling == "cls":
        out = hidden[:, 0]
    else:
        m = mask[..., None].astype(hidden.dtype)
        out = (hidden * m).sum(1) / np.clip(m.sum(1), 1e-9, None)
    if normalize:
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        out = out / np.clip(norms, 1e-12, None)
    return out.astype(np.float32)


class OnnxSentenceEncoder(OnnxModel):
    """Bi-encoder embeddings through ONNX Runtime (:meth:`encode`)."""

    def encode(self, texts: Iterable[str], batch_size: int = 32) -> np.ndarray:
        texts = list(texts)
        out = np.zeros((len(texts), 0), dtype=np.float32)
        for positions, feeds, hidden in self.outputs(texts, batch_size):
            vecs = pool_embeddings(hidden, feeds["attention_mask"],
                                   self.settings["pooling"], self.settings["normalize"])
            if out.shape[1] == 0:
                out = np.zeros((len(texts), vecs.shape[1]), dtype=np.float32)
            out[positions] = vecs
        return out


class OnnxCrossEncoder(OnnxModel):
    """Cross-encoder scores through ONNX Runtime: ``predict`` as ``CrossEncoder.predict``."""

    def predict(self, pairs: Sequence[tuple[str, str]], batch_size: int = 32,
                show_progress_bar: bool = False) -> np.ndarray:
        pairs = [tuple(p) for p in pairs]
        scores = np.zeros(len(pairs), dtype=np.float32)
        for positions, _, logits in self.outputs(pairs, batch_size):
            if logits.shape[1] != 1:
                raise InputError("the ONNX cross-encoder scores one-logit models only")
            s = logits[:, 0]
            if self.settings["activation"] == "sigmoid":
                s = 1.0 / (1.0 + np.exp(-s))
            scores[positions] = s
        return scores


def bi_encoder_model(model_path: str | Path, backend: str, workers: int = 0,
                     threads: int | None = None) -> OnnxSentenceEncoder:
    """The ONNX bi-encoder for ``backend`` (exported on first use)."""
    return OnnxSentenceEncoder(export(model_path, backend, BI_ENCODER), threads=threads,
                               workers=workers)


def cross_encoder_model(model_path: str | Path, backend: str, max_length: int = 256,
                        workers: int = 0, threads: int | None = None) -> OnnxCrossEncoder:
    """The ONNX cross-encoder for ``backend`` (exported on first use)."""
    return OnnxCrossEncoder(export(model_path, backend, CROSS_ENCODER), threads=threads,
                            max_length=max_length, workers=workers)


def torch_encode(st, tokenize: Tokenize, texts: Sequence[str], batch_size: int,
                 workers: int) -> np.ndarray:
    """A sentence-transformers model's embeddings, its texts tokenised by ``tokenize``
    (in ``workers`` processes when > 0): the torch backend with tokenising spread out."""
    import torch

    texts = list(texts)
    order = _length_order(texts)
    ordered = [texts[i] for i in order]
    device = st.device
    parts = []
    with torch.inference_mode():
        for feeds in tokenized_batches(tokenize, ordered, batch_size, workers):
            features = {k: torch.from_numpy(v).to(device, non_blocking=True)
                        for k, v in feeds.items()}
            parts.append(st.forward(features)["sentence_embedding"].float().cpu().numpy())
    out = np.empty((len(texts), parts[0].shape[1] if parts else 0), dtype=np.float32)
    if parts:
        out[order] = np.concatenate(parts)
    return out


def st_tokenize(st) -> Tokenize:
    """A :class:`Tokenize` equal to a sentence-transformers model's own tokenising."""
    tok = st.tokenizer
    path = Path(_tokenizer_cache(tok))
    inputs = tuple(n for n in ("input_ids", "attention_mask", "token_type_ids")
                   if n in tok.model_input_names)
    return Tokenize(str(path), int(st.max_seq_length), inputs, int(tok.pad_token_id or 0),
                    str(tok.pad_token or "[PAD]"))


def _tokenizer_cache(tok) -> str:
    import hashlib
    import tempfile

    text = tok.backend_tokenizer.to_str()
    path = Path(tempfile.gettempdir()) / \
        f"mathir-tokenizer-{hashlib.sha1(text.encode()).hexdigest()[:16]}.json"
    if not path.exists():
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    return str(path)


__all__ = ["BACKENDS", "BI_ENCODER", "CROSS_ENCODER", "Exported", "OnnxCrossEncoder",
           "OnnxSentenceEncoder", "Tokenize", "bi_encoder_model", "check_backend",
           "cross_encoder_model", "export", "export_dir", "export_root", "pool_embeddings",
           "require_onnx", "st_tokenize", "tokenized_batches", "torch_encode",
           "calibration_texts", "model_sha256", "runtime", "QUERY_BACKENDS", "query_backend"]


@functools.lru_cache(maxsize=1)
def _dr_classes():
    """pyterrier-dr bi-encoders for the ONNX backends and for torch with tokenising workers
    (defined on first use: pyterrier-dr imports torch)."""
    import pyterrier_dr

    class OnnxBiEncoder(pyterrier_dr.BiEncoder):
        """A ``pyterrier_dr.BiEncoder`` computing with ONNX Runtime."""

        def __init__(self, model_path: str, backend: str, batch_size: int = 32,
                     workers: int = 0, verbose: bool = False):
            super().__init__(batch_size=batch_size, verbose=verbose)
            self.model_name = model_path
            self.backend = backend
            self.onnx = bi_encoder_model(model_path, backend, workers=workers)

        @functools.cached_property
        def query_onnx(self) -> OnnxSentenceEncoder:
            """The model that encodes queries (:func:`query_backend`; exported on first
            use, so that building an index exports only the passages' model)."""
            if query_backend(self.backend) == self.backend:
                return self.onnx
            return bi_encoder_model(self.model_name, query_backend(self.backend))

        def __repr__(self) -> str:
            return (f"OnnxBiEncoder({self.model_name!r}, {self.backend!r}, "
                    f"onnx_sha256={self.onnx.exported.sha256[:12]!r})")

        def encode_queries(self, texts, batch_size=None):
            return self.query_onnx.encode(list(texts), batch_size or self.batch_size)

        def encode_docs(self, texts, batch_size=None):
            return self.onnx.encode(list(texts), batch_size or self.batch_size)

        def encode_queries_torch(self, texts, batch_size=None):  # pragma: no cover
            raise NotImplementedError("an ONNX bi-encoder cannot be trained")

    class WorkerSBertBiEncoder(pyterrier_dr.SBertBiEncoder):
        """``SBertBiEncoder`` whose texts are tokenised in ``workers`` processes."""

        def __init__(self, model_name, batch_size=32, device=None, workers=1):
            super().__init__(model_name, batch_size=batch_size, device=device)
            self.workers = workers
            self.tokenize = st_tokenize(self.model)

        def encode_queries(self, texts, batch_size=None):
            return torch_encode(self.model, self.tokenize, list(texts),
                                batch_size or self.batch_size, self.workers)

        encode_docs = encode_queries

    return OnnxBiEncoder, WorkerSBertBiEncoder


def dr_bi_encoder(model_path: str, backend: str, batch_size: int = 32, device: str | None = None,
                  workers: int = 0):
    """The pyterrier-dr bi-encoder (``encode_docs``, ``doc_encoder()``, ...) for ``backend``:
    ``SBertBiEncoder`` for torch (tokenising in ``workers`` processes when > 0), an ONNX
    Runtime one otherwise."""
    import pyterrier_dr

    onnx_cls, worker_cls = _dr_classes()
    if check_backend(backend) != "torch":
        return onnx_cls(model_path, backend, batch_size=batch_size, workers=workers)
    if workers > 0:
        return worker_cls(model_path, batch_size=batch_size, device=device, workers=workers)
    return pyterrier_dr.SBertBiEncoder(model_path, batch_size=batch_size, device=device)


__all__ += ["dr_bi_encoder"]


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


__all__ += ["backend_identity"]


def model_key(model_path: str | Path) -> str:
    """A short, stable name for a model path (in the names of exports and dense indexes).

    >>> len(model_key("/models/minilm"))
    10
    """
    return hashlib.sha1(str(Path(model_path).expanduser().resolve()).encode()).hexdigest()[:10]


class BiEncoder:
    """A sentence-transformers bi-encoder (via ``pyterrier_dr.SBertBiEncoder``).

    ``batch_size`` 32 by default; benchmarks/arqmath_judged_pool.py measures 16, 32 and
    64 on the machine at hand (pass a larger one on a GPU).

    ``st`` is the pyterrier-dr model (``st.text_scorer()``, ``st.query_encoder()``,
    ``st.doc_encoder()``); :func:`load_bi_encoder` caches instances.
    """

    def __init__(self, model: str | Path | None = None, batch_size: int = 32,
                 device: str | None = None, backend: str = "torch", workers: int = 0):
        self.backend = check_backend(backend)
        require_extra("neural", "the bi-encoder", BI_ENCODER_MODULES)
        if self.backend != "torch":
            require_onnx(f"the bi-encoder's backend {self.backend!r}", self.backend)
        offline()
        self.model_path = resolve_model(model)
        self.batch_size = batch_size
        self.device = device
        self.workers = workers
        self.st = dr_bi_encoder(self.model_path, self.backend, batch_size=batch_size,
                                device=torch_device(device), workers=workers)

    def __repr__(self) -> str:
        if self.backend == "torch":
            return f"BiEncoder({model_identity(self.model_path)!r})"
        return (f"BiEncoder({model_identity(self.model_path)!r}, backend={self.backend!r}, "
                f"onnx_sha256={self.st.onnx.exported.sha256[:12]!r})")

    def __fingerprint__(self) -> dict:
        """What this encoder is, for run fingerprints (:mod:`mathir.runs.provenance`):
        its arguments and the files of its model, not the loaded model's state (which
        changes as it is used)."""
        out = {"model": model_fingerprint(self.model_path), "batch_size": self.batch_size,
               "device": self.device, "backend": self.backend, "workers": self.workers}
        if self.backend != "torch":
            out["onnx_sha256"] = self.st.onnx.exported.sha256
            if query_backend(self.backend) != self.backend:
                out["query_onnx_sha256"] = self.st.query_onnx.exported.sha256
        return out

    @property
    def backend_key(self) -> str:
        """'' for torch, else ``-<backend>-<12 hex digits of the ONNX file's SHA-256>``
        (dense indexes of different backends live in different folders)."""
        if self.backend == "torch":
            return ""
        return f"-{self.backend}-{self.st.onnx.exported.sha256[:12]}"

    def encode(self, texts: list[str]) -> np.ndarray:
        """Embeddings of ``texts`` (one row each)."""
        return self.st.encode_docs(list(texts), batch_size=self.batch_size)


@functools.lru_cache(maxsize=4)
def _cached_bi_encoder(model: str, batch_size: int, device: str | None, backend: str = "torch",
                       workers: int = 0) -> BiEncoder:
    return BiEncoder(model, batch_size=batch_size, device=device, backend=backend,
                     workers=workers)


def load_bi_encoder(model: str | Path | None = None, batch_size: int = 32,
                    device: str | None = None, backend: str = "torch",
                    workers: int = 0) -> BiEncoder:
    """The bi-encoder at ``model`` (default: packaged all-MiniLM-L6-v2), loaded once.

    ``backend``: ``torch`` (default), ``onnx``, ``onnx-int8``, ``openvino`` or
    ``openvino-int8`` (:mod:`mathir.encoders`);
    ``workers``: processes tokenising ahead of the model (0: none).

    >>> load_bi_encoder().encode(["$x^2$"]).shape
    (1, 384)
    """
    return _cached_bi_encoder(resolve_model(model), batch_size, device, backend or "torch",
                              workers)
