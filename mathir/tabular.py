"""Line-oriented reading of TSV / whitespace-separated files written by others.

Official ARQMath files mix LF and CRLF endings and sometimes lack a final newline;
some are not even valid UTF-8. Every line comes with its number so that errors can
name it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from mathir.errors import InputError, require_file


def iter_lines(path: str | Path) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, line)`` without line endings; blank lines are skipped.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "q.tsv"
    >>> _ = p.write_bytes(b"A.1 0 5 2\\r\\n\\r\\nA.1 0 6 0")
    >>> list(iter_lines(p))
    [(1, 'A.1 0 5 2'), (3, 'A.1 0 6 0')]
    """
    path = require_file(path)
    with open(path, "rb") as f:
        for lineno, raw in enumerate(f, 1):
            raw = raw.rstrip(b"\r\n")
            if not raw.strip():
                continue
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise InputError(
                    f"not valid UTF-8 (byte {raw[e.start]:#04x} at column {e.start + 1})",
                    path=path,
                    line=lineno,
                ) from None
            if "\x00" in line:
                raise InputError("NUL byte in line", path=path, line=lineno)
            yield lineno, line


def iter_fields(path: str | Path, min_fields: int, max_fields: int | None = None,
                sep: str | None = "\t") -> Iterator[tuple[int, list[str]]]:
    """Yield ``(line_number, fields)``, checking the number of fields.

    ``sep=None`` splits on any whitespace (TREC files). With ``max_fields``, the last
    field keeps any further separators (a LaTeX formula may contain tabs).
    """
    for lineno, line in iter_lines(path):
        if sep is None:
            fields = line.split() if max_fields is None else line.split(None, max_fields - 1)
        else:
            fields = line.split(sep) if max_fields is None else line.split(sep, max_fields - 1)
        if len(fields) < min_fields or (max_fields is None and len(fields) != min_fields):
            want = min_fields if max_fields in (None, min_fields) else f"{min_fields}-{max_fields}"
            raise InputError(f"expected {want} columns, found {len(fields)}", path=path, line=lineno)
        yield lineno, fields
