"""Line-oriented reading of TSV / whitespace-separated files written by others.

Official ARQMath files mix LF and CRLF endings and sometimes lack a final newline;
some are not even valid UTF-8, and files saved by some editors (Notepad, Excel) start
with a UTF-8 byte-order mark. Runs saved by ``pt.Experiment(save_dir=...)`` are
gzip-compressed (``.res.gz``): a file that starts with gzip's magic bytes is read
through :mod:`gzip`, whatever its name. Every line comes with its number so that errors
can name it.
"""

from __future__ import annotations

import contextlib
import gzip
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from mathir.errors import InputError, require_file

UTF8_BOM = b"\xef\xbb\xbf"
_UTF16_32_BOMS = ((b"\xff\xfe\x00\x00", "UTF-32"), (b"\x00\x00\xfe\xff", "UTF-32"),
                  (b"\xff\xfe", "UTF-16"), (b"\xfe\xff", "UTF-16"))


GZIP_MAGIC = b"\x1f\x8b"


@contextlib.contextmanager
def open_bytes(path: str | Path) -> Iterator[IO[bytes]]:
    """``path`` opened for reading bytes, decompressed when it is gzip data.

    >>> import gzip, tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "run.res.gz"
    >>> _ = p.write_bytes(gzip.compress(b"1 Q0 d1 1 2.0 r\\n"))
    >>> with open_bytes(p) as f:
    ...     f.read()
    b'1 Q0 d1 1 2.0 r\\n'
    """
    path = require_file(path)
    with open(path, "rb") as f:
        compressed = f.read(2) == GZIP_MAGIC
        f.seek(0)
        if not compressed:
            yield f
            return
        with gzip.GzipFile(fileobj=f) as g:
            yield g


def iter_lines(path: str | Path) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, line)`` without line endings; blank lines are skipped.

    A UTF-8 byte-order mark at the start of the file is dropped (it is not part of the
    first field: read as text it would turn topic ``A.1`` into ``\\ufeffA.1``). A UTF-16
    or UTF-32 file is refused, naming its encoding.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "q.tsv"
    >>> _ = p.write_bytes(b"\\xef\\xbb\\xbfA.1 0 5 2\\r\\n\\r\\nA.1 0 6 0")
    >>> list(iter_lines(p))
    [(1, 'A.1 0 5 2'), (3, 'A.1 0 6 0')]
    """
    path = require_file(path)
    with open_bytes(path) as f:
        for lineno, raw in _numbered(f, path):
            if lineno == 1:
                raw = _drop_bom(raw, path)
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


def count_lines(path: str | Path, chunk: int = 1 << 22) -> int:
    """Newlines in ``path`` (plus one for a last line without one): a cheap total for
    progress bars, read in blocks without decoding (about a second per GB).

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "f.tsv"
    >>> _ = p.write_bytes(b"a\\nb\\nc")
    >>> count_lines(p)
    3
    """
    n, last = 0, b"\n"
    with open_bytes(path) as f:
        while block := f.read(chunk):
            n += block.count(b"\n")
            last = block[-1:]
    return n + (last != b"\n")


def _numbered(f: IO[bytes], path: Path) -> Iterator[tuple[int, bytes]]:
    lineno = 0
    try:
        for lineno, raw in enumerate(f, 1):  # noqa: B007 - lineno names a corrupt line
            yield lineno, raw
    except (OSError, EOFError, zlib.error) as e:  # a damaged or truncated gzip file
        raise InputError(f"not readable as gzip data ({e})", path=path,
                         line=lineno + 1) from None


def _drop_bom(first_line: bytes, path: Path) -> bytes:
    if first_line.startswith(UTF8_BOM):
        return first_line[len(UTF8_BOM):]
    for bom, encoding in _UTF16_32_BOMS:
        if first_line.startswith(bom):
            raise InputError(f"the file is {encoding} text (byte-order mark {bom.hex(' ')}); "
                             "convert it to UTF-8", path=path, line=1)
    return first_line


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
