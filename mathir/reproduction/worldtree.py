"""The WorldTree headline, reproduced by one command: ``mathir reproduce worldtree``.

The WorldTree headline (docs/worldtree.md) rests on three models that start from the
packaged all-MiniLM-L6-v2 and are trained on Train: a bi-encoder and a cross-encoder
in two stages (:data:`WORLDTREE_RECIPES`, the ``mathir train-reranker`` commands of
docs/worldtree.md). :func:`reproduce_worldtree` trains them for each seed, evaluates
``ltr-dense``, ``ltr-crossencoder`` and ``ltr-dense-crossencoder`` (and, for
reference, ``ltr`` and ``ltr-minilm``) on Dev and Test, and writes the table: each
pipeline's MAP as mean ± standard deviation over the seeds, every seed's, and, with
``ensemble``, the seed ensemble's (scores averaged over the seeds' models).

**Models** go to ``MODELS/worldtree/seed<S>/{bi,ce1,ce2}`` (``models/`` is ignored by
git), each with the ``manifest.json`` of its training plus a ``reproduce`` entry: the
seed, the recipe (hyperparameters, threads, device), checksums of the training pairs,
of the Train file and of the base model's weights, a checksum of the training code and
the versions of mathir and of the libraries that compute the weights. A model whose
entry equals what would be trained now is reused (a later session resumes where the
last one stopped); any other is trained again. A model is written into a temporary
directory that is renamed into place when it is complete
(:func:`mathir.storage.atomic_directory`), so a killed training never looks finished;
the git commit is recorded but not compared, so a commit that does not touch the
training code keeps the models.

**Determinism.** Every training runs with fixed seeds (Python, NumPy, torch; the pairs'
negative sampling and the batch order are seeded by the trainers),
``torch.use_deterministic_algorithms(True)`` and one torch thread each, in two
subprocesses side by side: seed by seed, the bi-encoder and the first cross-encoder
stage, and the second stage as soon as the first is finished (a stopped command keeps
whole seeds). On one machine the same
seed gives the same weights, byte for byte (``weights_sha256`` in the manifest;
tests/reproduction/test_worldtree.py). Another CPU or library version gives other rounding, hence
other weights: compare the seed means, not single runs, across machines.

>>> [r.name for r in WORLDTREE_RECIPES]
['bi', 'ce1', 'ce2']
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import hashlib
import json
import math
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from mathir.errors import InputError
from mathir.storage import (
    atomic_directory,
    atomic_file,
    read_manifest,
    require_writable_dir,
    sha256_file,
    write_manifest,
)

#: The WorldTree pipelines the headline is about, and the non-neural ones shown beside.
WORLDTREE_PIPELINES = ("ltr-dense", "ltr-crossencoder", "ltr-dense-crossencoder")
WORLDTREE_REFERENCE = ("ltr", "ltr-minilm")
#: The 2019 Test leaderboard's best MAP (the headline is compared with it).
WORLDTREE_WINNER_2019 = 0.5625


@dataclass(frozen=True)
class Recipe:
    """How one model is trained: the pairs (first stage, negatives), the training
    (``mathir train-reranker`` options) and the torch ``threads`` it runs with.

    ``base``: the recipe whose model this one starts from (None: the packaged MiniLM).
    ``max_steps`` stops early (smoke runs only).
    """

    name: str
    kind: str  # "bi-encoder" or "cross-encoder"
    first_stage: str
    negatives: int
    negative_depth: int | None
    epochs: int
    batch_size: int
    max_length: int
    learning_rate: float
    warmup: float = 0.1
    loss: str = "pointwise"
    base: str | None = None
    threads: int = 1
    max_steps: int | None = None

    @property
    def label(self) -> str:
        """What progress lines call it."""
        return {"bi": "bi-encoder", "ce1": "cross-encoder stage 1",
                "ce2": "cross-encoder stage 2"}.get(self.name, self.name)

    def describe(self) -> dict:
        """The recipe as JSON (part of a model's manifest)."""
        return dataclasses.asdict(self)


#: The three models of the WorldTree headline (docs/worldtree.md): the bi-encoder and the
#: first cross-encoder stage on TF-IDF negatives; the second cross-encoder stage from the
#: first, on ``ltr``'s negatives; each on one thread (two train side by side).
WORLDTREE_RECIPES = (
    Recipe("bi", "bi-encoder", first_stage="tfidf", negatives=1, negative_depth=None,
           epochs=3, batch_size=128, max_length=128, learning_rate=1e-4),
    Recipe("ce1", "cross-encoder", first_stage="tfidf", negatives=2, negative_depth=100,
           epochs=2, batch_size=16, max_length=128, learning_rate=6e-5),
    Recipe("ce2", "cross-encoder", first_stage="ltr", negatives=3, negative_depth=100,
           epochs=1, batch_size=16, max_length=128, learning_rate=3e-5, base="ce1"),
)

#: Smoke runs (``smoke=True``, ``mathir reproduce worldtree --smoke``): a few questions,
#: steps and word pieces; their models go to ``MODELS/worldtree-smoke``.
SMOKE = {"max_questions": 20, "max_steps": 2, "max_length": 32}


# --- checksums -----------------------------------------------------------------------


def weights_checksum(model_dir: str | Path) -> str:
    """SHA-256 of a saved model's weight files (``*.safetensors``, ``*.bin``; names and
    bytes), the files that training changes.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "model.safetensors").write_bytes(b"w")
    >>> weights_checksum(d) == weights_checksum(d), len(weights_checksum(d))
    (True, 64)
    """
    root = Path(model_dir)
    files = sorted(p for pattern in ("*.safetensors", "*.bin") for p in root.rglob(pattern)
                   if not any(part.startswith(".") for part in p.relative_to(root).parts))
    if not files:
        raise InputError("no weight file (*.safetensors, *.bin) in the model directory",
                         path=root)
    h = hashlib.sha256()
    for p in files:
        h.update(p.relative_to(root).as_posix().encode() + b"\0" + sha256_file(p).encode())
    return h.hexdigest()


def pairs_checksum(pairs) -> str:
    """SHA-256 of training pairs (their rows, in order, as tab-separated text).

    >>> import pandas as pd
    >>> p = pd.DataFrame({"qid": ["1"], "query": ["q"], "docno": ["d"], "text": ["t"], "label": [1]})
    >>> pairs_checksum(p) == pairs_checksum(p.copy()), pairs_checksum(p) == pairs_checksum(p.assign(label=0))
    (True, False)
    """
    text = pairs.to_csv(sep="\t", index=False, lineterminator="\n")
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def training_code_checksum() -> str:
    """SHA-256 of the training code (mathir/pipelines/reranker_training.py) as Python
    syntax: comments, docstrings and layout left out, so that editing them keeps the
    trained models.

    >>> len(training_code_checksum())
    64
    """
    from mathir.pipelines import reranker_training

    tree = ast.parse(Path(reranker_training.__file__).read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                and body and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str)):
            node.body = body[1:] or [ast.Pass()]
    return hashlib.sha256(ast.dump(tree).encode()).hexdigest()


