"""The task registry: a task is a small declaration, one module per task family.

A :class:`Task` names where its topics, qrels and collection are found, how runs are
read and written, which measures evaluate it, and its pipelines. Each family's module
(:mod:`mathir.tasks.arqmath`, :mod:`~mathir.tasks.worldtree`,
:mod:`~mathir.tasks.word_problems`) declares its tasks and registers them, as
ir_datasets' collection modules do. Stages are named by ``"module:function"``
references (:class:`Ref`) that import on first use, so reading the registry (``mathir
tasks``, ``mathir --help``) imports neither PyTerrier nor any pipeline.

>>> {'arqmath-task1', 'arqmath-task3'} <= set(TASKS)
True
>>> TASKS["arqmath-task1"].default_pipelines
('tfidf', 'bm25')
"""

from __future__ import annotations

import hashlib
import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from mathir.errors import InputError
from mathir.storage import walk_glob


class Ref:
    """A function or class named by ``"module:attribute"``, imported on first call.

    >>> join = Ref("os.path:join")
    >>> join("a", "b"), join
    ('a/b', Ref('os.path:join'))
    """

    __slots__ = ("target", "_value")

    def __init__(self, target: str):
        if ":" not in target:
            raise ValueError(f"a reference is 'module:attribute', not {target!r}")
        self.target = target
        self._value = None

    def resolve(self) -> Any:
        """The referenced object (imported once)."""
        if self._value is None:
            module, _, attribute = self.target.partition(":")
            value = importlib.import_module(module)
            for part in attribute.split("."):
                value = getattr(value, part)
            self._value = value
        return self._value

    def __call__(self, *args, **kwargs):
        return self.resolve()(*args, **kwargs)

    def __repr__(self) -> str:
        return f"Ref({self.target!r})"

    def __eq__(self, other) -> bool:
        return isinstance(other, Ref) and other.target == self.target

    def __hash__(self) -> int:
        return hash(self.target)

    def __getstate__(self):
        return self.target

    def __setstate__(self, target):
        self.target, self._value = target, None


#: A stage of a task: a callable, or a "module:attribute" string made into a :class:`Ref`.
Stage = Callable[..., Any] | str


def _stage(value):
    return Ref(value) if isinstance(value, str) else value


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
    # Per-topic information for report breakdowns (ARQMath: category, difficulty, ...).
    metadata: Path | None = None


