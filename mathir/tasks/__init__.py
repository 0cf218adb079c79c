"""The task registry: a task is one declaration, one module per task family.

A :class:`Task` declares, once, everything mathir knows of a task: per year or split the
files it needs and where they are published (:class:`Split`, :class:`Need`,
:class:`Published`: the missing-file messages, the ``mathir:`` PyTerrier datasets and
``mathir tasks`` come from them), its measures (:class:`Measure`: the table's columns,
``mathir tasks`` and the docs), its run formats (the first, the task's own, is the
default), its evaluation options (:class:`Option`: the flags of ``mathir evaluate``),
its pipelines and, optionally, a sample. Each family's module (:mod:`mathir.tasks.arqmath`,
:mod:`~mathir.tasks.worldtree`, :mod:`~mathir.tasks.word_problems`) declares its tasks and
registers them, as ir_datasets' collection modules do; a package outside mathir adds
one through the ``mathir.tasks`` entry point (:data:`ENTRY_POINT_GROUP`). Stages are
named by ``"module:function"`` references (:class:`Ref`) that import on first use, so
reading the registry (``mathir tasks``, ``mathir --help``) imports neither PyTerrier nor
any pipeline.

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
from mathir.evaluation.measures import Measure
from mathir.storage import walk_glob

__all__ = ["DATA_ENV", "ENTRY_POINT_GROUP", "FAMILIES", "TASKS", "Measure", "Need", "Option",
           "Published", "QrelsVariant", "Ref", "Split", "Task", "TaskData", "choose",
           "data_folder", "data_root", "derive_task", "find_file", "get_task",
           "load_entry_points", "no_options", "register", "register_task"]


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
    #: the data folder the files were found in (None: the embedded sample)
    root: Path | None = None
    #: the topics evaluated, when a task selects some (a derived task); None: every topic
    topic_ids: tuple[str, ...] | None = None
    #: what the evaluation of these files needs besides the extras (e.g. Task 2's
    #: ``qrels_key`` for formula-id qrels), by option name
    options: Mapping[str, Any] = field(default_factory=dict)

    def select(self, frame):
        """``frame`` (topics, qrels or a run) restricted to :attr:`topic_ids` (all when None)."""
        if self.topic_ids is None or frame is None:
            return frame
        out = frame[frame["qid"].astype(str).isin(set(self.topic_ids))].reset_index(drop=True)
        out.attrs.update(frame.attrs)
        return out


@dataclass(frozen=True)
class Need:
    """A file or folder an evaluation needs: any of ``patterns`` under the data folder.

    Named in the message when it is missing; ``collection``: ``--collection`` (or
    ``collection=``) gives it instead.

    >>> Need(("Posts.V1.3.xml", "threads_all"), "the answers").describe()
    'Posts.V1.3.xml or threads_all (the answers)'
    """

    patterns: tuple[str, ...]
    what: str
    collection: bool = False

    def describe(self) -> str:
        return " or ".join(self.patterns) + f" ({self.what})"

    def found(self, root: Path) -> bool:
        """Whether a file or folder under ``root`` matches."""
        return any(walk_glob(root, p) for p in self.patterns)


@dataclass(frozen=True)
class QrelsVariant:
    """A published judgment file of a task besides its official qrels, chosen by name
    (``--qrels NAME``, ``get_qrels(NAME)``): ``pattern`` is found under the data folder
    (``{year}`` is the year or split), ``options`` go to the evaluation.

    >>> QrelsVariant("all", "qrel_task1_{year}_all.tsv", "every judgment").file_pattern("2021")
    'qrel_task1_2021_all.tsv'
    """

    name: str
    pattern: str
    what: str
    options: Mapping[str, str] = field(default_factory=dict)

    def file_pattern(self, label: str) -> str:
        return self.pattern.replace("{year}", label)


@dataclass(frozen=True)
class Published:
    """What a task's files are and where they are published (they are never downloaded:
    the collections are behind pages or licences)."""

    what: str
    url: str


@dataclass(frozen=True)
class Split:
    """One evaluation of a task as a dataset, ``mathir:<dataset>/<name>``.

    ``label`` is what :meth:`Task.data` takes as the year or split (None: the task's
    default), ``needs`` the files it needs, ``sample``: the embedded sample (no files).
    """

    name: str
    label: str | None
    needs: tuple[Need, ...] = ()
    sample: bool = False


@dataclass(frozen=True)
class Option:
    """An option of a task's evaluation: a keyword of its evaluator and a flag of
    ``mathir evaluate`` (``formula_index`` -> ``--formula-index``).

    >>> Option("formula_index", "formula index TSV").flag
    '--formula-index'
    """

    name: str
    help: str
    choices: tuple[str, ...] = ()
    type: Callable[[str], Any] = str
    metavar: str | None = None

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")


def _measures(value) -> tuple[Measure, ...]:
    if isinstance(value, Mapping):  # {name: description}
        return tuple(Measure(n, d) for n, d in value.items())
    out = tuple(value)
    if not all(isinstance(m, Measure) for m in out):
        raise TypeError("a task's measures are Measure objects (or a {name: description} map)")
    return out


@dataclass(frozen=True, kw_only=True)
class Task:
    """Declaration of a task; see :data:`TASKS` and ``docs/extending.md``.

    Every stage (``read_topics``, ``per_topic``, each pipeline, ...) is a callable or a
    ``"module:function"`` string, imported when first used. The evaluation is declared
    by the measures: when all of them are ir_measures ones, per-topic scores come from
    them (after ``prepare``, if given) over every qrels topic; otherwise ``per_topic``
    computes them. The table (:meth:`table`) is each run's mean of its per-topic scores
    (:meth:`scores`), one evaluation for every task
    (:func:`mathir.evaluation.evaluated.evaluate`).
    """

    name: str
    description: str
    #: the measures, in the order of the task's table (a {name: description} map is
    #: taken too); a measure is one declaration: its column, ``mathir tasks`` and docs
    measures: tuple[Measure, ...]
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
    years: tuple[str, ...] = field(default_factory=tuple)
    #: run file formats ``write_run`` takes; the first, the task's own, is the default
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
    #: what the files are and where they are published (messages, datasets, docs)
    published: Published | None = None
    #: the evaluations as ``mathir:`` datasets; by default one per year / split (and the
    #: sample when there is one), named by the year or split
    splits: tuple[Split, ...] | None = None
    #: the datasets' name prefix (default: the task's name), e.g. ``arqmath/task1``
    dataset: str | None = None
    #: the PyTerrier Dataset class of its datasets
    dataset_class: Stage = "mathir.datasets:MathirDataset"
    #: whether ``locate(None, ...)`` gives an embedded sample (``mathir demo`` runs those)
    has_sample: bool = True
    #: options of the evaluation: keywords of ``evaluate`` / ``per_topic`` / ``prepare``
    #: and flags of ``mathir evaluate``
    options: tuple[Option, ...] = ()
    #: (runs by name, qrels, **options) -> (runs, qrels) made ready for the measures
    #: (e.g. ARQMath Task 2: formulas to visual ids, one per visual id)
    prepare: Stage | None = None
    #: (TaskData.metadata path) -> frame of ``qid`` + one column per way of grouping
    #: topics, for the report's breakdowns (ARQMath: category, difficulty, dependency)
    topic_groups: Stage | None = None
    #: the order its measures read a run in (:mod:`mathir.evaluation.evaluated`):
    #: ``trec_eval`` (score descending, then docno descending), ``rank`` (the rank
    #: column, as WorldTree's evaluation) or ``given`` (one answer per topic)
    order: str = "trec_eval"
    #: (evaluated runs, topics, TaskData, renderer, depth) -> (topic views, legend): the
    #: run explorer's page of the task (default: the generic ranking view)
    explorer: Stage | None = None
    #: published judgment files besides the official qrels, by name (``--qrels NAME``)
    qrels_variants: tuple[QrelsVariant, ...] = ()
    #: the topics a derived task evaluates: topic ids, or a predicate over the topic
    #: frame (with the topic metadata's columns, e.g. ``category``, where the task has
    #: them) giving a boolean mask; None: every topic (see :func:`derive_task`)
    topic_filter: Any = None

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "pipelines":
                object.__setattr__(self, f.name, {k: _stage(v) for k, v in value.items()})
            elif isinstance(value, str) and f.name not in ("name", "description",
                                                          "primary_measure", "dataset",
                                                          "order"):
                object.__setattr__(self, f.name, Ref(value))
        object.__setattr__(self, "measures", _measures(self.measures))
        names = self.measure_names
        if self.primary_measure not in names:
            raise ValueError(f"{self.name}: the primary measure {self.primary_measure!r} is "
                             f"not one of its measures {list(names)}")
        if self.per_topic is None and not self._by_ir_measures:
            raise ValueError(f"{self.name}: measures that are not ir_measures ones need "
                             "the task's per_topic")
        if self.splits is None:
            splits = tuple(Split(y, y) for y in self.years)
            if self.has_sample:
                splits += (Split("sample", None, sample=True),)
            object.__setattr__(self, "splits", splits)
        unknown = [p for p in self.default_pipelines if p not in self.pipelines]
        if unknown:
            raise ValueError(f"{self.name}: default pipelines {unknown} are not declared")
        if self.order not in ("trec_eval", "rank", "given"):  # evaluated.ORDERS
            raise ValueError(f"{self.name}: order {self.order!r} is not one of trec_eval, "
                             "rank, given")

    @property
    def measure_names(self) -> tuple[str, ...]:
        """The measures' names: the columns of the task's table, in order."""
        return tuple(m.name for m in self.measures)

    def ir_measures(self) -> dict:
        """``{name: ir_measures object}`` of the measures that are ir_measures ones."""
        return {m.name: m.resolve() for m in self.measures if m.ir_measure is not None}

    @property
    def _by_ir_measures(self) -> bool:
        return self.per_topic is None and all(m.ir_measure is not None for m in self.measures)

    @property
    def has_per_topic(self) -> bool:
        """Whether the task gives per-topic scores (significance tests, per-topic files)."""
        return self.per_topic is not None or self._by_ir_measures

    def evaluated(self, runs: Mapping, qrels, **options):
        """:func:`mathir.evaluation.evaluated.evaluate` of ``runs`` against every judgment
        of ``qrels``: the one evaluation (order, judged set, per-topic scores, means)."""
        from mathir.evaluation.evaluated import evaluate

        return evaluate(self, runs, qrels, judged="file", **options)

    def scores(self, runs: Mapping, qrels, **options) -> dict | None:
        """``{run: frame of qid + one column per measure}``: per-topic scores; None when
        the task has only means."""
        return self.evaluated(runs, qrels, **options).per_topic

    def table(self, runs: Mapping, qrels, **options):
        """One row per run (index: run name), one column per measure, in declared order:
        each run's mean of its per-topic scores as trec_eval averages
        (:func:`mathir.evaluation.evaluated.mean_table`)."""
        return self.evaluated(runs, qrels, **options).table

    def evaluation(self, runs: Mapping, qrels, **options) -> tuple:
        """``(table, per-topic scores or None)``, each computed once."""
        ev = self.evaluated(runs, qrels, **options)
        return ev.table, ev.per_topic

    def _columns(self, table):
        """The table's columns in declared order; a column that is not a declared measure
        is an error (a measure is declared once, here). A declared one may be absent when
        the inputs do not allow it (e.g. Task 3's LO and CS without references)."""
        extra = [c for c in table.columns if c not in self.measure_names]
        if extra:
            raise ValueError(f"{self.name}: its evaluation gives {extra}, which are not among "
                             f"its declared measures {list(self.measure_names)}")
        return table[[m for m in self.measure_names if m in table.columns]]

    def data(self, data: str | Path | None = None, year: str | None = None,
             collection: str | Path | None = None, qrels: str | Path | None = None
             ) -> TaskData:
        """Locate the files: the embedded sample when ``data`` is None. ``qrels``: a
        published variant of the judgments by name (:attr:`qrels_variants`, e.g.
        ``"all"``) or a qrels file. A derived task's topic selection is resolved here
        (:attr:`TaskData.topic_ids`)."""
        import dataclasses

        found = self.locate(Path(data) if data else None, year,
                            Path(collection) if collection else None)
        if found.root is None and data:
            found = dataclasses.replace(found, root=Path(data))
        if qrels is not None:
            found = self.with_qrels(found, qrels)
        if self.topic_filter is not None:
            found = dataclasses.replace(found, topic_ids=self.topic_ids(found))
        return found

    def topics(self, data: TaskData):
        """The topics of ``data`` this task evaluates (read, then its selection)."""
        return data.select(self.read_topics(data.topics))

    def qrels(self, data: TaskData):
        """The judgments of ``data`` for those topics; None when unjudged."""
        return data.select(self.read_qrels(data.qrels)) if data.qrels is not None else None

    def with_qrels(self, data: TaskData, qrels: str | Path) -> TaskData:
        """``data`` judged by another qrels: a declared variant's name, or a file."""
        import dataclasses

        variant = next((v for v in self.qrels_variants if v.name == str(qrels)), None)
        if variant is None:
            path = Path(qrels)
            if not path.is_file():
                names = ", ".join(v.name for v in self.qrels_variants) or "none"
                raise InputError(f"--qrels {qrels}: neither a qrels variant of {self.name} "
                                 f"(its variants: {names}) nor a file")
            return dataclasses.replace(data, qrels=path)
        if data.root is None:
            raise InputError(f"qrels variant {variant.name!r} ({variant.what}) is a published "
                             "file: give the data folder (--data DIR, data= in Python)")
        hits = walk_glob(data.root, variant.file_pattern(data.label))
        if not hits:
            raise InputError(f"no {variant.what} ({variant.file_pattern(data.label)}) under "
                             "the data directory", path=data.root)
        return dataclasses.replace(data, qrels=hits[0],
                                   options={**data.options, **variant.options})

    def topic_ids(self, data: TaskData) -> tuple[str, ...]:
        """The topics of ``data`` that this task evaluates (:attr:`topic_filter`)."""
        topics = self.read_topics(data.topics)
        chosen = self.topic_filter
        if callable(chosen):
            frame = topics
            if data.metadata is not None and self.topic_groups is not None:
                frame = topics.merge(self.topic_groups(data.metadata), on="qid", how="left")
            mask = chosen(frame)
            ids = [str(q) for q, keep in zip(frame["qid"], mask, strict=True) if bool(keep)]
        else:
            wanted = {str(q) for q in chosen}
            ids = [str(q) for q in topics["qid"] if str(q) in wanted]
        if not ids:
            raise InputError(f"{self.name}: its topic selection keeps none of the "
                             f"{len(topics)} topics", path=data.topics)
        return tuple(ids)

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
              quiet: bool = False, cache_root: str | Path | None = None, **build_options):
        """Build (or reuse) the index of ``data``'s collection: in ``index_dir``, else in a
        folder named after the task and collection under ``cache_root``, by default
        :func:`mathir.storage.index_root` (one place for every path).

        ``build_options`` go to the task's index builder, for the options it has (e.g.
        ``shards`` and ``ray_address`` for ``arqmath-task2``'s formula index); another
        option is an InputError naming the ones it has.
        """
        if index_dir is None:
            from mathir.storage import index_root

            # by collection and builder, not by task: tasks that build the same index (a
            # derived task, Task 1 and Task 3) share it
            builder = self.build_index
            who = builder.target if isinstance(builder, Ref) else \
                f"{builder.__module__}:{builder.__qualname__}"
            key = hashlib.sha1(f"{data.collection.resolve()}\0{who}".encode()).hexdigest()[:10]
            root = Path(cache_root) if cache_root is not None else index_root()
            kind = who.rpartition(":")[2].lstrip("_").removeprefix("build_") or "index"
            index_dir = root / f"{kind}-{data.collection.name}-{key}"
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


