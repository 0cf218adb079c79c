"""Scale-out: run a pipeline over batches of topics in parallel processes or on Ray.

Retrieval and reranking treat topics independently, so a topic frame can be cut into
batches, each run by a worker, and the results concatenated in batch order: the
output is identical to a single-process run. Workers rebuild the pipeline from a
picklable :class:`PipelineSpec` (task, pipeline name, index directory) once and reuse
it for every batch, instead of pickling open indexes.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
from collections.abc import Callable
from dataclasses import dataclass, field

import pandas as pd
import pyterrier as pt

from mathir.models import require_extra

_WORKER_CACHE: dict = {}


@dataclass(frozen=True)
class PipelineSpec:
    """What a worker needs to rebuild a pipeline: a factory and its arguments.

    ``factory(*args, **kwargs)`` must be importable by name (a module-level function),
    e.g. ``PipelineSpec(mathir.experiment.running.build_pipeline, ("arqmath-task1", "bm25", "idx/"))``.
    """

    factory: Callable[..., pt.Transformer]
    args: tuple = ()
    kwargs: tuple = field(default_factory=tuple)  # (name, value) pairs, hashable

    def build(self) -> pt.Transformer:
        return self.factory(*self.args, **dict(self.kwargs))


def _run_batch(spec: PipelineSpec, batch: pd.DataFrame) -> pd.DataFrame:
    pipe = _WORKER_CACHE.get(spec)
    if pipe is None:
        pipe = _WORKER_CACHE[spec] = spec.build()
    return pipe.transform(batch)


def _batches(topics: pd.DataFrame, n: int) -> list[pd.DataFrame]:
    size = max(1, -(-len(topics) // n))
    return [topics.iloc[i:i + size] for i in range(0, len(topics), size)]


class ParallelTopics(pt.Transformer):
    """Run ``spec``'s pipeline over topic batches with ``workers`` processes or Ray.

    ``backend="processes"`` uses local worker processes (spawned, so nothing unsafe is
    inherited from the parent); ``backend="ray"`` submits batches as Ray tasks to the
    cluster at ``ray_address`` ("auto" joins a running cluster; None starts a local one).
    """

    def __init__(self, spec: PipelineSpec, workers: int = 2, backend: str = "processes",
                 ray_address: str | None = None, batches_per_worker: int = 2):
        self._pool: cf.ProcessPoolExecutor | None = None  # (first: __del__ reads it)
        if backend not in ("processes", "ray"):
            raise ValueError(f"unknown backend {backend!r}; expected 'processes' or 'ray'")
        self.spec = spec
        self.workers = max(1, int(workers))
        self.backend = backend
        self.ray_address = ray_address
        self.batches_per_worker = batches_per_worker

    def close(self) -> None:
        """Stop the worker processes (they are kept between calls to ``transform``)."""
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
            self._pool = None

    def __del__(self):
        self.close()

    def __getstate__(self):
        return {k: v for k, v in self.__dict__.items() if k != "_pool"} | {"_pool": None}

    def __repr__(self) -> str:
        return f"ParallelTopics({self.spec.build()!r})"

    def transform(self, topics: pd.DataFrame) -> pd.DataFrame:
        if topics.empty:
            return self.spec.build().transform(topics)
        batches = _batches(topics, self.workers * self.batches_per_worker)
        if self.backend == "ray":
            results = self._ray(batches)
        elif self.workers == 1:
            results = [_run_batch(self.spec, b) for b in batches]
        else:
            if self._pool is None:  # started once; workers keep their pipeline cached
                ctx = multiprocessing.get_context("spawn")
                self._pool = cf.ProcessPoolExecutor(self.workers, mp_context=ctx)
            results = list(self._pool.map(_run_batch, [self.spec] * len(batches), batches))
        return pd.concat(results, ignore_index=True)

    def _ray(self, batches: list[pd.DataFrame]) -> list[pd.DataFrame]:
        require_extra("cluster", "the Ray backend")
        import ray

        if not ray.is_initialized():
            kwargs = {"address": self.ray_address} if self.ray_address else {
                "num_cpus": self.workers, "include_dashboard": False}
            ray.init(ignore_reinit_error=True, log_to_driver=False, **kwargs)
        remote = ray.remote(_run_batch)
        spec_ref = ray.put(self.spec)
        return ray.get([remote.remote(spec_ref, b) for b in batches])