def _training_packages() -> dict[str, str]:
    """Versions of the libraries that compute the weights (and of mathir)."""
    from importlib.metadata import PackageNotFoundError, version

    from mathir import __version__

    out = {"mathir": __version__}
    for name in ("torch", "transformers", "sentence-transformers", "tokenizers",
                 "safetensors"):
        with contextlib.suppress(PackageNotFoundError):
            out[name] = version(name)
    return out


# --- one model: its key, whether it is done, its training -----------------------------


def model_key(recipe: Recipe, seed: int, pairs_sha256: str, train_file_sha256: str,
              base_weights_sha256: str, device: str) -> dict:
    """What a model trained now would be: the ``reproduce`` entry of its manifest.

    >>> k = model_key(WORLDTREE_RECIPES[0], 0, "p", "t", "b", "cpu")
    >>> k["seed"], k["recipe"]["learning_rate"], k["base_weights_sha256"]
    (0, 0.0001, 'b')
    """
    return {"task": "worldtree", "seed": seed, "recipe": recipe.describe(), "device": device,
            "training_pairs_sha256": pairs_sha256, "train_file_sha256": train_file_sha256,
            "base_weights_sha256": base_weights_sha256,
            "training_code_sha256": training_code_checksum(),
            "packages": _training_packages()}


def why_not_done(model_dir: str | Path, key: dict) -> str | None:
    """None when ``model_dir`` holds the finished model ``key`` describes; else why not
    (no manifest, which entries differ, weights changed since they were written).

    A directory being written is a temporary sibling (``.bi.<pid>-....tmp``), never
    ``model_dir`` itself, so a half-written model is never taken for a finished one.

    >>> import tempfile
    >>> why_not_done(tempfile.mkdtemp() + "/bi", {"seed": 0})
    'not trained yet'
    """
    manifest = read_manifest(model_dir)
    if manifest is None:
        return "not trained yet"
    stored = manifest.get("reproduce")
    if not isinstance(stored, dict):
        return "its manifest has no reproduce entry (trained by another command)"
    changed = sorted(k for k in set(key) | set(stored) if stored.get(k) != key.get(k))
    if changed:
        return f"changed: {', '.join(changed)}"
    try:
        if weights_checksum(model_dir) != manifest.get("weights_sha256"):
            return "its weight files differ from those its manifest records"
    except InputError:
        return "its weight files are missing"
    return None