def derive_task(parent: Task | str, name: str, *, topics: Any = None,
                measures: Any = None, primary_measure: str | None = None,
                description: str | None = None, register: bool = False) -> Task:
    """A task made from a registered one: another ``name``, a topic selection (``topics``:
    topic ids, or a predicate over the topic frame, e.g. ``lambda t: t.category ==
    "Proof"`` with ARQMath's topic metadata), other ``measures`` (Measure objects or
    ir_measures strings). Its datasets and experiments filter topics and qrels, and it
    shares the parent's index (indexes are named by collection and builder). With
    ``register``, it is added to :data:`TASKS` (``mathir`` commands and ``mathir:``
    datasets then know it, in this process).

    >>> proof = derive_task("arqmath-task1", "arqmath-task1-a1", topics=["A.1"])
    >>> proof.data().topic_ids, proof.dataset
    (('A.1',), 'arqmath-task1-a1')
    """
    import dataclasses

    base = get_task(parent) if isinstance(parent, str) else parent
    changes: dict[str, Any] = {"name": name, "dataset": name,
                               "description": description or
                               f"{base.description} (derived: {name})"}
    if topics is not None:
        changes["topic_filter"] = topics if callable(topics) else tuple(str(t) for t in topics)
    if measures is not None:
        chosen = tuple(m if isinstance(m, Measure) else Measure(str(m), f"ir_measures {m}", str(m))
                       for m in ([measures] if isinstance(measures, str) else measures))
        changes["measures"] = chosen
        changes["primary_measure"] = primary_measure or chosen[0].name
        if base.prepare is None and base.per_topic is not None:
            changes["per_topic"] = None  # the measures are ir_measures ones
    elif primary_measure is not None:
        changes["primary_measure"] = primary_measure
    task = dataclasses.replace(base, **changes)
    return globals()["register"](task) if register else task


