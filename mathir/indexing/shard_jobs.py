"""Run the jobs of a sharded build side by side: local processes, or Ray tasks.

Both sharded builds (:mod:`mathir.indexing.formula_index`,
:mod:`mathir.indexing.answer_index`) index consecutive slices of a collection, one job
each, and use the results in slice order.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence

from tqdm.auto import tqdm


def run_shard_jobs(function: Callable, jobs: Sequence[tuple], ray_address: str | None = None,
                   desc: str = "indexing shards", quiet: bool = False) -> list:
    """``function(*job)`` for every job, side by side; the results in job order.

    Jobs run as spawned local processes, one per job, or, with ``ray_address``, as Ray
    tasks on that cluster (``"local"``: a Ray started here for these jobs and shut down
    after; a Ray already initialised in this process is used and left running).
    ``function`` must be importable by name (a module-level function).

    >>> run_shard_jobs(divmod, [(7, 2), (9, 4)], quiet=True)
    [(3, 1), (2, 1)]
    """
    bar = tqdm(total=len(jobs), desc=desc, unit=" shards", disable=quiet)
    try:
        if ray_address is not None:
            return _on_ray(function, jobs, ray_address, bar.update)
        # "spawn": the parent may hold threads, which fork would copy in a bad state.
        ctx = multiprocessing.get_context("spawn")
        with ctx.Pool(len(jobs)) as pool:
            futures = [pool.apply_async(function, job, callback=lambda _: bar.update())
                       for job in jobs]
            return [f.get() for f in futures]
    finally:
        bar.close()


def _on_ray(function: Callable, jobs: Sequence[tuple], ray_address: str, done: Callable) -> list:
    from mathir.models import require_extra

    require_extra("cluster", "sharded indexing on Ray")
    import ray

    started = not ray.is_initialized()
    environ = dict(os.environ)
    if started:
        kwargs = {"address": ray_address} if ray_address != "local" else {
            "num_cpus": len(jobs), "include_dashboard": False}
        ray.init(ignore_reinit_error=True, log_to_driver=False, **kwargs)
    try:
        remote = ray.remote(function)
        pending = {remote.remote(*job): i for i, job in enumerate(jobs)}
        results: dict[int, object] = {}
        while pending:
            finished, _ = ray.wait(list(pending), num_returns=1)
            results[pending.pop(finished[0])] = ray.get(finished[0])
            done()
        return [results[i] for i in range(len(jobs))]
    finally:
        if started:  # leave Ray as it was found (a caller's own instance stays)
            ray.shutdown()
            # and the environment: ray.init sets RAY_* variables and PYTHONBREAKPOINT
            # (its debugger), which shutdown leaves behind
            os.environ.clear()
            os.environ.update(environ)