@contextlib.contextmanager
def deterministic_torch(seed: int, threads: int) -> Iterator[None]:
    """Seed Python, NumPy and torch, use ``threads`` torch threads and torch's
    deterministic algorithms; the previous settings come back afterwards."""
    import random

    import numpy as np
    import torch

    previous = (torch.get_num_threads(), torch.are_deterministic_algorithms_enabled())
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(True)
    try:
        yield
    finally:
        torch.set_num_threads(previous[0])
        torch.use_deterministic_algorithms(previous[1])


def train_model(recipe: Recipe, pairs, out: str | Path, seed: int, key: dict,
                base: str | Path | None = None, device: str = "cpu",
                quiet: bool = True) -> Path:
    """Train ``recipe``'s model on ``pairs`` into ``out`` (whole or not at all), with
    :func:`deterministic_torch`; its manifest gets ``reproduce`` = ``key`` and the
    ``weights_sha256`` of what was trained. Returns ``out``.
    """
    from mathir.pipelines.reranker_training import train_bi_encoder, train_cross_encoder
    from mathir.runs.provenance import git_state

    out = Path(out)
    git = git_state()  # the code it starts with (a commit made while it trains is not it)
    options = {"loss": recipe.loss} if recipe.kind == "cross-encoder" else {}
    train = train_bi_encoder if recipe.kind == "bi-encoder" else train_cross_encoder
    with deterministic_torch(seed, recipe.threads), atomic_directory(out) as tmp:
        trained = train(pairs, tmp / "model", base=base, epochs=recipe.epochs,
                        batch_size=recipe.batch_size, learning_rate=recipe.learning_rate,
                        max_length=recipe.max_length, warmup=recipe.warmup,
                        max_steps=recipe.max_steps, device=device, seed=seed, quiet=quiet,
                        **options)
        for child in trained.iterdir():
            os.replace(child, tmp / child.name)
        trained.rmdir()
        manifest = read_manifest(tmp) or {}
        write_manifest(tmp, manifest | {"reproduce": key, "weights_sha256": weights_checksum(tmp),
                                        "git": git, "threads": recipe.threads})
    return out


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


# --- the data: splits, subsets for smoke runs ------------------------------------------


def _subset_questions(path: Path, n: int, dest: Path) -> Path:
    """The first ``n`` explained questions of a WorldTree question file, as a file of
    the same name in ``dest`` (written only when its content changes)."""
    from mathir.tabular import iter_lines
    from mathir.topics.worldtree import read_questions

    keep = set(read_questions(path, explained_only=True)["qid"].head(n))
    lines = [line for _, line in iter_lines(path)]
    column = lines[0].split("\t").index("questionID")
    text = "\n".join([lines[0]] + [x for x in lines[1:] if x.split("\t")[column].strip()
                                   in keep]) + "\n"
    out = dest / path.name
    if not out.is_file() or out.read_text(encoding="utf-8") != text:
        dest.mkdir(parents=True, exist_ok=True)
        with atomic_file(out) as f:
            f.write(text)
    return out


def _split(task, data: str | Path | None, split: str, max_questions: int | None,
           scratch: Path):
    """The TaskData of a split, cut to its first ``max_questions`` questions if given."""
    found = task.data(data, split)
    if max_questions is None:
        return found
    if found.qrels is None:
        raise InputError(f"the {split} questions have no explanations", path=found.topics)
    sub = _subset_questions(Path(found.topics), max_questions, scratch / found.label)
    return dataclasses.replace(found, topics=sub, qrels=sub)


# --- the whole command -------------------------------------------------------------------


class _Progress:
    """One line per stage on stderr (or ``write``), with the elapsed wall time."""

    def __init__(self, write: Callable[[str], None] | None = None):
        self.started = time.perf_counter()
        self.write = write or (lambda line: print(line, file=sys.stderr, flush=True))

    def __call__(self, message: str) -> None:
        s = int(time.perf_counter() - self.started)
        self.write(f"[{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}] {message}")


def _packaged_weights() -> tuple[str, str]:
    from mathir.models import resolve_model

    path = resolve_model(None)
    return path, weights_checksum(path)


