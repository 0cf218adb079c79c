"""The :class:`Task`: one declaration of everything mathir knows of a task, in parts
(:mod:`mathir.tasks.parts`; see :mod:`mathir.tasks`)."""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path
from typing import Any

from mathir.errors import InputError
from mathir.evaluation.measures import name_conflict
from mathir.storage import walk_glob
from mathir.storage.paths import path_component
from mathir.tasks.declarations import Ref, TaskData
from mathir.tasks.locate import check_published, locate
from mathir.tasks.parts import PART_OF, PARTS, Engines, Files, Formats, Scoring, Views


@dataclass(frozen=True, init=False)
class Task:
    """Declaration of a task, in parts (:mod:`mathir.tasks.parts`); see :data:`TASKS` and
    ``docs/extending.md``.

    ``files`` (:class:`Files`: its splits with their years, the sample, its datasets),
    ``formats`` (:class:`Formats`), ``scoring`` (:class:`Scoring`: its evaluation),
    ``engines`` (:class:`Engines`: its index and pipelines) and ``views``
    (:class:`Views`); ``files`` and ``views`` may be left out. Each field of a part is
    also read as the task's own (``task.measures`` is ``task.scoring.measures``), and
    may be given as a keyword instead of in its part, on its own or over the part given
    (``dataclasses.replace(task, measures=...)`` replaces the measures of its scoring).

    Every stage (``read_topics``, ``per_topic``, each pipeline, ...) is a callable or a
    ``"module:function"`` string, imported when first used. The table (:meth:`table`)
    is each run's mean of its per-topic scores (:meth:`scores`), one evaluation for
    every task (:func:`mathir.evaluation.evaluated.evaluate`).

    >>> from mathir.tasks import get_task
    >>> task = get_task("arqmath-task3")
    >>> task.years, task.default_year, task.measures is task.scoring.measures
    (('2022',), '2022', True)
    """

    name: str
    description: str
    formats: Formats
    scoring: Scoring
    engines: Engines
    files: Files
    views: Views

    def __init__(self, *, name: str, description: str, formats: Formats | None = None,
                 scoring: Scoring | None = None, engines: Engines | None = None,
                 files: Files | None = None, views: Views | None = None,
                 **fields_of_parts: Any) -> None:
        given = {"files": files, "formats": formats, "scoring": scoring,
                 "engines": engines, "views": views}
        unknown = sorted(set(fields_of_parts) - set(PART_OF))
        if unknown:
            why = " (a task's years are the labels of its splits)" if "years" in unknown else ""
            raise TypeError(f"Task() got an unexpected keyword argument {unknown[0]!r}{why}")
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "description", description)
        for part, cls in PARTS.items():
            own = {k: v for k, v in fields_of_parts.items() if PART_OF[k] == part}
            value = given[part]
            if value is None:
                value = cls(**own)
            elif own:
                value = dataclasses.replace(value, **own)
            object.__setattr__(self, part, value)
        self._check()

    def _check(self) -> None:
        """The checks of a declaration, each message naming the task."""
        path_component(self.name, "task name")  # its runs' folder: OUT/<name>/
        for m in self.measures:  # one label, one number: a name ir_measures has means its measure
            conflict = name_conflict(m)
            if conflict:
                raise ValueError(f"{self.name}: measure {m.name!r}: {conflict}")
        names = self.measure_names
        if self.primary_measure not in names:
            raise ValueError(f"{self.name}: the primary measure {self.primary_measure!r} is "
                             f"not one of its measures {list(names)}")
        if self.per_topic is None and not self._by_ir_measures:
            raise ValueError(f"{self.name}: measures that are not ir_measures ones need "
                             "the task's per_topic")
        if self.locate is None and self.has_sample and self.sample is None:
            raise ValueError(f"{self.name}: has_sample, but no sample is declared")
        unknown = [p for p in self.default_pipelines if p not in self.pipelines]
        if unknown:
            raise ValueError(f"{self.name}: default pipelines {unknown} are not declared")
        if self.order not in ("trec_eval", "rank", "given"):  # evaluated.ORDERS
            raise ValueError(f"{self.name}: order {self.order!r} is not one of trec_eval, "
                             "rank, given")

    @property
    def years(self) -> tuple[str, ...]:
        """The years or splits it evaluates (``--year`` / ``--split``): its splits' labels."""
        return self.files.years

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
        where = (Path(data) if data else None, year, Path(collection) if collection else None)
        found = self.locate(*where) if self.locate is not None else locate(self, *where)
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
        """``data`` judged by another qrels: a declared variant's name, or a file
        (``"official"``: the task's own, ``data`` as it is)."""
        if str(qrels) == "official":
            return data
        variant = next((v for v in self.qrels_variants if v.name == str(qrels)), None)
        if variant is None:
            path = Path(qrels)
            if not path.is_file():
                names = ", ".join(["official", *(v.name for v in self.qrels_variants)])
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
        check_published(hits[0], variant.published, variant.what)
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

        >>> from mathir.tasks import get_task
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
        folder named after the collection and the index builder (so tasks that build the
        same index share it) under ``cache_root``, by default
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


# Each field of a part read as the task's own: ``task.measures`` is ``task.scoring.measures``.
for _name, _part in PART_OF.items():
    setattr(Task, _name, property(attrgetter(f"{_part}.{_name}"),
                                  doc=f"``{_part}.{_name}`` (:class:`{PARTS[_part].__name__}`)"))
