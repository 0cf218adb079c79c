"""Paths a user names: output folders and files checked before any work
(:func:`require_writable_dir`, :func:`require_output_file`), names that become one
folder or file under them (:func:`path_component`, :func:`run_folder`), and data folders
searched following linked folders (:func:`walk_glob`).
"""

from __future__ import annotations

import fnmatch
import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mathir.errors import InputError
from mathir.storage.files import user_os_error


def require_writable_dir(path: str | Path, what: str = "output folder") -> Path:
    """Create the folder ``path`` if needed and check that files can be written in it.

    Checked before any work, so that a bad ``--out`` fails at once, not after an hour of
    retrieval; an existing file, a read-only or full disk is an :class:`InputError`.

    >>> require_writable_dir(__file__)  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    mathir.errors.InputError: .../paths.py: output folder is a file, not a folder
    """
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise InputError(f"{what} is a file, not a folder", path=p)
    for parent in p.parents:
        if parent.exists() and not parent.is_dir():
            raise InputError(f"{what} {str(p)!r} lies under a file", path=parent)
    try:
        p.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=p):
            pass
    except OSError as e:
        raise user_os_error(e, f"{what} not writable", p) from None
    return p


def require_output_file(path: str | Path, what: str = "output file") -> Path:
    """Check, before any work, that the file ``path`` can be written (atomically).

    >>> import tempfile
    >>> require_output_file(tempfile.mkdtemp())  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    mathir.errors.InputError: /tmp/...: output file is a folder; name the file to write
    """
    p = Path(path)
    if p.is_dir():
        raise InputError(f"{what} is a folder; name the file to write", path=p)
    require_writable_dir(p.parent, f"folder of the {what}")
    return p


#: a task's name, a year's or split's label: letters, digits, ``-``, ``_``, ``.``
_STRICT = re.compile(r"[A-Za-z0-9._-]+")
#: a pipeline's name may hold more (``bm25>>crossencoder``, ``bm25+tfidf``), but no
#: separator, white space or control character
_LENIENT_BAD = re.compile(r"[\s/\\\x00-\x1f\x7f]")


def path_component(name: Any, what: str = "name", *, why: str = "it names the folder of its runs",
                   strict: bool = True) -> str:
    """``name`` when it can be one folder or file name under an output folder; an
    :class:`InputError` in words otherwise (the one rule for every name mathir turns into
    a path: tasks, years and splits, pipelines). ``strict``: letters, digits, ``-``,
    ``_`` and ``.`` only; else any character but ``/``, ``\\``, white space and control
    characters. Never empty, ``.``, ``..`` or starting with ``.`` (mathir's temporaries
    and locks are such names).

    >>> path_component("arqmath-task1-proof", "task name")
    'arqmath-task1-proof'
    >>> path_component("../escape", "task name")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    mathir.errors.InputError: task name '../escape': it names the folder of its runs, so ...
    """
    if strict:
        ok = isinstance(name, str) and _STRICT.fullmatch(name) is not None
        rule = "one path component of letters, digits, '-', '_' and '.', not starting with '.'"
    else:
        ok = isinstance(name, str) and bool(name) and _LENIENT_BAD.search(name) is None
        rule = "one word, without '/' and not starting with '.'"
    if not ok or name.startswith("."):
        raise InputError(f"{what} {name!r}: {why}, so it must be {rule}")
    return name


def run_folder(out: str | Path, task: str, label: str) -> Path:
    """``out/<task>/<label>``, the folder of an experiment's runs: each part one path
    component (:func:`path_component`), so the folder lies under ``out`` whatever a task
    or a plug-in declares.

    >>> run_folder("runs", "arqmath-task1", "sample").as_posix()
    'runs/arqmath-task1/sample'
    """
    folder = Path(out) / path_component(task, "task name") / path_component(
        label, "data label (year or split)", why="it names the folder of its runs")
    return folder


def _walk_once(root: Path) -> Iterator[tuple[str, list[str], list[str]]]:
    """``os.walk(root)`` following links, entering each folder once (a link loop is
    walked one time round) and skipping folders that cannot be read; pruning or sorting
    the yielded ``dirs`` steers the walk, as with ``os.walk``."""
    seen: set[tuple[int, int]] = set()
    for d, dirs, files in os.walk(root, followlinks=True):
        try:
            st = os.stat(d)
        except OSError:
            dirs[:] = []
            continue
        if (st.st_dev, st.st_ino) in seen:
            dirs[:] = []
            continue
        seen.add((st.st_dev, st.st_ino))
        yield d, dirs, files


def walk_glob(root: str | Path, pattern: str) -> list[Path]:
    """Like ``sorted(Path(root).rglob(pattern))``, but following symbolic links to folders.

    ``Path.rglob`` does not enter a linked folder (Python < 3.13), so a data directory
    made of links would find nothing. ``os.walk(followlinks=True)`` does; a link back to
    an ancestor (a loop) is entered once, by remembering each real folder's device and
    inode. Matches are files and folders whose name matches ``pattern``.

    >>> from mathir.samples import arqmath_sample
    >>> [p.name for p in walk_glob(arqmath_sample().posts.parent, "Posts.V1.3.xml")]
    ['Posts.V1.3.xml']
    """
    root = Path(root)
    hits: list[Path] = []
    for d, dirs, files in _walk_once(root):
        dirs.sort()
        for n in (*dirs, *files):
            if fnmatch.fnmatchcase(n, pattern):
                hits.append(Path(d) / n)
    return sorted(hits)