def _run_jobs(jobs: list[dict], slots: int, parallel: bool, progress: _Progress,
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
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    running: list = []
    try:
        while waiting or running:
            used = sum(job["recipe"].threads for _, job, _ in running)
            for job in next_jobs(waiting, slots - used):
                proc = ctx.Process(target=_subprocess_main, args=(job,),
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


def _train_all(task, data, seeds: Sequence[int], recipes: Sequence[Recipe], root: Path,
               max_questions: int | None, device: str, parallel: bool,
               progress: _Progress) -> dict[int, dict[str, Path]]:
    """Train (or reuse) every recipe's model for every seed; returns their directories.

    The jobs go seed by seed, so that the first seeds' models are complete first (and
    kept, should the command be stopped); a model starts from its base as soon as that
    one is finished.
    """
    from mathir.pipelines.reranker_training import task_training_pairs

    train = _split(task, data, "train", max_questions, root / "data")
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


def _measures(table) -> dict[str, dict[str, float]]:
    return {str(run): {m: round(float(v), 4) for m, v in row.items()}
            for run, row in table.iterrows()}


def _evaluate(task, split, pipelines: Sequence[str], options: dict, out: Path,
              index_dir: Path, progress: _Progress, title: str) -> tuple[dict, list[str]]:
    """Run and evaluate ``pipelines`` on ``split`` (reusing runs whose manifests match);
    returns their measures and the pipelines whose runs were computed now."""
    from mathir.experiment import run_experiment

    t0 = time.perf_counter()
    res = run_experiment(task, split, list(pipelines), out=out, index_dir=index_dir,
                         quiet=True, options=options)
    if res.table is None:
        raise InputError(f"the {split.label} questions have no explanations to evaluate",
                         path=split.topics)
    measures = _measures(res.table)
    maps = ", ".join(f"{p} {measures[p]['MAP']:.4f}" for p in pipelines)
    computed = [p for p in pipelines if p not in res.reused]
    how = f"{len(computed)} run(s) computed" if computed else "runs reused"
    progress(f"{title}: MAP {maps} ({how}; {time.perf_counter() - t0:.0f} s)")
    return measures, computed


def _evaluate_ensemble(task, split, seeds: Sequence[int], models: dict, runs_dir: Path,
                       index_dir: Path, progress: _Progress, title: str
                       ) -> tuple[dict, list[str]]:
    """The seed ensemble's measures on ``split`` (every seed's bi-encoder and second-stage
    cross-encoder, ``models[seed]["bi"]`` and ``["ce2"]``, scores averaged), its runs in
    ``runs_dir/ensemble-<seeds>``; and the pipelines whose runs were computed now."""
    options = {"bi_encoder": tuple(str(models[s]["bi"]) for s in seeds),
               "cross_encoder": tuple(str(models[s]["ce2"]) for s in seeds)}
    return _evaluate(task, split, WORLDTREE_PIPELINES, options,
                     runs_dir / f"ensemble-{'-'.join(map(str, seeds))}", index_dir, progress,
                     f"{title} ensemble of seeds {', '.join(map(str, seeds))}")


def _spread(values: list[float]) -> dict:
    mean = sum(values) / len(values)
    sd = (math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))
          if len(values) > 1 else None)
    return {"mean": round(mean, 4), "sd": None if sd is None else round(sd, 4),
            "min": min(values), "max": max(values)}


def summarise(runs: dict, seeds: Sequence[int]) -> dict:
    """Per split and pipeline: MAP of each seed, their mean ± standard deviation
    (sample, n - 1) and the ensemble's, from :func:`reproduce_worldtree`'s ``runs``.

    >>> runs = {"dev": {"seed0": {"p": {"MAP": 0.5}}, "seed1": {"p": {"MAP": 0.6}}}}
    >>> s = summarise(runs, [0, 1])["dev"]["p"]
    >>> s["mean"], s["sd"], s["seeds"]
    (0.55, 0.0707, {'0': 0.5, '1': 0.6})
    """
    out: dict = {}
    for split, by_run in runs.items():
        names = list(dict.fromkeys(p for s in seeds for p in by_run.get(f"seed{s}", {})))
        for name in names:
            values = {str(s): by_run[f"seed{s}"][name]["MAP"] for s in seeds
                      if name in by_run.get(f"seed{s}", {})}
            row = {"seeds": values} | _spread(list(values.values()))
            if name in by_run.get("ensemble", {}):
                row["ensemble"] = by_run["ensemble"][name]["MAP"]
            out.setdefault(split, {})[name] = row
    return out


def _pm(row: dict | None) -> str:
    if row is None:
        return ""
    return f"{row['mean']:.4f}" + ("" if row["sd"] is None else f" ± {row['sd']:.4f}")


