"""The settings of an evaluation, resolved once: which judgments (the qrels: official, a
published variant or a file), which of them count (the judged rule), which measures, and
the task's evaluation options.

Every command that scores (``mathir experiment``, ``evaluate``, ``view``, a dataset's
``evaluate()``) resolves its settings once, at its entry, into one :class:`Evaluation`
that the experiment, the evaluation and the report take, and that a run's manifest
records: no later step works a default out again. Each part is resolved by one function:
:func:`resolve_qrels`, :func:`resolve_judged`, :func:`resolve_measures`;
:func:`resolve_evaluation` calls each once.

The judged rule's default is one rule for every command: a task that declares
``qrels_in_collection`` (ARQMath Task 1) judges on the documents the collection holds
whenever a collection is known (the experiment's; ``--data`` / ``--collection`` /
``--year``; the data's own qrels; or the collection the runs' manifests record), and on
the whole qrels file otherwise; every other task on the whole file.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mathir.errors import InputError, option

#: Which judgments score a run: every judgment of the qrels file, or those of the documents
#: the collection holds (tasks with ``qrels_in_collection``; their default).
JUDGED_RULES = ("collection", "file")
#: The name of a task's own qrels, among its variants (``--qrels official``).
OFFICIAL = "official"

#: A task's declaration (:class:`mathir.tasks.Task`; the task layer imports this module).
Task = Any


@dataclass(frozen=True)
class QrelsChoice:
    """Which judgment file scores the runs: the task's ``official`` qrels, one of its
    published ``variant`` files by name, or a ``file`` given by path.

    >>> QrelsChoice("variant", "all").record()
    {'qrels': 'all'}
    """

    kind: str  # "official" | "variant" | "file"
    name: str  # "official", the variant's name, or the file's path

    @property
    def official(self) -> bool:
        return self.kind == OFFICIAL

    @property
    def spec(self) -> str | None:
        """What :meth:`mathir.tasks.Task.data` takes (None: the official qrels)."""
        return None if self.official else self.name

    def record(self) -> dict[str, str]:
        """How a manifest records it."""
        return {"qrels": self.name if self.kind != "file" else str(Path(self.name).resolve())}


@dataclass(frozen=True)
class Evaluation:
    """How runs are scored, resolved once (:func:`resolve_evaluation`).

    ``judged``: :data:`JUDGED_RULES`; ``measures``: ``(beside, {column: measure})`` as
    :func:`~mathir.evaluation.measures.parse_measure_list` gives it, or None for the task's
    own; ``qrels``: the judgment file chosen; ``options``: the task's evaluation options
    given by the user (e.g. ``qrels_key``), by name.

    >>> from mathir.tasks import get_task
    >>> ev = resolve_evaluation(get_task("arqmath-task1"), collection=True)
    >>> ev.judged, ev.qrels.name, ev.measures
    ('collection', 'official', None)
    """

    task: str
    judged: str
    qrels: QrelsChoice = QrelsChoice(OFFICIAL, OFFICIAL)
    measures: tuple[bool, dict[str, Any]] | None = None
    options: Mapping[str, Any] = field(default_factory=dict)

    @property
    def measure_names(self) -> list[str] | None:
        """The measures asked for (None: the task's own), ``+`` first when beside them."""
        if self.measures is None:
            return None
        beside, chosen = self.measures
        return (["+"] if beside else []) + list(chosen)

    def record(self) -> dict[str, Any]:
        """What a run's manifest records of how it is scored (not part of its identity)."""
        out: dict[str, Any] = {"judged": self.judged, **self.qrels.record()}
        if self.measures is not None:
            out["measures"] = self.measure_names
        if self.options:
            out["options"] = {k: str(v) for k, v in sorted(self.options.items())}
        return out


def resolve_judged(task: Task, judged: str | None, *, collection: bool) -> str:
    """The judged rule: ``judged`` when given (checked: it must be one of
    :data:`JUDGED_RULES` and apply to ``task``), else the one default — ``"collection"``
    for a task with ``qrels_in_collection`` when a ``collection`` is known, ``"file"``
    otherwise.

    >>> from mathir.tasks import get_task
    >>> t1 = get_task("arqmath-task1")
    >>> resolve_judged(t1, None, collection=True), resolve_judged(t1, None, collection=False)
    ('collection', 'file')
    >>> resolve_judged(get_task("worldtree"), "collection", collection=True)  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    mathir.errors.InputError: worldtree judges every document of its qrels file ...
    """
    if judged is None:
        return "collection" if task.qrels_in_collection and collection else "file"
    if judged not in JUDGED_RULES:
        raise InputError(f"unknown judged set {judged!r}; expected one of "
                         f"{', '.join(JUDGED_RULES)}")
    if judged == "collection" and not task.qrels_in_collection:
        raise InputError(f"{task.name} judges every document of its qrels file: "
                         f"{option('judged', 'collection')} does not apply")
    return judged


def resolve_qrels(task: Task, qrels: str | Path | None) -> QrelsChoice:
    """The judgment file asked for: None or ``"official"`` (the task's own), a published
    variant's name (:attr:`mathir.tasks.Task.qrels_variants`), or an existing file;
    InputError otherwise (before any work).

    >>> from mathir.tasks import get_task
    >>> resolve_qrels(get_task("arqmath-task1"), "official").kind
    'official'
    >>> resolve_qrels(get_task("arqmath-task1"), "al")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    mathir.errors.InputError: --qrels al: neither a qrels variant of arqmath-task1 ...
    """
    if qrels is None or str(qrels) == OFFICIAL:
        return QrelsChoice(OFFICIAL, OFFICIAL)
    names = [v.name for v in task.qrels_variants]
    if str(qrels) in names:
        return QrelsChoice("variant", str(qrels))
    path = Path(qrels)
    if not path.is_file():
        listed = ", ".join([OFFICIAL, *names])
        if path.exists():
            raise InputError("not a file (--qrels)", path=path)
        if "/" in str(qrels) or path.suffix:  # a path, not a misspelt variant
            raise InputError("file not found", path=path)
        raise InputError(f"--qrels {qrels}: neither a qrels variant of {task.name} "
                         f"(its variants: {listed}) nor a file")
    return QrelsChoice("file", str(path))


def resolve_measures(measures: str | Iterable[Any] | None) -> tuple[bool, dict[str, Any]] | None:
    """The measures asked for, parsed and checked before any scoring
    (:func:`~mathir.evaluation.measures.parse_measure_list`); None: the task's own.

    >>> resolve_measures(None) is None, list(resolve_measures("NumQ")[1])
    (True, ['NumQ'])
    """
    if measures is None:
        return None
    if isinstance(measures, tuple) and len(measures) == 2 and isinstance(measures[1], dict):
        return measures  # already resolved
    from mathir.evaluation.measures import parse_measure_list

    return parse_measure_list(measures)


def resolve_evaluation(task: Task, *, judged: str | None = None,
                       measures: str | Iterable[Any] | None = None,
                       qrels: str | Path | None = None,
                       options: Mapping[str, Any] | None = None,
                       collection: bool | None = True) -> Evaluation:
    """The settings of an evaluation, each resolved once: ``qrels``
    (:func:`resolve_qrels`), ``judged`` (:func:`resolve_judged`; ``collection``: whether
    a collection is known to judge on; None: when the data's own qrels are used, not a
    qrels file, as their collection then is), ``measures`` (:func:`resolve_measures`),
    and the task's evaluation ``options`` (an option of another task is an error).

    >>> from mathir.tasks import get_task
    >>> resolve_evaluation(get_task("arqmath-task1"), qrels="official", judged="file").judged
    'file'
    """
    chosen = resolve_qrels(task, qrels)
    given = {k: v for k, v in (options or {}).items() if v is not None}
    unused = sorted(set(given) - {o.name for o in task.options})
    if unused:
        flags = ", ".join("--" + u.replace("_", "-") for u in unused)
        own = ", ".join(o.flag for o in task.options) or "none"
        raise InputError(f"{flags}: not an option of {task.name} (its options: {own})")
    known = chosen.kind != "file" if collection is None else collection
    return Evaluation(task.name, resolve_judged(task, judged, collection=known), chosen,
                      resolve_measures(measures), given)


def qrels_note(choice: QrelsChoice, used: Any, official: Any = None) -> str | None:
    """What another judgment file changes, in words: its topics and judgments, and the
    official qrels' (None for the official qrels).

    >>> import pandas as pd
    >>> q = pd.DataFrame({"qid": ["A.1", "A.2"], "docno": ["1", "2"], "label": [1, 2]})
    >>> qrels_note(QrelsChoice("variant", "all"), q, q.iloc[:1])
    'qrels all: 2 topics, 2 judgments (the official qrels: 1 topics, 1 judgments)'
    """
    if choice.official or used is None:
        return None
    name = choice.name if choice.kind == "variant" else Path(choice.name).name

    def counts(frame: Any) -> str:
        return f"{frame['qid'].nunique():,} topics, {len(frame):,} judgments"

    said = f"qrels {name}: {counts(used)}"
    if official is not None:
        said += f" (the official qrels: {counts(official)})"
    return said


__all__ = ["JUDGED_RULES", "OFFICIAL", "Evaluation", "QrelsChoice", "qrels_note",
           "resolve_evaluation", "resolve_judged", "resolve_measures", "resolve_qrels"]
