"""The task registry: a task is one declaration, one module per task family.

A :class:`Task` declares, once, everything mathir knows of a task: per year or split the
files it needs, each with the role it plays (topics, qrels, collection, an option), in
the order candidates are preferred, and where they are published (:class:`Split`,
:class:`Need`, :class:`Published`: one generic locate, :mod:`mathir.tasks.locate`, finds
them, and the missing-file messages, the ``mathir:`` PyTerrier datasets and ``mathir
tasks`` come from them), its corpus and embedded sample, its measures (:class:`Measure`: the table's columns,
``mathir tasks`` and the docs), its run formats (the first, the task's own, is the
default), its evaluation options (:class:`Option`: the flags of ``mathir evaluate``),
its pipelines and, optionally, a sample. Each family's module (:mod:`mathir.tasks.arqmath`,
:mod:`~mathir.tasks.worldtree`, :mod:`~mathir.tasks.word_problems`) declares its tasks and
registers them, as ir_datasets' collection modules do; a package outside mathir adds
one through the ``mathir.tasks`` entry point (:data:`TASK_ENTRY_POINTS`). Stages are
named by ``"module:function"`` references (:class:`Ref`) that import on first use, so
reading the registry (``mathir tasks``, ``mathir --help``) imports neither PyTerrier nor
any pipeline.

>>> {'arqmath-task1', 'arqmath-task3'} <= set(TASKS)
True
>>> TASKS["arqmath-task1"].default_pipelines
('tfidf', 'bm25')
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mathir.errors import InputError
from mathir.evaluation.measures import Measure
from mathir.tasks.declarations import (
    ROLES,
    Need,
    Option,
    Published,
    QrelsVariant,
    Ref,
    Split,
    Stage,
    TaskData,
)
from mathir.tasks.task import Task

__all__ = ["DATA_ENV", "FAMILIES", "ROLES", "TASKS", "TASK_ENTRY_POINTS", "Measure", "Need",
           "Option", "Published", "QrelsVariant", "Ref", "Split", "Stage", "Task", "TaskData",
           "data_folder", "derive_task", "get_task", "load_entry_points", "no_options",
           "register", "register_task"]


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


def no_options(options: Mapping[str, object]) -> None:
    """InputError naming options that a task's evaluation does not use."""
    if options:
        raise InputError(f"options not used by this task: {', '.join(sorted(options))}")


#: The entry point group through which another package adds tasks: each entry's value is
#: a :class:`Task` or a zero-argument callable returning one (or several), e.g. in its
#: pyproject.toml ``[project.entry-points."mathir.tasks"] ntcir12 = "ntcir_mathir:TASK"``.
TASK_ENTRY_POINTS = "mathir.tasks"


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

    for entry in entry_points(group=TASK_ENTRY_POINTS):
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