def markdown_tables(report: dict) -> str:
    """The report as markdown: MAP per pipeline (mean ± sd, each seed, the ensemble), then
    every measure of every run (the means over the seeds first)."""
    summary, splits = report["summary"], report["splits"]
    seeds = report["seeds"]
    names = list(dict.fromkeys(p for s in splits for p in summary.get(s, {})))
    title = {"dev": "Dev", "test": "Test"}
    head = ["pipeline"] + [f"{title.get(s, s)} MAP, mean ± sd of {len(seeds)} seed(s)"
                           for s in splits]
    head += [f"{title.get(s, s)} MAP per seed ({', '.join(map(str, seeds))})" for s in splits]
    if report.get("ensemble"):
        head += [f"{title.get(s, s)} MAP, seed ensemble" for s in splits]
    lines = ["| " + " | ".join(head) + " |", "|:--" + "|--:" * (len(head) - 1) + "|"]
    for name in names:
        rows = [summary.get(s, {}).get(name) for s in splits]
        cells = [name] + [_pm(r) for r in rows]
        cells += [" / ".join(f"{v:.4f}" for v in r["seeds"].values()) if r else "" for r in rows]
        if report.get("ensemble"):
            cells += [f"{r['ensemble']:.4f}" if r and "ensemble" in r else "" for r in rows]
        lines.append("| " + " | ".join(cells) + " |")
    for name, maps in report.get("reference", {}).items():
        cells = [f"{name} (no seed)"] + [f"{maps[s]['MAP']:.4f}" if s in maps else ""
                                         for s in splits]
        cells += [""] * (len(head) - len(cells))
        lines.append("| " + " | ".join(cells) + " |")
    measures = None
    full = []
    for split in splits:
        by_run = report["runs"].get(split, {})
        rows: list[tuple[str, dict]] = []
        for name in names:
            per_seed = [by_run[f"seed{s}"][name] for s in seeds if name in by_run.get(f"seed{s}", {})]
            if per_seed:
                measures = measures or list(per_seed[0])
                rows.append((f"{title.get(split, split)} {name} (mean of {len(per_seed)})",
                             {m: sum(r[m] for r in per_seed) / len(per_seed) for m in measures}))
        for key, label in [(f"seed{s}", f"seed {s}") for s in seeds] + [("ensemble", "ensemble"),
                                                                         ("reference", "")]:
            for name, values in by_run.get(key, {}).items():
                measures = measures or list(values)
                rows.append((f"{title.get(split, split)} {name}" + (f" ({label})" if label else ""),
                             values))
        full += rows
    if measures:
        lines += ["", "| run | " + " | ".join(measures) + " |",
                  "|:--" + "|--:" * len(measures) + "|"]
        lines += ["| " + run + " | " + " | ".join(f"{v[m]:.4f}" for m in measures) + " |"
                  for run, v in full]
    return "\n".join(lines)


def _headline(summary: dict) -> dict | None:
    """The headline pipeline's Test MAP over the seeds, beside the 2019 winner's."""
    row = summary.get("test", {}).get("ltr-dense-crossencoder")
    if row is None:
        return None
    return {"pipeline": "ltr-dense-crossencoder", "test_mean": row["mean"],
            "test_sd": row["sd"], "test_min": row["min"],
            "winner_2019": WORLDTREE_WINNER_2019,
            "every_seed_above_winner": row["min"] > WORLDTREE_WINNER_2019}


def _write_report(report: dict, out: Path) -> None:
    """Write ``worldtree.json`` and ``worldtree.md`` to ``out``; add their paths to the
    report (``files``)."""
    with atomic_file(out / "worldtree.json") as f:
        json.dump(report, f, indent=1, sort_keys=True)
    with atomic_file(out / "worldtree.md") as f:
        f.write(markdown_tables(report) + "\n")
    report["files"] = {"table": str(out / "worldtree.md"), "json": str(out / "worldtree.json")}


#: What every seed of one table must share: the models' training, all but what the seed
#: changes. The training pairs are drawn with the seed (their negatives), and a second
#: stage starts from its own seed's first stage, so neither checksum is compared; the
#: base weights are, for a model that starts from the packaged one.
_SHARED_KEY = ("task", "recipe", "device", "train_file_sha256", "training_code_sha256",
               "packages")


def recorded_models(report: dict, seed: int, names: Sequence[str] = ("bi", "ce2")
                    ) -> dict[str, Path]:
    """The models ``names`` that a report evaluated for ``seed``, found where it says and
    checked to be the same weights (the ``weights_sha256`` of its manifests), so that a
    model trained again since, or another machine's, is never taken for it.

    >>> recorded_models({"models": {"0": {"bi": {"path": "/no/such/model", "manifest": {}}}}},
    ...                 0, ["bi"])  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    mathir.errors.InputError: seed 0's bi model is not on this machine ...
    """
    found: dict[str, Path] = {}
    entries = (report.get("models") or {}).get(str(seed)) or {}
    for name in names:
        entry = entries.get(name) or {}
        path = Path(entry.get("path") or f"<no {name} model in the report>")
        try:
            weights = weights_checksum(path)
        except InputError:
            raise InputError(f"seed {seed}'s {name} model is not on this machine: the seed "
                             f"ensemble needs every seed's models (`mathir reproduce worldtree "
                             f"--seed {seed}` trains them again, and writes a new report)",
                             path=path) from None
        if weights != (entry.get("manifest") or {}).get("weights_sha256"):
            raise InputError(f"seed {seed}'s {name} model is not the one its report "
                             f"evaluated (its weights differ from the report's "
                             f"weights_sha256): combine the report of the models there now",
                             path=path)
        found[name] = path
    return found


