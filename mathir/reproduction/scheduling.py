"""The trainings of ``mathir reproduce worldtree``: every recipe's model for every seed
(:func:`train_all`), in order, each as soon as the model it starts from is finished, in
subprocesses side by side or one after the other here.

The jobs go seed by seed, so that the first seeds' models are complete first (and kept,
should the command be stopped); a model whose manifest matches is reused
(:func:`mathir.reproduction.worldtree_training.why_not_done`).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from mathir.reproduction.worldtree_evaluation import Progress, split_data
from mathir.reproduction.worldtree_training import (
    Recipe,
    model_key,
    pairs_checksum,
    train_model,
    weights_checksum,
    why_not_done,
)
from mathir.storage import sha256_file


def _parent_state() -> dict:
    """What a process started now would take from this one: the working folder, the
    environment and ``sys.path`` (:func:`_in_parent_state` gives them to a process forked
    from a fork server, which has those of the moment the server started)."""
    return {"cwd": os.getcwd(), "environ": dict(os.environ), "sys_path": list(sys.path)}


def _in_parent_state(state: dict, target: Callable, *args) -> object:
    """Entry of a process of :func:`_training_context`: ``target(*args)`` in the working
    folder, environment and ``sys.path`` of :func:`_parent_state` (a relative model path is
    the command's, wherever the server was started).

    >>> import os
    >>> _in_parent_state(_parent_state(), os.getcwd) == os.getcwd()
    True
    """
    os.chdir(state["cwd"])
    if os.environ != state["environ"]:
        os.environ.clear()
        os.environ.update(state["environ"])
    sys.path[:] = state["sys_path"]
    return target(*args)


def _subprocess_main(job: dict) -> None:
    """Entry of a training subprocess: its output goes to the job's log file; SIGTERM
    unwinds (the temporary model directory is removed) instead of killing outright."""
    import signal

    def stop(signum, frame):
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    log = open(job["log"], "a", buffering=1, encoding="utf-8")  # noqa: SIM115 - until exit
    os.dup2(log.fileno(), 1)
    os.dup2(log.fileno(), 2)
    print(f"== {time.strftime('%Y-%m-%d %H:%M:%S')} training {job['out']} "
          f"(seed {job['seed']}, {job['recipe'].threads} thread(s))", file=sys.stderr)
    train_model(job["recipe"], job["pairs"], job["out"], job["seed"], job["key"],
                base=job["base"], device=job["device"], quiet=False)


#: What every training subprocess imports, imported once by the fork server they are
#: forked from (PyTorch, transformers and sentence-transformers: 4-5 CPU-seconds a
#: process when each imports them itself).
TRAINING_IMPORTS = ("torch", "sentence_transformers", "mathir.pipelines.reranker_training")


def _training_context():
    """The multiprocessing context of the trainings: a fork server that has imported
    :data:`TRAINING_IMPORTS` where the platform has one, so each training is forked with
    them already imported; spawned processes elsewhere. Neither is a fork of this
    process, whose threads (PyTorch's among them) a fork would copy in whatever state.
    A forked process starts in the server's folder and environment: its target runs
    through :func:`_in_parent_state`.
    """
    import multiprocessing

    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    ctx = multiprocessing.get_context("forkserver")
    # Takes effect when the server starts (with this process's first forkserver child):
    # one started before, by another part of the process, forks without them.
    ctx.set_forkserver_preload(list(TRAINING_IMPORTS))
    return ctx


def _packaged_weights() -> tuple[str, str]:
    from mathir.models import resolve_model

    path = resolve_model(None)
    return path, weights_checksum(path)


def _run_jobs(jobs: list[dict], slots: int, parallel: bool, progress: Progress,
              prepare: Callable[[dict], bool]) -> None:
    """Train ``jobs`` in their order, each as soon as the model it starts from is
    finished, at most ``slots`` torch threads at a time, each in a subprocess
    (``parallel``) or one after the other in this process.

    ``prepare(job)`` is called when a job's base model is ready: it sets the job's key
    and says whether the job must train (False: its model is reused).
    """
    finished: set[str] = set()  # models trained or reused

    def ready(job: dict) -> bool:
        return job["base_dir"] is None or str(job["base_dir"]) in finished

    def next_jobs(waiting: list[dict], free: int, most: int | None = None) -> list[dict]:
        """Jobs to start now (``most`` at most), in order; waiting ones whose model is
        reused are taken off as finished (which may make the models built on them ready)."""
        started: list[dict] = []
        for job in list(waiting):
            if len(started) == most:
                break
            if not ready(job):
                continue
            if "must_train" not in job:
                job["must_train"] = prepare(job)
            if not job["must_train"]:
                waiting.remove(job)
                finished.add(job["out"])
                continue
            if job["recipe"].threads > free:
                break  # in order: a job that needs more threads waits for them
            waiting.remove(job)
            started.append(job)
            free -= job["recipe"].threads
        return started

    waiting = list(jobs)
    if not parallel:
        while todo := next_jobs(waiting, slots, most=1):
            job = todo[0]
            t0 = time.perf_counter()
            progress(f"{job['title']}: training here ({job['recipe'].threads} thread(s))")
            train_model(job["recipe"], job["pairs"], job["out"], job["seed"], job["key"],
                        base=job["base"], device=job["device"])
            finished.add(job["out"])
            progress(f"{job['title']}: trained in {time.perf_counter() - t0:.0f} s")
        return
    ctx = _training_context()
    running: list = []
    try:
        while waiting or running:
            used = sum(job["recipe"].threads for _, job, _ in running)
            for job in next_jobs(waiting, slots - used):
                proc = ctx.Process(target=_in_parent_state,
                                   args=(_parent_state(), _subprocess_main, job),
                                   name=f"mathir-train-{job['recipe'].name}")
                proc.start()
                running.append((proc, job, time.perf_counter()))
                progress(f"{job['title']}: training in process {proc.pid} "
                         f"({job['recipe'].threads} thread(s); log {job['log']})")
            if not running:
                break  # nothing left that can start
            for item in list(running):
                proc, job, t0 = item
                proc.join(timeout=0.5)
                if proc.exitcode is None:
                    continue
                running.remove(item)
                if proc.exitcode != 0:
                    raise RuntimeError(f"{job['title']}: training failed (exit status "
                                       f"{proc.exitcode}); see {job['log']}")
                finished.add(job["out"])
                progress(f"{job['title']}: trained in {time.perf_counter() - t0:.0f} s")
    finally:
        for proc, _, _ in running:
            proc.terminate()
        for proc, _, _ in running:
            proc.join(timeout=30)
            if proc.exitcode is None:
                proc.kill()
                proc.join()


def train_all(task, data, seeds: Sequence[int], recipes: Sequence[Recipe], root: Path, *,
              max_questions: int | None, device: str, parallel: bool,
              progress: Progress) -> dict[int, dict[str, Path]]:
    """Train (or reuse) every recipe's model for every seed; returns their directories.

    The jobs go seed by seed, so that the first seeds' models are complete first (and
    kept, should the command be stopped); a model starts from its base as soon as that
    one is finished.
    """
    from mathir.pipelines.reranker_training import task_training_pairs

    train = split_data(task, data, "train", max_questions, root / "data")
    train_sha = sha256_file(Path(train.topics))
    base_path, base_sha = _packaged_weights()
    models: dict[int, dict[str, Path]] = {}
    jobs: list[dict] = []
    for seed in seeds:
        folder = root / f"seed{seed}"
        models[seed] = {r.name: folder / r.name for r in recipes}
        t0 = time.perf_counter()
        counts = []
        for recipe in recipes:
            pairs = task_training_pairs(task, [train], negatives_per_positive=recipe.negatives,
                                        first_stage=recipe.first_stage, seed=seed,
                                        negative_depth=recipe.negative_depth, quiet=True)
            counts.append(f"{recipe.name} {len(pairs)}")
            jobs.append({"recipe": recipe, "pairs": pairs, "seed": seed, "device": device,
                         "out": str(models[seed][recipe.name]),
                         "log": str(folder / f"{recipe.name}.log"),
                         "title": f"seed {seed} {recipe.label}",
                         "pairs_sha256": pairs_checksum(pairs),
                         "base_dir": None if recipe.base is None else models[seed][recipe.base]})
        progress(f"seed {seed}: training pairs {', '.join(counts)} "
                 f"({time.perf_counter() - t0:.0f} s)")

    def prepare(job: dict) -> bool:
        if job["base_dir"] is None:
            job["base"], base_weights = base_path, base_sha
        else:
            job["base"] = str(job["base_dir"])
            base_weights = weights_checksum(job["base_dir"])
        job["key"] = model_key(job["recipe"], job["seed"], job["pairs_sha256"], train_sha,
                               base_weights, device)
        reason = why_not_done(job["out"], job["key"])
        if reason is None:
            progress(f"{job['title']}: reused ({job['out']}: manifest matches)")
            return False
        progress(f"{job['title']}: to train ({reason})")
        Path(job["out"]).parent.mkdir(parents=True, exist_ok=True)
        return True

    slots = max((r.threads for r in recipes), default=1)
    _run_jobs(jobs, max(slots, 2 if parallel else 1), parallel, progress, prepare)
    return models