@dataclass(frozen=True)
class Task:
    """Declaration of a task; see :data:`TASKS`.

    Every stage (``read_topics``, ``evaluate``, each pipeline, ...) is a callable or a
    ``"module:function"`` string, imported when first used.
    """

    name: str
    description: str
    #: measure name -> what it measures (the names of the task's evaluation table)
    measures: Mapping[str, str]
    primary_measure: str
    #: pipeline name -> factory ``(index, **kwargs) -> pt.Transformer``
    pipelines: Mapping[str, Stage]
    default_pipelines: tuple[str, ...]
    #: (data root or None for the sample, year/split, collection or None) -> TaskData
    locate: Stage
    read_topics: Stage
    read_qrels: Stage
    read_run: Stage
    write_run: Stage
    #: (TaskData, index directory, quiet) -> index
    build_index: Stage
    #: (runs by name, qrels, **options such as formula_index=PATH) -> run x measure table
    evaluate: Stage
    years: tuple[str, ...] = field(default_factory=tuple)
    #: run file formats ``write_run`` takes (the first is the default, the submission one)
    run_formats: tuple[str, ...] = ("arqmath",)
    # Judge only what the collection holds, so a perfect ranking of a sub-collection
    # (e.g. the judged pool of thread HTML files) scores 1.0.
    qrels_in_collection: bool = False
    # (runs by name, qrels, output folder, **extras) -> {what: path} of extra files that
    # `run_experiment` writes beside the runs (e.g. WorldTree's MAP-by-length histogram).
    report: Stage | None = None
    # (runs by name, qrels, **extras) -> {run: frame of qid + one column per measure}:
    # per-topic scores for significance tests and per-topic plots.
    per_topic: Stage | None = None
    # index directory -> index object, so that worker processes can reopen the index.
    open_index: Stage | None = None

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "pipelines":
                object.__setattr__(self, f.name, {k: _stage(v) for k, v in value.items()})
            elif isinstance(value, str) and f.name not in ("name", "description",
                                                          "primary_measure"):
                object.__setattr__(self, f.name, Ref(value))

    def data(self, data: str | Path | None = None, year: str | None = None,
             collection: str | Path | None = None) -> TaskData:
        """Locate the files: the embedded sample when ``data`` is None."""
        return self.locate(Path(data) if data else None, year,
                           Path(collection) if collection else None)

    def pipeline(self, name: str, index, **kwargs):
        """The task's pipeline ``name`` over ``index``."""
        if name not in self.pipelines:
            raise InputError(f"unknown pipeline {name!r} for {self.name}; "
                             f"available: {', '.join(self.pipelines)}")
        return self.pipelines[name](index, **kwargs)

    def check_run_format(self, run_format: str) -> str:
        """``run_format`` when this task writes it; InputError otherwise (checked before
        any work, not when the first run is written).

        >>> get_task("arqmath-task2").check_run_format("trec")  # doctest: +IGNORE_EXCEPTION_DETAIL
        Traceback (most recent call last):
        mathir.errors.InputError: arqmath-task2 writes run files as arqmath, not 'trec'
        """
        if run_format not in self.run_formats:
            raise InputError(f"{self.name} writes run files as {', '.join(self.run_formats)}, "
                             f"not {run_format!r}")
        return run_format

    def index(self, data: TaskData, index_dir: str | Path | None = None,
              quiet: bool = False, cache_root: str | Path = "indexes", **build_options):
        """Build (or reuse) the index of ``data``'s collection.

        ``build_options`` go to the task's index builder, for the options it has (e.g.
        ``shards`` and ``ray_address`` for ``arqmath-task2``'s formula index); another
        option is an InputError naming the ones it has.
        """
        if index_dir is None:
            key = hashlib.sha1(str(data.collection.resolve()).encode()).hexdigest()[:10]
            index_dir = Path(cache_root) / f"{self.name}-{data.collection.name}-{key}"
        elif Path(index_dir).exists() and not Path(index_dir).is_dir():
            raise InputError("the index directory is a file", path=index_dir)
        if build_options:
            import inspect

            builder = self.build_index
            params = inspect.signature(builder.resolve() if isinstance(builder, Ref)
                                       else builder).parameters
            known = [n for n, p in params.items() if p.kind is p.KEYWORD_ONLY]
            unknown = sorted(set(build_options) - set(known))
            if unknown:
                raise InputError(f"{self.name}'s index has no option {', '.join(unknown)}"
                                 + (f" (its options: {', '.join(known)})" if known else ""))
        return self.build_index(data, Path(index_dir), quiet, **build_options)


#: Every registered task, by name.
TASKS: dict[str, Task] = {}


def register(task: Task) -> Task:
    """Add ``task`` to :data:`TASKS` (a task family's module calls this for each task)."""
    if task.name in TASKS and TASKS[task.name] is not task:
        raise ValueError(f"a task named {task.name!r} is already registered")
    TASKS[task.name] = task
    return task


def get_task(name: str) -> Task:
    """The task called ``name``; InputError listing the known ones otherwise.

    >>> get_task("worldtree").primary_measure
    'MAP'
    """
    try:
        return TASKS[name]
    except KeyError:
        raise InputError(f"unknown task {name!r}; available: {', '.join(TASKS)}") from None


# --- shared by the task declarations -----------------------------------------------------

def data_root(root: Path) -> Path:
    """``root`` when it is a folder; InputError otherwise."""
    if not root.is_dir():
        raise InputError("data directory not found", path=root)
    return root


def find_file(root: Path, pattern: str, what: str) -> Path:
    """The first file or folder under ``root`` matching ``pattern`` (links followed)."""
    hits = walk_glob(root, pattern)
    if not hits:
        raise InputError(f"no {what} matching {pattern!r} under the data directory", path=root)
    return hits[0]


def choose(value: str | None, allowed: tuple[str, ...], default: str, what: str) -> str:
    """``value`` (or ``default``) when it is one of ``allowed``; InputError otherwise.

    >>> choose(None, ("2021", "2022"), "2022", "ARQMath year")
    '2022'
    """
    value = value or default
    if value not in allowed:
        raise InputError(f"unknown {what} {value!r}; expected one of {list(allowed)}")
    return value


def no_options(options: Mapping[str, object]) -> None:
    """InputError naming options that a task's evaluation does not use."""
    if options:
        raise InputError(f"options not used by this task: {', '.join(sorted(options))}")


#: The task families, in the order their tasks are listed; each registers its tasks when
#: imported (at the end of this module: they use the above). A new family is a module
#: here plus its name in this tuple.
FAMILIES = ("arqmath", "worldtree", "word_problems")
for _family in FAMILIES:
    importlib.import_module(f"{__name__}.{_family}")
