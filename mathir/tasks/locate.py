"""The one locate: a task's data built from the files its split declares (:class:`Need`).

Each file a task needs is declared once, as a :class:`Need` of a :class:`Split` with the
role it plays; :func:`locate` finds them under the data folder (or takes the embedded
sample), so no task writes a file name twice. What a task does besides stays in its two
hooks: ``sample`` (the embedded files) and ``complete`` (e.g. WorldTree's lemma list,
found beside the tablestore).

>>> from mathir.tasks import get_task
>>> locate(get_task("arqmath-task1"), None, None, None).label
'sample'
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Protocol

from mathir.errors import InputError, option
from mathir.tasks.declarations import Need, Split, TaskData


class Task(Protocol):
    """What locating reads of a :class:`mathir.tasks.Task` (a protocol, not the class:
    the task imports this module)."""

    name: str
    splits: Sequence[Split]
    default_year: str | None
    year_name: str
    sample: Callable[[str | None, Path | None], TaskData] | None
    complete: Callable[[TaskData], TaskData] | None


def same(a: str | None, b: str | None) -> bool:
    """Whether two year / split names are the same (case aside: ``dev`` is ``Dev``)."""
    return a is not None and b is not None and a.casefold() == b.casefold()


def choose_split(task: Task, year: str | None) -> Split:
    """The split of ``task`` for ``year`` (None: the task's default); InputError naming
    the years otherwise."""
    chosen = year if year is not None else task.default_year
    splits = [s for s in task.splits if not s.sample and s.label is not None]
    match = next((s for s in splits if s.label == chosen), None) \
        or next((s for s in splits if same(s.label, chosen)), None)
    if match is None:
        raise InputError(f"unknown {task.year_name} {chosen!r}; expected one of "
                         f"{[s.label for s in splits]}")
    return match


def locate(task: Task, root: Path | None, year: str | None,
           collection: Path | None) -> TaskData:
    """``task``'s data for ``year``: the embedded sample when ``root`` is None, else the
    files its split's needs find under ``root`` (``collection``, when given, instead of
    the one found)."""
    if root is None:
        return _sample(task, year, collection)
    if not root.is_dir():
        raise InputError("data directory not found", path=root)
    split = choose_split(task, year)
    found: dict[str, Path] = {}
    extras: dict[str, Path] = {}
    if collection is not None:
        found["collection"] = collection
    for need in split.needs:
        keys = [need.option if r == "option" else r for r in need.roles]
        if all(k in found for k in keys):  # an earlier need (or --collection) gave it
            path = found[keys[0]]
        else:
            path = find_need(need, root, found)
            if path is None:
                continue
            for k in keys:
                found.setdefault(k, path)
        if need.option:
            extras[need.option] = path
    for role in ("topics", "collection"):
        if role not in found:
            needs = [n for n in split.needs if role in n.roles]
            if role == "collection":
                raise no_collection(needs, root)
            described = " or ".join(f"{n.what} ({' or '.join(n.patterns)})" for n in needs)
            raise InputError(f"no {described or role} under the data directory", path=root)
    data = TaskData(split.data_label or split.name, found["collection"], found["topics"],
                    found.get("qrels"), extras, metadata=found.get("metadata"), root=root)
    return task.complete(data) if task.complete is not None else data


def no_collection(needs: Iterable[Need], root: Path) -> InputError:
    """The error for a data folder where none of ``needs`` finds a collection.

    >>> print(no_collection([Need(("a.xml", "b"), "posts", "collection")], Path("/d")))
    /d: no collection (a.xml, b) under the data directory; pass collection=
    """
    patterns = ", ".join(p for n in needs for p in n.patterns)
    return InputError(f"no collection ({patterns}) under the data directory; pass "
                      f"{option('collection')}", path=root)


def find_need(need: Need, root: Path, found: dict[str, Path] | None = None) -> Path | None:
    """The file of ``need`` under ``root``: the first hit in preference order (``found``:
    the files of earlier needs, by role, for ``beside``); None when an optional one (or
    one of the topics or collection, which another need may give) is absent.

    >>> from mathir.samples import arqmath_sample
    >>> find_need(Need("Posts.V1.3.xml", "posts", "collection"), arqmath_sample().posts.parent).name
    'Posts.V1.3.xml'
    """
    found = found or {}
    if need.beside is not None:
        if need.beside not in found:  # not found: said as such after every need is tried
            return None
        hits = need.hits(found[need.beside].parent, recursive=False)
    else:
        hits = need.hits(root)
    if not hits:
        if need.optional or any(r in ("topics", "collection") for r in need.roles):
            return None  # a required role is checked once every need has been tried
        where = "beside " + found[need.beside].name if need.beside else "under the data directory"
        raise InputError(f"no {need.what} matching {' or '.join(map(repr, need.patterns))} "
                         f"{where}", path=root)
    if need.collection and len(hits) > 1:
        # The choice is explicit, not whichever sorts first: name them all and the flag.
        warnings.warn(f"{len(hits)} collections under {root}: took {hits[0]} over "
                      f"{', '.join(map(str, hits[1:]))} (preferred in the order "
                      f"{', '.join(need.patterns)}); choose another with "
                      f"{option('collection')}", stacklevel=4)
    return hits[0]


def _sample(task: Task, year: str | None, collection: Path | None) -> TaskData:
    if year is not None:
        choose_split(task, year)  # an unknown year is said as such
    if task.sample is None:
        raise InputError(f"{task.name} has no embedded sample: give {option('data', 'DIR')} "
                         "or set MATHIR_DATA")
    labels = [s.label for s in task.splits if s.sample and s.label is not None]
    if year is not None and not any(same(year, label) for label in labels):
        kind = task.year_name.split()[-1]
        has = f"only the {', '.join(dict.fromkeys(labels))} {kind}" if labels \
            else f"no {kind}s"
        raise InputError(f"{task.year_name} {year} needs the real files: give "
                         f"{option('data', 'DIR')} or set MATHIR_DATA; without them mathir "
                         f"evaluates the embedded sample, which has {has}")
    label = next((lab for lab in labels if same(year, lab)), None)
    if label is None:
        label = next((s.label for s in task.splits if s.sample), None)
    return task.sample(label, collection)
