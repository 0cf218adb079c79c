"""The CPU backends of the bi- and cross-encoders: ONNX Runtime or OpenVINO, float32 or int8.

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
  calibrated on the texts of mathir's embedded ARQMath sample
  (:func:`mathir.neural.calibration.calibration_texts`), so that every machine makes the
  same export from the same weights.

This module names the backends and checks them (and the libraries they need); the
models are exported by :mod:`mathir.neural.export` and run by :mod:`mathir.neural.runtime`.

>>> check_backend("onnx-int8")
'onnx-int8'
>>> check_backend("tensorrt")
Traceback (most recent call last):
mathir.errors.InputError: unknown backend 'tensorrt'; expected one of torch, onnx, onnx-int8, openvino, openvino-int8
"""

from __future__ import annotations

from mathir.errors import InputError
from mathir.models import BI_ENCODER, CROSS_ENCODER, require_extra

#: backend -> what it is, in words
BACKENDS = {"torch": "PyTorch (sentence-transformers), float32",
            "onnx": "ONNX Runtime, float32, fused graph (exported locally)",
            "onnx-int8": "ONNX Runtime, int8 dynamic quantisation (exported locally)",
            "openvino": "OpenVINO, float32 (converted locally from the weights)",
            "openvino-int8": "OpenVINO, int8 static quantisation by NNCF, calibrated on "
                             "the embedded sample (exported locally)"}
#: the modules an ONNX Runtime backend needs (in the `neural` extra)
ONNX_MODULES = ("torch", "transformers", "onnx", "onnxruntime")
#: the modules the OpenVINO backends need (in the `neural` extra; nncf for int8 only)
OPENVINO_MODULES = ("torch", "transformers", "openvino")
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


__all__ = ["BACKENDS", "BI_ENCODER", "CROSS_ENCODER", "ONNX_MODULES", "OPENVINO_MODULES",
           "QUERY_BACKENDS", "check_backend", "query_backend", "require_onnx", "runtime"]
