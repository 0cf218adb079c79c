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
from mathir.tasks.declarations import Need, PublishedFile, Split, TaskData, short_digest


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
            check_published(path, need.published, need.what)
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


def check_published(path: Path, published: Iterable[PublishedFile], what: str = "") -> bool:
    """Whether ``path`` is the published file of its name (True when none of
    ``published`` has its name: nothing is known of it). When it is not, ONE warning
    names the file and what differs (size, SHA-256; only the line endings, when its
    text is the same) -- it is used all the same, never refused, never silently.

    Cheap: a ``stat`` first; the digest (:func:`mathir.storage.file_fingerprint`,
    cached by the file's stat key) only when the size is the published one, or to say
    how a file differs.

    >>> import tempfile, warnings
    >>> f = Path(tempfile.mkdtemp()) / "a.tsv"
    >>> _ = f.write_bytes(b"A.1 0 1 1\\r\\n")
    >>> check_published(f, [PublishedFile("b.tsv", 1, "0" * 64)])  # another name
    True
    >>> with warnings.catch_warnings(record=True) as said:
    ...     warnings.simplefilter("always")
    ...     check_published(f, [PublishedFile("a.tsv", 9, "0" * 64)], "qrels")
    False
    >>> print(str(said[0].message).replace(str(f), "PATH"))  # doctest: +ELLIPSIS
    PATH: not the published a.tsv (qrels): 11 bytes, published 9 (sha256 ..., published 0000000000000000…); ...
    """
    named = [f for f in published if f.name == path.name]
    if not named:
        return True
    from mathir.storage import file_fingerprint

    try:
        folder = path.is_dir()
        size = None if folder else path.stat().st_size
        if folder or any(f.size == size for f in named):
            fingerprint = file_fingerprint(path)
            if any(f.sha256 == fingerprint["sha256"] and f.size == fingerprint["size"]
                   for f in named):
                return True
        else:
            fingerprint = file_fingerprint(path)  # to say how it differs (cached)
        text = None if folder else _text_digest(path, max(f.size for f in named))
    except OSError:  # unreadable: reading it says so, where it is read
        return True
    # the published file it is closest to: the same text, else the same size, else any
    chosen = next((f for f in named if text is not None and f.text_digest == text),
                  None) or next((f for f in named if f.size == fingerprint["size"]), named[0])
    warnings.warn(f"{path}: {published_difference(fingerprint, text, chosen, what)}",
                  stacklevel=2)
    return False


def published_difference(fingerprint: dict, text: str | None, published: PublishedFile,
                         what: str = "") -> str:
    """How a file (its :func:`~mathir.storage.file_fingerprint`, ``text``: the SHA-256
    of its text with LF line endings) differs from ``published``, in words.

    >>> pub = PublishedFile("q.tsv", 5_678, "cd" * 32)
    >>> print(published_difference({"size": 1_234, "sha256": "ab" * 32}, None, pub))
    not the published q.tsv: 1,234 bytes, published 5,678 (sha256 abababababababab…, published cdcdcdcdcdcdcdcd…); scores on it may differ from those on the published file
    """
    what = f" ({what})" if what else ""
    head = f"not the published {published.name}{what}: "
    size, digest = fingerprint["size"], fingerprint["sha256"]
    if text is not None and text == published.text_digest:
        return (head + f"only its line endings or final newline differ ({size:,} bytes, "
                f"published {published.size:,}): its text is the same")
    counts = []
    if published.files is not None and fingerprint.get("files") != published.files:
        counts.append(f"{fingerprint.get('files', 1):,} files, published {published.files:,}")
    if size != published.size:
        counts.append(f"{size:,} bytes, published {published.size:,}")
    digests = (f"sha256 {short_digest(digest)}, published "
               f"{short_digest(published.sha256)}")
    said = f"{'; '.join(counts)} ({digests})" if counts else \
        f"{digests} (the same size, {size:,} bytes)"
    return head + said + "; scores on it may differ from those on the published file"


def _text_digest(path: Path, published_size: int) -> str | None:
    """The SHA-256 of ``path``'s text with LF line endings and one final newline; None
    when it is too large to be a published file of ``published_size`` bytes with other
    line endings (it is then not read)."""
    import hashlib

    if path.stat().st_size > 2 * published_size + 2:
        return None
    text = path.read_bytes().replace(b"\r\n", b"\n").rstrip(b"\n") + b"\n"
    return hashlib.sha256(text).hexdigest()


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