def combine_reports(reports: Sequence[str | Path], out: str | Path | None = None,
                    ensemble: bool = False,
                    progress: Callable[[str], None] | None = None) -> dict:
    """One table from the ``worldtree.json`` reports of runs of single seeds.

    Three seeds' trainings do not fit in one working session of a 2-core machine that
    keeps nothing between sessions; one seed does. Each session runs
    ``mathir reproduce worldtree --seed S`` and keeps its report (a few kB; the models
    are not needed afterwards); this puts the reports together: every seed's MAP, the
    mean ± standard deviation, the reference rows, and how many Test evaluations each
    report logged. The reports must be of distinct seeds and of the same training (the
    ``reproduce`` entries of their models' manifests equal but for what the seed
    changes: recipe, Train file and packaged base-model checksums, training code and
    library versions; not the seeded training pairs); their Dev and
    Test splits and data must agree. Writes ``worldtree.md`` and ``worldtree.json`` to
    ``out`` when given.

    ``ensemble``: also evaluate the seed ensemble on the reports' splits (runs in
    ``out/runs``, Test runs logged in ``out/test_evaluations.jsonl``), with the models
    the reports evaluated: each must still be where its report says, with the same
    weights (:func:`recorded_models`), so the machine must hold every seed's models.
    ``progress`` gets one line per stage (default: stderr).

    >>> combine_reports([])  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    mathir.errors.InputError: no report to combine
    """
    if not reports:
        raise InputError("no report to combine")
    if ensemble and out is None:
        raise InputError("the seed ensemble's runs and table go to an --out folder: give one")
    loaded = []
    for path in reports:
        try:
            report = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise InputError(f"not a readable reproduce report: {e}", path=path) from None
        if not isinstance(report, dict) or report.get("task") != "worldtree" or \
                not isinstance(report.get("models"), dict):
            raise InputError("not a report of `mathir reproduce worldtree` (worldtree.json)",
                             path=path)
        loaded.append((Path(path), report))
    first_path, first = loaded[0]
    seeds: list[int] = []
    runs: dict[str, dict] = {}
    reference_differs: dict[str, dict] = {}
    shared: dict[str, dict] = {}  # model (bi, ce1, ce2) -> its training but for the seed
    for path, report in loaded:
        for key in ("data", "splits", "smoke", "max_questions"):
            if report.get(key) != first.get(key):
                raise InputError(f"its {key} ({report.get(key)!r}) differs from that of "
                                 f"{first_path} ({first.get(key)!r})", path=path)
        for seed in report["seeds"]:
            if seed in seeds:
                raise InputError(f"seed {seed} is in two reports", path=path)
            seeds.append(seed)
            for model, entry in report["models"][str(seed)].items():
                key = ((entry.get("manifest") or {}).get("reproduce") or {})
                mine = {k: key.get(k) for k in _SHARED_KEY}
                if not (key.get("recipe") or {}).get("base"):  # from the packaged model
                    mine["base_weights_sha256"] = key.get("base_weights_sha256")
                if shared.setdefault(model, mine) != mine:
                    changed = sorted(k for k in mine if mine[k] != shared[model].get(k))
                    raise InputError(f"seed {seed}'s {model} was trained differently from "
                                     f"seed {seeds[0]}'s: {', '.join(changed)}", path=path)
            for split, by_run in report["runs"].items():
                if f"seed{seed}" in by_run:
                    runs.setdefault(split, {})[f"seed{seed}"] = by_run[f"seed{seed}"]
        if report.get("reference") != first.get("reference"):  # deterministic: a warning sign
            reference_differs[str(path)] = report.get("reference")
    reference = first.get("reference", {})
    for split in runs:
        if any(split in maps for maps in reference.values()):
            runs[split]["reference"] = {name: maps[split] for name, maps in reference.items()
                                        if split in maps}
    ensemble_test: dict | None = None
    if ensemble:
        ensemble_test = _combined_ensemble(loaded, seeds, runs, Path(out), _Progress(progress))
    summary = summarise(runs, seeds)
    combined = {
        "task": "worldtree", "data": first.get("data"), "seeds": seeds,
        "splits": first.get("splits"), "ensemble": bool(ensemble),
        "smoke": first.get("smoke"), "max_questions": first.get("max_questions"),
        "recipes": first.get("recipes"),
        "models": {str(s): r["models"][str(s)] for _, r in loaded for s in r["seeds"]},
        "summary": summary, "runs": runs, "reference": reference,
        "headline": _headline(summary),
        "combined_from": [{"report": str(path), "seeds": r["seeds"],
                           "test_evaluations": r.get("test_evaluations"),
                           "seconds": r.get("seconds"), "cpu_seconds": r.get("cpu_seconds")}
                          for path, r in loaded],
        "reference_differs": reference_differs,
    }
    if ensemble_test is not None:
        combined["test_evaluations"] = ensemble_test
    if out is not None:
        _write_report(combined, require_writable_dir(out, "--out folder"))
    return combined


