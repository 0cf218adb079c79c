"""The bi-encoder that pipelines and dense indexes use: a pyterrier-dr bi-encoder computing
with PyTorch (sentence-transformers) or an exported backend (:mod:`mathir.neural.backends`),
and :func:`load_bi_encoder`, which loads each once.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

from mathir.models import (
    BI_ENCODER_MODULES,
    model_fingerprint,
    model_identity,
    offline,
    require_extra,
    resolve_model,
    torch_device,
)
from mathir.neural.backends import check_backend, query_backend, require_onnx
from mathir.neural.runtime import OnnxSentenceEncoder, bi_encoder_model
from mathir.neural.tokenizing import st_tokenize, torch_encode


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
        """What this encoder is, for run fingerprints (:mod:`mathir.experiment.identity`):
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
    ``openvino-int8`` (:mod:`mathir.neural.backends`);
    ``workers``: processes tokenising ahead of the model (0: none).

    >>> load_bi_encoder().encode(["$x^2$"]).shape
    (1, 384)
    """
    return _cached_bi_encoder(resolve_model(model), batch_size, device, backend or "torch",
                              workers)


__all__ = ["BiEncoder", "dr_bi_encoder", "load_bi_encoder"]
