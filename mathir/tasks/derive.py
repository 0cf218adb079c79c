"""Tasks derived from registered ones: another name, a topic selection, other measures
(:func:`derive_task`)."""

from __future__ import annotations

import dataclasses
from typing import Any

import mathir.tasks.registry as registry
from mathir.errors import InputError
from mathir.evaluation.measures import Measure
from mathir.storage.paths import path_component
from mathir.tasks.task import Task


def derive_task(parent: Task | str, name: str, *, topics: Any = None,
                measures: Any = None, primary_measure: str | None = None,
                description: str | None = None, register: bool = False) -> Task:
    """A task made from a registered one: another ``name``, a topic selection (``topics``:
    topic ids, or a predicate over the topic frame, e.g. ``lambda t: t.category ==
    "Proof"`` with ARQMath's topic metadata, giving one boolean per topic), other
    ``measures`` (Measure objects or ir_measures strings). Its datasets and experiments
    filter topics and qrels, and it shares the parent's index (indexes are named by
    collection and builder). With ``register``, it is added to :data:`TASKS` (``mathir``
    commands and ``mathir:`` datasets then know it, in this process).

    ``name`` is one path component (its runs go to ``OUT/<name>/``) and not the name of a
    registered task (whose runs it would otherwise share); the selected topics are part
    of its runs' identity, so a run of another selection is never reused.

    >>> proof = derive_task("arqmath-task1", "arqmath-task1-a1", topics=["A.1"])
    >>> proof.data().topic_ids, proof.dataset
    (('A.1',), 'arqmath-task1-a1')
    """
    base = registry.get_task(parent) if isinstance(parent, str) else parent
    path_component(name, "derived task name", why="it names the folder of its runs")
    if name in registry.TASKS or name == base.name:
        whose = "a registered task" if name in registry.TASKS else "its parent"
        raise InputError(f"derived task name {name!r} is the name of {whose} (its runs "
                         "would be taken for that task's): give it another name")
    changes: dict[str, Any] = {"name": name, "dataset": name,
                               "description": description or
                               f"{base.description} (derived: {name})"}
    if topics is not None:
        changes["topic_filter"] = TopicPredicate(topics, name) if callable(topics) else \
            _topic_ids(topics, name)
    if measures is not None:
        given = [measures] if isinstance(measures, str) else list(measures)
        if given and not any(isinstance(m, Measure) for m in given):
            # ir_measures strings: checked here, as --measures checks them (P@0, RR(foo=1)...)
            from mathir.evaluation.measures import parse_measure_list

            given = [Measure(str(m), f"ir_measures {m}", m)
                     for m in parse_measure_list(given)[1].values()]
        chosen = tuple(m if isinstance(m, Measure) else Measure(str(m), f"ir_measures {m}", str(m))
                       for m in given)
        if not chosen:
            raise InputError(f"derived task {name!r}: measures= is empty; give at least one "
                             "measure (or leave it out for the parent's)")
        changes["measures"] = chosen
        changes["primary_measure"] = primary_measure or chosen[0].name
        if base.prepare is None and base.per_topic is not None:
            changes["per_topic"] = None  # the measures are ir_measures ones
    elif primary_measure is not None:
        changes["primary_measure"] = primary_measure
    task = dataclasses.replace(base, **changes)
    return registry.register(task) if register else task


def _topic_ids(topics: Any, name: str) -> tuple[str, ...]:
    if isinstance(topics, str):  # one id, not its characters
        topics = [topics]
    try:
        ids = tuple(str(t) for t in topics)
    except TypeError:
        raise InputError(f"derived task {name!r}: topics= is topic ids or a predicate over "
                         f"the topic frame, not {type(topics).__name__}") from None
    if not ids:
        raise InputError(f"derived task {name!r}: topics= is empty; give at least one topic id")
    return ids


class TopicPredicate:
    """A derived task's predicate over the topic frame, checked where it is applied: it
    must give one boolean per topic (a boolean Series or array, or a list of bools). A
    value that is not a boolean (``"False"`` would be truthy, NaN too), a scalar, a
    mask of another length, or an exception in the predicate is an :class:`InputError`
    naming the task, never a silently wider or narrower selection.

    >>> import pandas as pd
    >>> frame = pd.DataFrame({"qid": ["A.1", "A.2"], "category": ["Proof", "Concept"]})
    >>> TopicPredicate(lambda t: t.category == "Proof", "proof")(frame).tolist()
    [True, False]
    >>> TopicPredicate(lambda t: "False", "bad")(frame)  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    mathir.errors.InputError: derived task 'bad': its topic predicate gave str, not ...
    """

    def __init__(self, predicate: Any, task: str) -> None:
        self.__wrapped__ = predicate
        self.task = task

    def __repr__(self) -> str:
        return f"TopicPredicate({self.__wrapped__!r})"

    def __call__(self, frame):
        import numpy as np

        where = f"derived task {self.task!r}: its topic predicate"
        try:
            mask = self.__wrapped__(frame)
        except InputError:
            raise
        except Exception as e:  # noqa: BLE001 - the user's predicate, named
            raise InputError(f"{where} raised {type(e).__name__}: {e}") from e
        if isinstance(mask, str | bytes) or np.ndim(mask) != 1:
            raise InputError(f"{where} gave {type(mask).__name__}, not one boolean per topic "
                             f"(a boolean Series of the topic frame's {len(frame)} rows)")
        if hasattr(mask, "reindex") and hasattr(frame, "index") \
                and not mask.index.equals(frame.index):
            mask = mask.reindex(frame.index)  # a Series is read by its index, as pandas does
        values = mask if isinstance(mask, np.ndarray) else \
            np.asarray(mask.to_numpy() if hasattr(mask, "to_numpy") else list(mask), dtype=object)
        if len(values) != len(frame):
            raise InputError(f"{where} gave {len(values)} values for {len(frame)} topics")
        if values.dtype != bool:
            bad = next((v for v in values if not isinstance(v, bool | np.bool_)), None)
            if bad is not None or values.dtype.kind not in "bO":
                raise InputError(f"{where} gave {bad!r} ({type(bad).__name__}), not a "
                                 "boolean: a topic is kept for True, left out for False")
        return np.asarray(values, dtype=bool)
