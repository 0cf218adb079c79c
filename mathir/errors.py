"""Errors a user can cause, reported with the file and line they come from."""

from __future__ import annotations

from contextvars import ContextVar
from pathlib import Path

#: Who is calling: ``"python"`` (the default) or ``"cli"`` (set by ``mathir``'s main), so
#: that messages name an option as the caller writes it (:func:`option`).
CALLER: ContextVar[str] = ContextVar("mathir_caller", default="python")


def option(name: str, value: str | None = None) -> str:
    """An option as the caller writes it: ``--collection PATH`` / ``--judged file`` on the
    command line, ``collection=`` / ``judged='file'`` in Python.

    A ``value`` in capitals is a placeholder (``DIR``), shown as it is.

    >>> option("collection"), option("judged", "file"), option("data", "DIR")
    ('collection=', "judged='file'", 'data=DIR')
    """
    if CALLER.get() == "cli":
        return f"--{name.replace('_', '-')} {value or 'PATH'}"
    if value is None:
        return f"{name}="
    return f"{name}={value}" if value.isupper() else f"{name}={value!r}"


class InputError(ValueError):
    """A bad input file, line or argument.

    The message names the file and, where known, the line::

        >>> str(InputError("score is not a number: 'abc'", path="run.tsv", line=3))
        "run.tsv:3: score is not a number: 'abc'"
    """

    def __init__(self, message: str, path: str | Path | None = None, line: int | None = None):
        self.message = message
        self.path = None if path is None else str(path)
        self.line = line
        where = ""
        if self.path is not None:
            where = self.path if line is None else f"{self.path}:{line}"
            where += ": "
        super().__init__(where + message)


def require_file(path: str | Path, what: str = "file") -> Path:
    """Return ``path`` as a Path, raising InputError when it is not an existing file.

    >>> require_file("/nonexistent.tsv")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    mathir.errors.InputError: /nonexistent.tsv: file not found
    """
    p = Path(path)
    if not p.exists():
        raise InputError(f"{what} not found", path=p)
    if not p.is_file():
        raise InputError(f"{what} is not a regular file", path=p)
    return p


def require_files(folder: str | Path, pattern: str, what: str) -> list[Path]:
    """The files of ``folder`` whose names match ``pattern``, in name order; an
    InputError naming the folder when it is missing or holds none.

    >>> require_files("/nonexistent", "*.tsv", "run files")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    mathir.errors.InputError: /nonexistent: folder of run files not found
    """
    d = Path(folder)
    if not d.is_dir():
        raise InputError(f"folder of {what} not found", path=d)
    files = sorted(p for p in d.glob(pattern) if p.is_file())
    if not files:
        raise InputError(f"no {what} ({pattern}) in the folder", path=d)
    return files