def _combined_ensemble(loaded: list[tuple[Path, dict]], seeds: list[int], runs: dict,
                       out: Path, progress: _Progress) -> dict:
    """Evaluate the seed ensemble of combined reports into ``runs`` (each split's
    ``ensemble``); what it logged of Test."""
    from mathir.tasks import get_task

    if len(seeds) < 2:
        raise InputError("a seed ensemble needs the reports of two seeds or more")
    _, first = loaded[0]
    if first.get("smoke") and first.get("max_questions") is None:
        raise InputError("these reports are of tiny runs that do not record their questions: "
                         "the ensemble cannot be evaluated on the same ones")
    # Every model is checked before anything is evaluated.
    models = {seed: recorded_models(report, seed) for _, report in loaded
              for seed in report["seeds"]}
    out = require_writable_dir(out, "--out folder")
    task = get_task("worldtree")
    data = None if first.get("data") == "sample" else first.get("data")
    index_dir = out / "runs" / ".index" / "worldtree"
    computed_test: list[str] = []
    for split_name in first.get("splits") or []:
        split = _split(task, data, split_name, first.get("max_questions"), out / "data")
        runs.setdefault(split_name, {})["ensemble"], computed = _evaluate_ensemble(
            task, split, seeds, models, out / "runs" / split_name, index_dir, progress,
            split_name.capitalize())
        computed_test += [f"ensemble {p}" for p in computed if split_name == "test"]
    return _log_test_evaluations(out, first.get("data"), computed_test)


def _log_test_evaluations(out: Path, data: str | None, computed_test: list[str]) -> dict:
    """Append the Test runs computed now to ``out/test_evaluations.jsonl`` (when any);
    what the report says of them: those runs, the log and how many entries it holds."""
    log = out / "test_evaluations.jsonl"
    if computed_test:
        from mathir.runs.provenance import git_state

        with open(log, "a", encoding="utf-8") as f:
            f.write(json.dumps({"time": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "git": git_state(),
                                "data": data, "computed": computed_test}) + "\n")
    logged = len(log.read_text(encoding="utf-8").splitlines()) if log.is_file() else 0
    return {"computed_now": computed_test, "logged_in": str(log), "logged_evaluations": logged}


