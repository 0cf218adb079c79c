"""Errors a user can cause, reported with the file and line they come from."""

from __future__ import annotations

from pathlib import Path


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
