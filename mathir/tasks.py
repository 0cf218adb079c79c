"""The task registry: one small declaration per task (read it to see everything).

A :class:`Task` names where its topics, qrels and collection are found, how runs are
read and written, which measures evaluate it, and its default pipelines. ``tasks.py``
and ``cli.py`` are the only modules that wire the stages together.

>>> sorted(TASKS)
['arqmath-task1']
>>> TASKS["arqmath-task1"].default_pipelines
('tfidf', 'bm25')
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import ir_measures
import pandas as pd
import pyterrier as pt

from mathir.errors import InputError
from mathir.evaluation.prime import ARQMATH_MEASURES, compare
from mathir.indexing.answer_index import AnswerCollection, AnswerIndex
from mathir.pipelines import lexical
from mathir.qrels.arqmath import read_qrels
from mathir.runs.arqmath import read_run, write_run
from mathir.samples import arqmath_sample
from mathir.topics.arqmath import read_task1_topics


@dataclass(frozen=True)
class TaskData:
    """The files of one evaluation: collection, topics, qrels (None when unjudged).

    ``extras`` holds what a task's evaluation needs besides (e.g. a formula index TSV
    for visual ids, a Task 3 assignment file), by option name.
    """

    label: str  # "sample", or the year / split
    collection: Path
    topics: Path
    qrels: Path | None
    extras: Mapping[str, Path] = field(default_factory=dict)


@dataclass(frozen=True)
class Task:
    """Declaration of a task; see :data:`TASKS`."""

    name: str
    description: str
    measures: Mapping[str, ir_measures.Measure]
    primary_measure: str
    pipelines: Mapping[str, Callable[..., pt.Transformer]]
    default_pipelines: tuple[str, ...]
    locate: Callable[[Path | None, str | None, Path | None], TaskData]
    read_topics: Callable[[Path], pd.DataFrame]
    read_qrels: Callable[[Path], pd.DataFrame]
    read_run: Callable[..., pd.DataFrame]
    write_run: Callable[..., Path]
    build_index: Callable[..., object]
    # (runs by name, qrels, **options such as formula_index=PATH) -> run x measure table
    evaluate: Callable[..., pd.DataFrame]
    years: tuple[str, ...] = field(default_factory=tuple)
    # Judge only what the collection holds, so a perfect ranking of a sub-collection
    # (e.g. the judged pool of thread HTML files) scores 1.0.
    qrels_in_collection: bool = False

    def data(self, data: str | Path | None = None, year: str | None = None,
             collection: str | Path | None = None) -> TaskData:
        """Locate the files: the embedded sample when ``data`` is None."""
        return self.locate(Path(data) if data else None, year,
                           Path(collection) if collection else None)

    def pipeline(self, name: str, index, **kwargs) -> pt.Transformer:
        """The task's pipeline ``name`` over ``index``."""
        if name not in self.pipelines:
            raise InputError(f"unknown pipeline {name!r} for {self.name}; "
                             f"available: {', '.join(self.pipelines)}")
        return self.pipelines[name](index, **kwargs)

    def index(self, data: TaskData, index_dir: str | Path | None = None,
              quiet: bool = False, cache_root: str | Path = "indexes"):
        """Build (or reuse) the index of ``data``'s collection."""
        if index_dir is None:
            key = hashlib.sha1(str(data.collection.resolve()).encode()).hexdigest()[:10]
            index_dir = Path(cache_root) / f"{self.name}-{data.collection.name}-{key}"
        return self.build_index(data.collection, index_dir, quiet=quiet)


# --- ARQMath Task 1 ---------------------------------------------------------------

ARQMATH_YEARS = ("2020", "2021", "2022")


def _find(root: Path, pattern: str, what: str) -> Path:
    hits = sorted(root.rglob(pattern))
    if not hits:
        raise InputError(f"no {what} matching {pattern!r} under the data directory", path=root)
    return hits[0]


def _locate_arqmath_task1(root: Path | None, year: str | None,
                          collection: Path | None) -> TaskData:
    if root is None:
        s = arqmath_sample()
        return TaskData("sample", collection or s.posts, s.task1_topics, s.task1_qrels)
    if not root.is_dir():
        raise InputError("data directory not found", path=root)
    year = year or ARQMATH_YEARS[-1]
    if year not in ARQMATH_YEARS:
        raise InputError(f"unknown ARQMath year {year!r}; expected one of {list(ARQMATH_YEARS)}")
    topics = _find(root, f"Topics_Task1_{year}*.xml", "Task 1 topics")
    qrels = _find(root, f"qrel_task1_{year}_official.tsv", "Task 1 qrels")
    if collection is None:
        posts = sorted(root.rglob("Posts.V1.3.xml"))
        if posts:
            collection = posts[0]
        else:
            dirs = sorted(p for p in root.rglob("thread_html*") if p.is_dir())
            if not dirs:
                raise InputError("no collection (Posts.V1.3.xml or a thread_html* directory) "
                                 "under the data directory; pass --collection", path=root)
            collection = dirs[0]
    return TaskData(year, collection, topics, qrels)


