"""The parts of a :class:`~mathir.tasks.Task`: what belongs together, declared together.

* :class:`Files`: its splits (each with its year or split label and the files it needs),
  the embedded sample, where the files are published and its ``mathir:`` datasets;
* :class:`Formats`: how topics, qrels and runs are read and written;
* :class:`Scoring`: its evaluation (measures, primary measure, order, ``per_topic`` /
  ``prepare``, options, qrels variants, ``qrels_in_collection``);
* :class:`Engines`: its index and the pipelines over it;
* :class:`Views`: its page in the run explorer, its report and its topic groups.

Each part is a small frozen dataclass; a part a task does not need is left out (its
defaults). A stage given as ``"module:function"`` becomes a :class:`Ref` (imported on
first use). Tasks of one family share parts (``dataclasses.replace`` of one part gives
another), e.g. the ARQMath tasks' files (:mod:`mathir.tasks.arqmath`).

>>> files = Files(splits=(Split("2016", needs=()),))
>>> files.years, files.default_year
(('2016',), '2016')
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from mathir.evaluation.measures import Measure
from mathir.tasks.declarations import (
    Option,
    Published,
    QrelsVariant,
    Split,
    Stage,
    as_stage,
)


def _stages(part, names: tuple[str, ...], maps: tuple[str, ...] = ()) -> None:
    """Make the stages ``names`` (and the stage maps ``maps``) of ``part`` callables."""
    for name in names:
        object.__setattr__(part, name, as_stage(getattr(part, name)))
    for name in maps:
        object.__setattr__(part, name, {k: as_stage(v) for k, v in getattr(part, name).items()})


@dataclass(frozen=True, kw_only=True)
class Files:
    """A task's data: per split its files, the sample, and its ``mathir:`` datasets."""

    #: the evaluations, each with its year or split label and the files it needs
    #: (:class:`Split`); also its ``mathir:`` datasets, ``<dataset>/<split name>``. By
    #: default (none declared) the embedded sample alone, when there is one
    splits: tuple[Split, ...] = ()
    #: the year or split evaluated when none is given (default: the last split's)
    default_year: str | None = None
    #: what a year is called in messages ("ARQMath year", "WorldTree split")
    year_name: str = "year"
    #: (year / split label or None, collection or None) -> TaskData: the embedded sample
    sample: Stage | None = None
    #: whether it has an embedded sample (``mathir demo`` runs those); default: whether
    #: ``sample`` (or ``locate``) is given
    has_sample: bool | None = None
    #: (TaskData) -> TaskData: what a task adds to the files its needs found (e.g.
    #: WorldTree's lemma list, found beside the tablestore); None: nothing
    complete: Stage | None = None
    #: (data root or None, year, collection or None) -> TaskData, for a task whose files
    #: its needs cannot describe; None: the one locate (:mod:`mathir.tasks.locate`)
    locate: Stage | None = None
    #: what the files are and where they are published (messages, datasets, docs)
    published: Published | None = None
    #: the datasets' name prefix (default: the task's name), e.g. ``arqmath/task1``
    dataset: str | None = None
    #: (TaskData, **keywords) -> iterable of documents (dicts with ``docno``): the corpus
    #: of its ``mathir:`` datasets (``get_corpus_iter``)
    corpus: Stage | None = None
    #: extra methods of its ``mathir:`` datasets, by name: (TaskData) -> value (e.g.
    #: ``get_tablestore``)
    dataset_methods: Mapping[str, Stage] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _stages(self, ("sample", "complete", "locate", "corpus"), ("dataset_methods",))
        object.__setattr__(self, "splits", tuple(self.splits or ()))
        if self.has_sample is None:
            object.__setattr__(self, "has_sample",
                               self.sample is not None or self.locate is not None)
        if not self.splits and self.has_sample:
            object.__setattr__(self, "splits", (Split("sample", None, sample=True),))
        years = self.years
        if self.default_year is None and years:
            object.__setattr__(self, "default_year", years[-1])
        elif self.default_year is not None and self.default_year not in years:
            raise ValueError(f"the default {self.year_name} {self.default_year!r} is not the "
                             f"label of one of its splits {list(years)}")

    @property
    def years(self) -> tuple[str, ...]:
        """The years or splits (``--year`` / ``--split``): the labels of the splits that
        are not the sample, each once, in declared order."""
        return tuple(dict.fromkeys(s.label for s in self.splits
                                   if not s.sample and s.label is not None))