def not_ignored_by_git(path: str | Path) -> bool:
    """Whether ``path`` lies in a git checkout that does not ignore it (models of hundreds
    of MB each do not belong in the history); False outside a checkout or without git.

    >>> import tempfile
    >>> not_ignored_by_git(tempfile.mkdtemp())
    False
    """
    import subprocess

    p = Path(path).resolve()
    where = next(q for q in (p, *p.parents) if q.is_dir())
    try:
        proc = subprocess.run(["git", "-C", str(where), "check-ignore", "-q", str(p)],
                              capture_output=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return False
    return proc.returncode == 1  # 0: ignored; 128: not in a checkout


def _cpu_seconds() -> float:
    import resource

    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def reproduce_worldtree(data: str | Path | None = None, seeds: Sequence[int] = (0, 1, 2),
                        models_dir: str | Path = "models/reproduce",
                        out: str | Path = "runs/reproduce",
                        evaluate: Sequence[str] = ("dev", "test"), ensemble: bool = False,
                        parallel: bool = True, reference: bool = True, device: str = "cpu",
                        smoke: bool = False, max_questions: int | None = None,
                        max_steps: int | None = None, max_length: int | None = None,
                        progress: Callable[[str], None] | None = None) -> dict:
    """Train the WorldTree headline's models for ``seeds``, evaluate, write the table.

    ``data``: the WorldTree distribution (None: the embedded sample, a smoke test of
    the command, not the headline). Models go to ``models_dir/worldtree`` (reused when
    their manifests match, see the module docstring); runs, ``worldtree.md`` and
    ``worldtree.json`` to ``out``. ``evaluate``: the splits to evaluate on (Dev is the
    split choices are made on; Test is for reporting, and every Test run computed is
    logged in ``out/test_evaluations.jsonl``). ``ensemble``: also the seed ensemble
    (:func:`mathir.pipelines.worldtree_ltr.ltr_reranked` with every seed's models).
    ``parallel``: train in subprocesses, the bi-encoder and the first cross-encoder
    stage side by side (else one after the other, here). ``smoke`` (or ``max_questions``,
    ``max_steps``, ``max_length``): a tiny configuration whose models go to
    ``models_dir/worldtree-smoke``. ``progress`` gets one line per stage (default:
    stderr). Returns the report (what ``worldtree.json`` holds).

    >>> reproduce_worldtree(seeds=[])  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    mathir.errors.InputError: no seed to train
    """
    from mathir.models import require_extra
    from mathir.tasks import get_task

    require_extra("neural", "mathir reproduce worldtree")
    seeds = list(dict.fromkeys(int(s) for s in seeds))
    if not seeds:
        raise InputError("no seed to train")
    evaluate = [s.lower() for s in evaluate]
    for s in evaluate:
        if s not in ("dev", "test"):
            raise InputError(f"cannot evaluate on {s!r}: dev or test (models train on Train)")
    if smoke:
        max_questions = max_questions or SMOKE["max_questions"]
        max_steps = max_steps or SMOKE["max_steps"]
        max_length = max_length or SMOKE["max_length"]
    tiny = any(v is not None for v in (max_questions, max_steps, max_length))
    recipes = [dataclasses.replace(r, max_steps=max_steps if max_steps is not None else r.max_steps,
                                   max_length=max_length or r.max_length)
               for r in WORLDTREE_RECIPES]
    progress = _Progress(progress)
    out = require_writable_dir(out, "--out folder")
    root = Path(models_dir) / ("worldtree-smoke" if tiny else "worldtree")
    require_writable_dir(root, "--models folder")
    if not_ignored_by_git(root):
        import warnings

        warnings.warn(f"{root} is not ignored by git: add its folder to .gitignore "
                      "(`models/` is there)", stacklevel=2)
    task = get_task("worldtree")
    started, cpu0 = time.perf_counter(), _cpu_seconds()
    if data is None:
        progress("no --data: the embedded sample (a test of the command, not the headline)")
    models = _train_all(task, data, seeds, recipes, root, max_questions, device, parallel,
                        progress)
    trained = time.perf_counter()
    runs: dict[str, dict] = {}
    reference_maps: dict[str, dict] = {}
    computed_test: list[str] = []
    index_dir = out / "runs" / ".index" / "worldtree"
    for split_name in evaluate:
        split = _split(task, data, split_name, max_questions, out / "data")
        runs_dir, name = out / "runs" / split_name, split_name.capitalize()
        by_run: dict[str, dict] = {}
        for seed in seeds:
            options = {"bi_encoder": str(models[seed]["bi"]),
                       "cross_encoder": str(models[seed]["ce2"])}
            by_run[f"seed{seed}"], computed = _evaluate(
                task, split, WORLDTREE_PIPELINES, options, runs_dir / f"seed{seed}", index_dir,
                progress, f"{name} seed {seed}")
            computed_test += [f"seed {seed} {p}" for p in computed if split_name == "test"]
        if ensemble and len(seeds) > 1:
            by_run["ensemble"], computed = _evaluate_ensemble(
                task, split, seeds, models, runs_dir, index_dir, progress, name)
            computed_test += [f"ensemble {p}" for p in computed if split_name == "test"]
        if reference:
            by_run["reference"], computed = _evaluate(
                task, split, WORLDTREE_REFERENCE, {}, runs_dir / "reference", index_dir,
                progress, f"{name} reference")
            computed_test += [p for p in computed if split_name == "test"]
            for name, values in by_run["reference"].items():
                reference_maps.setdefault(name, {})[split_name] = values
        runs[split_name] = by_run
    test_evaluations = _log_test_evaluations(out, str(data) if data else "sample",
                                             computed_test)
    summary = summarise(runs, seeds)
    report = {
        "task": "worldtree", "data": str(data) if data else "sample", "seeds": seeds,
        "splits": evaluate, "ensemble": bool(ensemble and len(seeds) > 1),
        "smoke": tiny, "max_questions": max_questions,
        "recipes": [r.describe() for r in recipes],
        "models": {str(s): {name: {"path": str(p), "manifest": read_manifest(p)}
                            for name, p in models[s].items()} for s in seeds},
        "summary": summary, "runs": runs, "reference": reference_maps,
        "headline": _headline(summary),
        "test_evaluations": test_evaluations,
        "seconds": {"training": round(trained - started, 1),
                    "evaluation": round(time.perf_counter() - trained, 1),
                    "total": round(time.perf_counter() - started, 1)},
        "cpu_seconds": round(_cpu_seconds() - cpu0, 1),
    }
    _write_report(report, out)
    progress(f"done: {out / 'worldtree.md'}, {out / 'worldtree.json'}")
    return report
