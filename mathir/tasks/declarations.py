"""What a task declaration is made of: its files (:class:`TaskData`, :class:`Need`,
:class:`Split`, :class:`QrelsVariant`, :class:`Published`), its evaluation options
(:class:`Option`) and its stages, named by ``"module:attribute"`` (:class:`Ref`) and
imported on first use."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
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


#: What a file found for a :class:`Need` is in the task's data: :class:`TaskData`'s
#: ``topics``, ``qrels``, ``collection`` or ``metadata``, or an ``option`` of the
#: evaluation (:attr:`TaskData.extras`, by :attr:`Need.option`).
ROLES = ("topics", "qrels", "collection", "metadata", "option")


@dataclass(frozen=True)
class Need:
    """A file or folder of a task's data, written once: the first of ``patterns`` found
    under the data folder (in the order given: the most preferred first) plays ``role``
    (one of :data:`ROLES`, or several, e.g. ``("topics", "qrels")`` for a question file
    that holds both). One generic locate (:func:`mathir.tasks.locate.locate`) builds a
    task's :class:`TaskData` from its needs, and the missing-file messages, the
    ``mathir:`` datasets and ``mathir tasks`` name them.

    * ``option``: the evaluation option that gets the file (required for the role
      ``"option"``; with another role the file goes to both, e.g. Task 3's collection);
    * ``optional``: a missing file is no error (``topics`` and ``collection`` are still
      required from some need);
    * a pattern whose name has a suffix (``Posts.V1.3.xml``) matches files, one without
      (``threads_all``) folders; ``contains``: a folder must hold a match of it;
      ``exclude``: names containing it are skipped;
    * ``beside``: looked for in the folder of the file of that role (e.g. a split's
      problems JSON beside the split file), not in the whole data folder;
    * a need of the role ``collection`` is skipped when ``--collection`` (``collection=``)
      gives one; when several candidates are found, a warning names them all and the one
      taken.

    >>> Need(("Posts.V1.3.xml", "threads_all"), "the answers", "collection").describe()
    'Posts.V1.3.xml or threads_all (the answers)'
    """

    patterns: tuple[str, ...]
    what: str
    role: str | tuple[str, ...] = "option"
    option: str | None = None
    optional: bool = False
    contains: str | None = None
    exclude: str | None = None
    beside: str | None = None
    #: the published files it may find (:class:`PublishedFile`; those of a whole family
    #: may be given: the need keeps those its patterns match): a file found under one of
    #: their names that differs is said in a warning
    #: (:func:`mathir.tasks.locate.check_published`)
    published: tuple[PublishedFile, ...] = ()

    def __post_init__(self) -> None:
        if isinstance(self.patterns, str):
            object.__setattr__(self, "patterns", (self.patterns,))
        unknown = [r for r in self.roles if r not in ROLES]
        if unknown:
            raise ValueError(f"a need's role is one of {ROLES}, not {unknown[0]!r}")
        if "option" in self.roles and not self.option:
            raise ValueError(f"the need {self.what!r} gives an option: name it (option=)")
        object.__setattr__(self, "published", matching(self.published, self.patterns))

    @property
    def roles(self) -> tuple[str, ...]:
        """The roles, as a tuple."""
        return (self.role,) if isinstance(self.role, str) else tuple(self.role)

    @property
    def collection(self) -> bool:
        """Whether it is the collection (``--collection`` gives it instead)."""
        return "collection" in self.roles

    def describe(self) -> str:
        return " or ".join(self.patterns) + f" ({self.what})"

    def matches(self, path: Path, pattern: str) -> bool:
        """Whether ``path`` (a hit of ``pattern``) is what this need looks for."""
        if self.exclude and self.exclude in path.name:
            return False
        if "." not in pattern:  # a folder, holding what it must
            return path.is_dir() and (self.contains is None or any(path.glob(self.contains)))
        return path.is_file()

    def hits(self, folder: Path, recursive: bool = True) -> list[Path]:
        """What matches under ``folder`` (only in it when not ``recursive``), the first
        pattern's hits first; each path once."""
        out: list[Path] = []
        for pattern in self.patterns:
            found = walk_glob(folder, pattern) if recursive else sorted(folder.glob(pattern))
            out += [p for p in found if p not in out and self.matches(p, pattern)]
        return out

    def found(self, root: Path) -> bool:
        """Whether a file or folder under ``root`` matches."""
        return bool(self.hits(root))


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
    #: the published file of each year (:class:`PublishedFile`; those of a whole family
    #: may be given: the variant keeps those its pattern matches): one found that differs
    #: is said in a warning (:func:`mathir.tasks.locate.check_published`)
    published: tuple[PublishedFile, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "published",
                           matching(self.published, (self.file_pattern("*"),)))

    def file_pattern(self, label: str) -> str:
        return self.pattern.replace("{year}", label)


@dataclass(frozen=True)
class Published:
    """What a task's files are and where they are published (they are never downloaded:
    the collections are behind pages or licences)."""

    what: str
    url: str


@dataclass(frozen=True)
class PublishedFile:
    """A file as it is published, known by its digest (as ir_datasets knows its
    downloads): ``name``, ``size`` in bytes and ``sha256`` of every byte (as
    ``sha256sum`` prints it); ``text_sha256``, when it differs, that of its text with LF
    line endings and one final newline (a copy that differs only so is named as such).
    A folder (WorldTree's ``tables/``) has ``files``, the total ``size`` and the digest
    :func:`mathir.storage.file_fingerprint` gives (each file's name, size and SHA-256).

    >>> f = PublishedFile("draw-dev.txt", 1566, "708b67" + "0" * 58)
    >>> f.text_digest == f.sha256, short_digest(f.sha256)
    (True, '708b670000000000…')
    """

    name: str
    size: int
    sha256: str
    text_sha256: str | None = None
    files: int | None = None

    @property
    def text_digest(self) -> str:
        """The SHA-256 of the text with LF line endings and one final newline."""
        return self.text_sha256 or self.sha256


def short_digest(digest: str) -> str:
    """A SHA-256 as messages show it: its first 16 hex digits.

    >>> short_digest("ab" * 32)
    'abababababababab…'
    """
    return digest[:16] + "…"


def published_files(*rows: tuple) -> tuple[PublishedFile, ...]:
    """:class:`PublishedFile` s from ``(name, size, sha256[, text_sha256[, files]])`` rows.

    >>> published_files(("a.tsv", 3, "00" * 32))[0].size
    3
    """
    return tuple(PublishedFile(*row) for row in rows)


def matching(published: Iterable[PublishedFile], patterns: Iterable[str]
             ) -> tuple[PublishedFile, ...]:
    """Those of ``published`` whose name one of ``patterns`` matches (case counts).

    >>> [f.name for f in matching(published_files(("a-1.tsv", 1, ""), ("b.tsv", 1, "")),
    ...                           ["a-*.tsv"])]
    ['a-1.tsv']
    """
    from fnmatch import fnmatchcase

    patterns = tuple(patterns)
    return tuple(f for f in published if any(fnmatchcase(f.name, p) for p in patterns))


#: A :class:`Split`'s label when none is given: its name (None for the sample).
SAME_AS_NAME: Any = "<the name>"


@dataclass(frozen=True)
class Split:
    """One evaluation of a task as a dataset, ``mathir:<dataset>/<name>``.

    ``label`` is its year or split, what :meth:`Task.data` takes (``--year`` /
    ``--split``); by default its ``name`` (None for the sample: the task's default).
    The task's years are its splits' labels, so each is written once. ``needs`` are
    the files it needs (:class:`Need`: the task's data is built from them), ``sample``:
    the embedded sample (no files).

    >>> Split("2016").label, Split("sample", sample=True).label, Split("dev", "Dev").label
    ('2016', None, 'Dev')
    """

    name: str
    label: str | None = SAME_AS_NAME
    needs: tuple[Need, ...] = ()
    sample: bool = False
    #: :attr:`TaskData.label` of its data (the folder of its runs); default: ``name``
    data_label: str | None = None

    def __post_init__(self) -> None:
        if self.label is SAME_AS_NAME:
            object.__setattr__(self, "label", None if self.sample else self.name)
        object.__setattr__(self, "needs", tuple(self.needs))


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
    """InputError naming options that a task's evaluation does not use.

    >>> no_options({})
    """
    if options:
        raise InputError(f"options not used by this task: {', '.join(sorted(options))}")


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
