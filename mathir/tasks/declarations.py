"""What a task declaration is made of: its files (:class:`TaskData`, :class:`Need`,
:class:`Split`, :class:`QrelsVariant`, :class:`Published`), its evaluation options
(:class:`Option`) and its stages, named by ``"module:attribute"`` (:class:`Ref`) and
imported on first use."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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


def as_stage(value):
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