#: Every registered task, by name.
class _Registry(dict):
    """The task dict; the ``mathir.tasks`` entry points are loaded when it is first read,
    not when mathir.tasks is imported (a plug-in may import mathir's modules itself)."""

    _plugins_loaded = False

    def _load(self) -> None:
        if not self._plugins_loaded:
            type(self)._plugins_loaded = True
            load_entry_points()

    def __getitem__(self, key):
        self._load()
        return super().__getitem__(key)

    def __contains__(self, key) -> bool:
        self._load()
        return super().__contains__(key)

    def __iter__(self):
        self._load()
        return super().__iter__()

    def __len__(self) -> int:
        self._load()
        return super().__len__()

    def get(self, key, default=None):
        self._load()
        return super().get(key, default)

    def keys(self):
        self._load()
        return super().keys()

    def values(self):
        self._load()
        return super().values()

    def items(self):
        self._load()
        return super().items()


#: Every registered task, by name (mathir's own, then those of entry points).
TASKS: dict[str, Task] = _Registry()


def register(task: Task) -> Task:
    """Add ``task`` to :data:`TASKS` (a task family's module calls this for each task)."""
    old = dict.get(TASKS, task.name)
    if old is not None and old is not task:
        raise ValueError(f"a task named {task.name!r} is already registered")
    family = task.dataset or task.name
    clash = next((t.name for t in dict.values(TASKS)
                  if t is not old and (t.dataset or t.name) == family), None)
    if clash is not None:
        raise ValueError(f"{task.name}: its datasets would be named mathir:{family}/..., as "
                         f"{clash}'s are; give it another dataset= (derive_task does)")
    dict.__setitem__(TASKS, task.name, task)
    return task


