"""Running an exported model (:mod:`mathir.neural.export`) on the CPU: an ONNX Runtime
session or an OpenVINO compiled model, fed by :class:`~mathir.neural.tokenizing.Tokenize`.

The encoders follow the model's sentence-transformers modules (mean or CLS pooling,
Normalize) and the cross-encoder's activation (sigmoid for one-logit models, as
``CrossEncoder.predict``).
"""

from __future__ import annotations

import collections
import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import numpy as np

from mathir.errors import InputError
from mathir.neural.backends import BI_ENCODER, CROSS_ENCODER
from mathir.neural.export import Exported, export
from mathir.neural.tokenizing import Tokenize, worker_pool


class _FloatEnvironment:
    """The calling thread's floating-point environment (C's ``fenv_t``), kept and put back.

    OpenVINO's CPU plugin flushes denormal floats to zero (``CPU_DENORMALS_OPTIMIZATION``)
    and that setting leaks into the thread that compiles a model or starts and waits for
    its requests: afterwards every subnormal float in the process compares as zero (two
    run scores of 1e-310 and 2e-310 would tie and be ordered by docno instead). Put back
    after each OpenVINO call, mathir's own arithmetic stays IEEE 754. Hand-written with
    ctypes: no library resets the environment of the calling thread from Python.
    """

    def __init__(self) -> None:
        import ctypes
        import ctypes.util

        name = ctypes.util.find_library("m")
        self._libm = ctypes.CDLL(name) if name else None
        self._saved = ctypes.create_string_buffer(512)  # larger than any fenv_t
        if self._libm is None or self._libm.fegetenv(self._saved) != 0:
            self._libm = None

    def restore(self) -> None:
        """Put the kept environment back (nothing where libm could not be loaded)."""
        if self._libm is not None:
            self._libm.fesetenv(self._saved)


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

            self._float_environment = _FloatEnvironment()
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
            self._float_environment.restore()
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
            self._float_environment.restore()
            pending.append((request, positions, feeds))
        while pending:
            yield self._finish(pending.popleft(), free)

    def _finish(self, item: tuple, free: list) -> tuple[np.ndarray, dict, np.ndarray]:
        request, positions, feeds = item
        request.wait()
        self._float_environment.restore()
        out = request.get_tensor(self._output).data.copy()
        free.append(request)
        return positions, feeds, out

    def batches(self, texts: Sequence, batch_size: int) -> Iterator[tuple[np.ndarray, dict]]:
        """(positions, padded inputs) per batch of ``batch_size`` texts, the texts with the
        most word pieces first (tokenised in ``workers`` processes when > 0)."""
        if self.workers > 0 and len(texts) > batch_size:
            chunks = [texts[i:i + batch_size] for i in range(0, len(texts), batch_size)]
            rows = [r for part in worker_pool(self.tokenize, self.workers).map(
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


__all__ = ["OnnxCrossEncoder", "OnnxModel", "OnnxSentenceEncoder", "bi_encoder_model",
           "cross_encoder_model", "pool_embeddings"]