def _build_answer_index(collection: Path, index_dir: Path, quiet: bool = False) -> AnswerIndex:
    return AnswerIndex.build(AnswerCollection.at(collection), index_dir, quiet=quiet)


def _evaluate_prime(runs: Mapping[str, pd.DataFrame], qrels: pd.DataFrame,
                    **options) -> pd.DataFrame:
    if options:
        raise InputError(f"options not used by this task: {', '.join(sorted(options))}")
    return compare(runs, qrels, ARQMATH_MEASURES)


ARQMATH_TASK1 = Task(
    name="arqmath-task1",
    description="ARQMath Task 1: answer retrieval for Math StackExchange questions",
    measures=ARQMATH_MEASURES,
    primary_measure="nDCG'",
    pipelines={"tfidf": lexical.tfidf, "bm25": lexical.bm25},
    default_pipelines=("tfidf", "bm25"),
    locate=_locate_arqmath_task1,
    read_topics=read_task1_topics,
    read_qrels=read_qrels,
    read_run=read_run,
    write_run=write_run,
    build_index=_build_answer_index,
    evaluate=_evaluate_prime,
    years=ARQMATH_YEARS,
    qrels_in_collection=True,
)

TASKS: dict[str, Task] = {t.name: t for t in (ARQMATH_TASK1,)}


def get_task(name: str) -> Task:
    """The task called ``name``; InputError listing the known ones otherwise."""
    try:
        return TASKS[name]
    except KeyError:
        raise InputError(f"unknown task {name!r}; available: {', '.join(TASKS)}") from None


@dataclass
class ExperimentResult:
    """What :func:`run_experiment` produced: run files and the comparison table."""

    task: str
    data: TaskData
    runs: dict[str, Path]
    table: pd.DataFrame | None
    seconds: dict[str, float]


def run_pipeline(task: Task, name: str, index, topics: pd.DataFrame, out: Path,
                 quiet: bool = False, **kwargs) -> Path:
    """Run one named pipeline over ``topics`` and write its run file to ``out``."""
    pipe = task.pipeline(name, index, verbose=not quiet, **kwargs)
    results = pipe.transform(topics)
    return task.write_run(results, out, name=out.stem, topics=topics["qid"])


def run_experiment(task: Task | str, data: TaskData | None = None,
                   pipelines: list[str] | None = None, out: str | Path = "runs",
                   index_dir: str | Path | None = None, quiet: bool = False) -> ExperimentResult:
    """Index, run each pipeline, write run files and evaluate them.

    Runs go to ``out/<task>/<data label>/<pipeline>.tsv``.

    >>> import tempfile
    >>> res = run_experiment("arqmath-task1", out=tempfile.mkdtemp(), quiet=True,
    ...                      index_dir=tempfile.mkdtemp() + "/idx")
    >>> list(res.table.index)
    ['tfidf', 'bm25']
    """
    task = get_task(task) if isinstance(task, str) else task
    data = data or task.data()
    names = list(pipelines or task.default_pipelines)
    for n in names:
        if n not in task.pipelines:
            raise InputError(f"unknown pipeline {n!r} for {task.name}; "
                             f"available: {', '.join(task.pipelines)}")
    out = Path(out)
    topics = task.read_topics(data.topics)
    qrels = task.read_qrels(data.qrels) if data.qrels else None
    t0 = time.perf_counter()
    index = task.index(data, index_dir, quiet=quiet, cache_root=out / ".index")
    seconds = {"index": time.perf_counter() - t0}
    runs: dict[str, Path] = {}
    for n in names:
        t0 = time.perf_counter()
        runs[n] = run_pipeline(task, n, index, topics, out / task.name / data.label / f"{n}.tsv",
                               quiet=quiet)
        seconds[n] = time.perf_counter() - t0
    table = None
    if qrels is not None:
        if task.qrels_in_collection:
            qrels = qrels[qrels["docno"].isin(set(index.docnos()))]
            if qrels.empty:
                raise InputError("no judged document of these qrels is in the collection",
                                 path=data.qrels)
        known = set(topics["qid"])
        table = task.evaluate({n: task.read_run(p, topics=known) for n, p in runs.items()},
                              qrels, **data.extras)
    return ExperimentResult(task.name, data, runs, table, seconds)


def evaluate_runs(task: Task | str, qrels_path: str | Path, run_paths: list[str | Path],
                  topics_path: str | Path | None = None, **options) -> pd.DataFrame:
    """Evaluate run files against a qrels file; rows are named by file stem.

    With ``topics_path``, a run line for a topic outside those topics is an error.
    ``options`` go to the task's evaluation (e.g. ``formula_index=PATH``).
    """
    task = get_task(task) if isinstance(task, str) else task
    qrels = task.read_qrels(qrels_path)
    known = set(task.read_topics(topics_path)["qid"]) if topics_path else None
    runs = {}
    for p in run_paths:
        name = Path(p).stem
        if name in runs:
            raise InputError(f"two runs are named {name!r} (file stem); rename one", path=p)
        runs[name] = task.read_run(p, topics=known)
    return task.evaluate(runs, qrels, **options)