#: ``mathir.register_task``: add a task in this process (a plug-in package uses the
#: ``mathir.tasks`` entry point instead, so that every process has it).
register_task = register


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

#: The environment variable naming the data folder where real data is asked for.
DATA_ENV = "MATHIR_DATA"


def data_folder(data: str | Path | None, real: bool) -> str | Path | None:
    """The data folder: ``data`` when given, else ``$MATHIR_DATA`` where real data is asked
    for (``real``: a year, a split or a collection; a dataset that is not the sample),
    else None (the embedded sample). The one rule of the CLI and the datasets.

    >>> data_folder("D", False), data_folder(None, False)
    ('D', None)
    """
    import os

    if data is not None:
        return data
    return (os.environ.get(DATA_ENV) or None) if real else None


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


#: The entry point group through which another package adds tasks: each entry's value is
#: a :class:`Task` or a zero-argument callable returning one (or several), e.g. in its
#: pyproject.toml ``[project.entry-points."mathir.tasks"] ntcir12 = "ntcir_mathir:TASK"``.
ENTRY_POINT_GROUP = "mathir.tasks"


def _register_entry_point(entry) -> None:
    value = entry.load()
    if callable(value) and not isinstance(value, Task):
        value = value()
    for task in value if isinstance(value, list | tuple) else (value,):
        if not isinstance(task, Task):
            raise TypeError(f"entry point {entry.name} = {entry.value} gives "
                            f"{type(task).__name__}, not a mathir.Task")
        if dict.get(TASKS, task.name) is not task:
            register(task)


def load_entry_points() -> None:
    """Register the tasks of the ``mathir.tasks`` entry points (called on import; again
    after installing a package in a running process). One that fails to load is skipped
    with a warning naming it, so that a broken plug-in does not break mathir."""
    import warnings
    from importlib.metadata import entry_points

    for entry in entry_points(group=ENTRY_POINT_GROUP):
        try:
            _register_entry_point(entry)
        except Exception as e:  # a plug-in's own error: say which, and go on
            warnings.warn(f"mathir task entry point {entry.name} ({entry.value}) not "
                          f"loaded: {type(e).__name__}: {e}", stacklevel=2)


#: The task families of mathir itself, in the order their tasks are listed; each
#: registers its tasks when imported (at the end of this module: they use the above).
FAMILIES = ("arqmath", "worldtree", "word_problems")
for _family in FAMILIES:
    importlib.import_module(f"{__name__}.{_family}")
