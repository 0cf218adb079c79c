"""The task registry: every task by name, mathir's own and those of plug-ins.

A :class:`~mathir.tasks.Task` declares, once and in parts, everything mathir knows of a
task (:mod:`mathir.tasks.parts`): per split its year and the files it needs, each with
the role it plays (:class:`~mathir.tasks.Split`, :class:`~mathir.tasks.Need`: one
generic locate, :mod:`mathir.tasks.locate`, finds them, and the missing-file messages,
the ``mathir:`` PyTerrier datasets and ``mathir tasks`` come from them), its formats,
its evaluation (measures, options), its index and pipelines, and its views. Each family's
module (:mod:`mathir.tasks.arqmath`, :mod:`~mathir.tasks.worldtree`,
:mod:`~mathir.tasks.word_problems`) declares its tasks (its ``DECLARED``), registered
here in :data:`FAMILIES` order, as ir_datasets' collection modules are; a package outside
mathir adds its own through the ``mathir.tasks`` entry point (:data:`TASK_ENTRY_POINTS`),
loaded after them. Stages are named by ``"module:function"`` references that import on
first use, so reading the registry (``mathir tasks``, ``mathir --help``) imports neither
PyTerrier nor any pipeline.

>>> {'arqmath-task1', 'arqmath-task3'} <= set(TASKS)
True
>>> TASKS["arqmath-task1"].default_pipelines
('tfidf', 'bm25')
"""

from __future__ import annotations

import importlib

from mathir.errors import InputError
from mathir.tasks.task import Task

#: Every registered task, by name: mathir's own families', then those of the entry points
#: (both registered when this module is first imported), then those registered later.
TASKS: dict[str, Task] = {}


def register(task: Task) -> Task:
    """Add ``task`` to :data:`TASKS` (once; its datasets' names are its own).

    >>> register(TASKS["worldtree"]) is TASKS["worldtree"]
    True
    """
    old = TASKS.get(task.name)
    if old is not None and old is not task:
        raise ValueError(f"a task named {task.name!r} is already registered")
    family = task.dataset or task.name
    clash = next((t.name for t in TASKS.values()
                  if t is not old and (t.dataset or t.name) == family), None)
    if clash is not None:
        raise ValueError(f"{task.name}: its datasets would be named mathir:{family}/..., as "
                         f"{clash}'s are; give it another dataset= (derive_task does)")
    TASKS[task.name] = task
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
        if TASKS.get(task.name) is not task:
            register(task)


def load_entry_points() -> None:
    """Register the tasks of the ``mathir.tasks`` entry points (done when the registry is
    first imported; again after installing a package in a running process). One that
    fails to load is skipped with a warning naming it, so that a broken plug-in does not
    break mathir."""
    import warnings
    from importlib.metadata import entry_points

    for entry in entry_points(group=TASK_ENTRY_POINTS):
        try:
            _register_entry_point(entry)
        except Exception as e:  # a plug-in's own error: say which, and go on
            warnings.warn(f"mathir task entry point {entry.name} ({entry.value}) not "
                          f"loaded: {type(e).__name__}: {e}", stacklevel=2)


#: The task families of mathir itself, in the order their tasks are listed: each module
#: declares its tasks in ``DECLARED``.
FAMILIES = ("arqmath", "worldtree", "word_problems")

# Last, once the above is defined: a plug-in may use it while it is imported (e.g. to
# derive its task from one of mathir's).
for _family in FAMILIES:
    for _task in importlib.import_module(f"mathir.tasks.{_family}").DECLARED:
        register(_task)
load_entry_points()