@dataclass(frozen=True, kw_only=True)
class Formats:
    """How a task's topics, qrels and runs are read and written."""

    read_topics: Stage
    read_qrels: Stage
    read_run: Stage
    write_run: Stage
    #: run file formats ``write_run`` takes; the first, the task's own, is the default
    run_formats: tuple[str, ...] = ("arqmath",)

    def __post_init__(self) -> None:
        _stages(self, ("read_topics", "read_qrels", "read_run", "write_run"))


def _measures(value) -> tuple[Measure, ...]:
    if isinstance(value, Mapping):  # {name: description}
        return tuple(Measure(n, d) for n, d in value.items())
    out = tuple(value)
    if not all(isinstance(m, Measure) for m in out):
        raise TypeError("a task's measures are Measure objects (or a {name: description} map)")
    return out


@dataclass(frozen=True, kw_only=True)
class Scoring:
    """A task's evaluation. When all its measures are ir_measures ones, per-topic scores
    come from them (after ``prepare``, if given) over every qrels topic; otherwise
    ``per_topic`` computes them."""

    #: the measures, in the order of the task's table (a {name: description} map is
    #: taken too); a measure is one declaration: its column, ``mathir tasks`` and docs
    measures: tuple[Measure, ...]
    primary_measure: str
    #: the order its measures read a run in (:mod:`mathir.evaluation.evaluated`):
    #: ``trec_eval`` (score descending, then docno descending), ``rank`` (the rank
    #: column, as WorldTree's evaluation) or ``given`` (one answer per topic)
    order: str = "trec_eval"
    #: (runs by name, qrels, **extras) -> {run: frame of qid + one column per measure}:
    #: per-topic scores for significance tests and per-topic plots
    per_topic: Stage | None = None
    #: (runs by name, qrels, **options) -> (runs, qrels) made ready for the measures
    #: (e.g. ARQMath Task 2: formulas to visual ids, one per visual id)
    prepare: Stage | None = None
    #: options of the evaluation: keywords of ``evaluate`` / ``per_topic`` / ``prepare``
    #: and flags of ``mathir evaluate``
    options: tuple[Option, ...] = ()
    #: published judgment files besides the official qrels, by name (``--qrels NAME``)
    qrels_variants: tuple[QrelsVariant, ...] = ()
    #: judge only what the collection holds, so that a perfect ranking of a
    #: sub-collection (e.g. the judged pool of thread HTML files) scores 1.0
    qrels_in_collection: bool = False
    #: the topics a derived task evaluates: topic ids, or a predicate over the topic
    #: frame (with the topic metadata's columns, e.g. ``category``, where the task has
    #: them) giving a boolean mask; None: every topic (see :func:`derive_task`)
    topic_filter: Any = None

    def __post_init__(self) -> None:
        _stages(self, ("per_topic", "prepare"))
        object.__setattr__(self, "measures", _measures(self.measures))


@dataclass(frozen=True, kw_only=True)
class Engines:
    """A task's index and the pipelines over it."""

    #: (TaskData, index directory, quiet) -> index
    build_index: Stage
    #: pipeline name -> factory ``(index, **kwargs) -> pt.Transformer``
    pipelines: Mapping[str, Stage]
    default_pipelines: tuple[str, ...]
    #: index directory -> index object, so that worker processes can reopen the index
    open_index: Stage | None = None

    def __post_init__(self) -> None:
        _stages(self, ("build_index", "open_index"), ("pipelines",))


@dataclass(frozen=True, kw_only=True)
class Views:
    """How a task's results are shown."""

    #: (evaluated runs, topics, TaskData, renderer, depth) -> (topic views, legend): the
    #: run explorer's page of the task (default: the generic ranking view)
    explorer: Stage | None = None
    #: (runs by name, qrels, output folder, **extras) -> {what: path} of extra files that
    #: ``run_experiment`` writes beside the runs (e.g. WorldTree's MAP-by-length histogram)
    report: Stage | None = None
    #: (TaskData.metadata path) -> frame of ``qid`` + one column per way of grouping
    #: topics, for the report's breakdowns (ARQMath: category, difficulty, dependency)
    topic_groups: Stage | None = None

    def __post_init__(self) -> None:
        _stages(self, ("explorer", "report", "topic_groups"))


#: The parts of a task, by the name of its field, with their classes.
PARTS: dict[str, type] = {"files": Files, "formats": Formats, "scoring": Scoring,
                          "engines": Engines, "views": Views}
#: Each field of a part, by name -> the part it belongs to (a task's flat attributes).
PART_OF: dict[str, str] = {f.name: part for part, cls in PARTS.items() for f in fields(cls)}
