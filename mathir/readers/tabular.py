"""Line-oriented reading of TSV / whitespace-separated files written by others.

Official ARQMath files mix LF and CRLF endings and sometimes lack a final newline;
some are not even valid UTF-8, and files saved by some editors (Notepad, Excel) start
with a UTF-8 byte-order mark. Runs saved by ``pt.Experiment(save_dir=...)`` are
gzip-compressed (``.res.gz``): a file that starts with gzip's magic bytes is read
through :mod:`gzip`, whatever its name. Every line comes with its number so that errors
can name it.

Reading is bounded: a line longer than :data:`MAX_LINE_BYTES`, or a compressed file
that decompresses to more than :data:`MAX_DECOMPRESSED_BYTES`, is refused with an
InputError naming the line (a 400 KB ``.gz`` holding one 400 MB line once took 1.1 GB
before its error). Both are read from the environment (``MATHIR_MAX_LINE_BYTES``,
``MATHIR_MAX_DECOMPRESSED_BYTES``) when mathir is imported, and can be set on this
module or passed to the readers.

Fields of TREC-style files (runs, qrels) are split on ASCII whitespace only, as NIST's
``trec_eval`` splits them with C's ``isspace``: a non-breaking space inside a document
id is part of the id, not a separator (:func:`iter_trec_fields`).
"""

from __future__ import annotations

import contextlib
import gzip
import math
import os
import re
import warnings
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from mathir.errors import InputError, require_file

UTF8_BOM = b"\xef\xbb\xbf"
_UTF16_32_BOMS = ((b"\xff\xfe\x00\x00", "UTF-32"), (b"\x00\x00\xfe\xff", "UTF-32"),
                  (b"\xff\xfe", "UTF-16"), (b"\xfe\xff", "UTF-16"))


GZIP_MAGIC = b"\x1f\x8b"


def _env_bytes(name: str, default: int) -> int:
    value = os.environ.get(name)
    if value is None:
        return default
    try:
        number = int(value)
    except ValueError:
        raise InputError(f"{name}={value!r} is not a whole number of bytes") from None
    if number < 1:
        raise InputError(f"{name}={value!r} must be at least 1")
    return number


#: Longest line (in bytes, line ending included) the line readers accept: 4 MiB.
#: Official ARQMath lines are under 100 KB; a longer one is refused, naming the line.
MAX_LINE_BYTES = _env_bytes("MATHIR_MAX_LINE_BYTES", 4 << 20)
#: Most bytes read out of one gzip-compressed input: 4 GiB (a compression bomb stops
#: there, with an error, instead of running for minutes).
MAX_DECOMPRESSED_BYTES = _env_bytes("MATHIR_MAX_DECOMPRESSED_BYTES", 4 << 30)

#: C's ``isspace`` in the "C" locale, which trec_eval splits fields with. Python's
#: ``str.split()`` also splits on Unicode spaces (U+00A0, U+2003, ...), which trec_eval
#: reads as part of a field.
ASCII_WHITESPACE = " \t\n\r\x0b\x0c"
_ASCII_SPACES = re.compile(f"[{re.escape(ASCII_WHITESPACE)}]+")


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


def iter_lines(path: str | Path, max_line_bytes: int | None = None,
               max_decompressed_bytes: int | None = None,
               bom_warning: str | None = None) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, line)`` without line endings; blank lines are skipped.

    A UTF-8 byte-order mark at the start of the file is dropped (it is not part of the
    first field: read as text it would turn topic ``A.1`` into ``\\ufeffA.1``). A UTF-16
    or UTF-32 file is refused, naming its encoding; with ``bom_warning``, dropping the
    mark is reported in a warning with that text.

    Lines longer than ``max_line_bytes`` (default :data:`MAX_LINE_BYTES`) and compressed
    files larger than ``max_decompressed_bytes`` once decompressed (default
    :data:`MAX_DECOMPRESSED_BYTES`) are refused, naming the line, before they are held
    in memory.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "q.tsv"
    >>> _ = p.write_bytes(b"\\xef\\xbb\\xbfA.1 0 5 2\\r\\n\\r\\nA.1 0 6 0")
    >>> list(iter_lines(p))
    [(1, 'A.1 0 5 2'), (3, 'A.1 0 6 0')]
    """
    path = require_file(path)
    with open_bytes(path) as f:
        for lineno, raw in _numbered(f, path, max_line_bytes, max_decompressed_bytes):
            if lineno == 1:
                raw, dropped = _drop_bom(raw, path)
                if dropped and bom_warning:
                    warnings.warn(f"{path}:1: {bom_warning}", stacklevel=3)
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
    n, last, total = 0, b"\n", 0
    limit = MAX_DECOMPRESSED_BYTES
    with open_bytes(path) as f:
        compressed = isinstance(f, gzip.GzipFile)
        while block := f.read(chunk):
            n += block.count(b"\n")
            last = block[-1:]
            total += len(block)
            if compressed and total > limit:
                raise _too_big(path, limit, n + 1)
    return n + (last != b"\n")


def _too_big(path: Path, limit: int, lineno: int) -> InputError:
    return InputError(f"decompresses to more than {limit:,} bytes (the limit; set "
                      "MATHIR_MAX_DECOMPRESSED_BYTES or mathir.readers.tabular.MAX_DECOMPRESSED_BYTES "
                      "to read more)", path=path, line=lineno)


def _numbered(f: IO[bytes], path: Path, max_line_bytes: int | None = None,
              max_decompressed_bytes: int | None = None) -> Iterator[tuple[int, bytes]]:
    """``(line number, raw line)``, each line read with a size cap so that a huge line
    is refused after ``max_line_bytes`` bytes rather than held whole in memory."""
    limit = MAX_LINE_BYTES if max_line_bytes is None else max_line_bytes
    most = MAX_DECOMPRESSED_BYTES if max_decompressed_bytes is None else max_decompressed_bytes
    compressed = isinstance(f, gzip.GzipFile)
    lineno = total = 0
    try:
        while raw := f.readline(limit + 1):
            lineno += 1
            if len(raw) > limit:
                raise InputError(f"line longer than {limit:,} bytes (the limit; set "
                                 "MATHIR_MAX_LINE_BYTES or mathir.readers.tabular.MAX_LINE_BYTES to "
                                 "read longer lines)", path=path, line=lineno)
            total += len(raw)
            if compressed and total > most:
                raise _too_big(path, most, lineno)
            yield lineno, raw
    except (OSError, EOFError, zlib.error) as e:  # a damaged or truncated gzip file
        raise InputError(f"not readable as gzip data ({e})", path=path,
                         line=lineno + 1) from None


def _drop_bom(first_line: bytes, path: Path) -> tuple[bytes, bool]:
    if first_line.startswith(UTF8_BOM):
        return first_line[len(UTF8_BOM):], True
    for bom, encoding in _UTF16_32_BOMS:
        if first_line.startswith(bom):
            raise InputError(f"the file is {encoding} text (byte-order mark {bom.hex(' ')}); "
                             "convert it to UTF-8", path=path, line=1)
    return first_line, False


def iter_fields(path: str | Path, min_fields: int, max_fields: int | None = None,
                sep: str | None = "\t") -> Iterator[tuple[int, list[str]]]:
    """Yield ``(line_number, fields)``, checking the number of fields.

    ``sep=None`` splits on ASCII whitespace (TREC files; see :func:`split_ascii`). With
    ``max_fields``, the last field keeps any further separators (a LaTeX formula may
    contain tabs).
    """
    for lineno, line in iter_lines(path):
        if sep is None:
            fields = split_ascii(line, -1 if max_fields is None else max_fields - 1)
        else:
            fields = line.split(sep) if max_fields is None else line.split(sep, max_fields - 1)
        if len(fields) < min_fields or (max_fields is None and len(fields) != min_fields):
            want = min_fields if max_fields in (None, min_fields) else f"{min_fields}-{max_fields}"
            raise InputError(f"expected {want} columns, found {len(fields)}", path=path, line=lineno)
        yield lineno, fields


def split_ascii(line: str, maxsplit: int = -1) -> list[str]:
    """``line.split(None, maxsplit)``, but on ASCII whitespace only, as C's ``isspace``.

    >>> split_ascii("A.1 0 12\\u00a034 2")
    ['A.1', '0', '12\\xa034', '2']
    >>> split_ascii("  a\\tb  c ", 1)
    ['a', 'b  c']
    """
    line = line.strip(ASCII_WHITESPACE)
    return _ASCII_SPACES.split(line, maxsplit=max(maxsplit, 0)) if line else []


def iter_trec_fields(path: str | Path, min_fields: int, max_fields: int | None = None,
                     blank_lines: str = "skip") -> Iterator[tuple[int, list[str]]]:
    """``(line number, fields)`` of a TREC run or qrels file, read as trec_eval reads it.

    Fields are split on ASCII whitespace; a line whose first non-blank character is
    ``#`` is a comment; a line with fewer than ``min_fields`` fields, or more than
    ``max_fields`` (None: any number; trec_eval ignores a run line's extra fields), is
    refused, naming it. ``blank_lines="skip"`` skips blank lines as trec_eval does in
    runs; ``"warn"`` skips them with a warning naming the first (trec_eval refuses a
    qrels file with a blank line). A UTF-8 byte-order mark is dropped with a warning
    (trec_eval would read it as part of the first topic id).

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "q.txt"
    >>> _ = p.write_text("# judged by hand\\nA.1 0 5 2\\n")
    >>> list(iter_trec_fields(p, 4, 4))
    [(2, ['A.1', '0', '5', '2'])]
    """
    blank: list[int] = []
    last = 0
    for lineno, line in iter_lines(path, bom_warning=(
            "dropped a UTF-8 byte-order mark (trec_eval reads it as part of the first "
            "topic id)")):
        if blank_lines == "warn" and lineno != last + 1:
            blank.extend(range(last + 1, lineno))
        last = lineno
        fields = split_ascii(line)
        if not fields:  # a line of Unicode spaces only: iter_lines keeps it
            if blank_lines == "warn":
                blank.append(lineno)
            continue
        if fields[0].startswith("#"):
            continue
        if len(fields) < min_fields or (max_fields is not None and len(fields) > max_fields):
            want = (min_fields if max_fields == min_fields
                    else f"at least {min_fields}" if max_fields is None
                    else f"{min_fields}-{max_fields}")
            raise InputError(f"expected {want} columns (split on ASCII whitespace), "
                             f"found {len(fields)}", path=path, line=lineno)
        yield lineno, fields
    if blank:
        warnings.warn(f"{path}:{blank[0]}: skipped {len(blank)} blank line(s) "
                      "(trec_eval refuses a qrels file with a blank line)", stacklevel=2)


#: A number as C's ``atof`` reads it, in full and in ASCII digits only (no ``1_000``, no
#: Arabic-Indic digits, no hexadecimal, no ``inf`` or ``nan``). Each digit can belong to
#: one part only (``[0-9]+\.?[0-9]*`` could split a run of digits in n ways: a full match
#: of 40,000 digits and an ``x`` took 49 s).
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_INTEGER = re.compile(r"[+-]?[0-9]+")
#: An integer, possibly written as a float with a zero fraction (``2.0``), which
#: ``atol`` reads as the integer.
_WHOLE = re.compile(r"([+-]?[0-9]+)(?:\.0*)?")
#: Public names of the two patterns (``fullmatch``: the whole field is such a number).
DECIMAL_PATTERN = _DECIMAL
INTEGER_PATTERN = _INTEGER

#: C's ``long`` on 64-bit Linux, where trec_eval runs: glibc's ``atol`` (``strtol``)
#: saturates at these bounds (with ``ERANGE``) instead of overflowing.
LONG_MAX = 2**63 - 1
LONG_MIN = -(2**63)


def quote_field(text: str, limit: int = 40) -> str:
    """``repr(text)`` for an error message, cut after ``limit // 2`` characters when
    longer than ``limit`` (a 4 MiB field would make a 4 MiB message).

    >>> quote_field("2.5"), quote_field("9" * 5000)
    ("'2.5'", "'99999999999999999999…' (5,000 characters)")
    """
    if len(text) <= limit:
        return repr(text)
    head = repr(text[: limit // 2])
    return f"{head[:-1]}…{head[-1]} ({len(text):,} characters)"


def _c_long(digits: str) -> tuple[int, bool]:
    """An optionally signed run of ASCII digits as C's ``strtol`` reads it on 64-bit
    Linux, saturated at :data:`LONG_MIN` / :data:`LONG_MAX`, and whether it was.
    Python's ``int()`` would refuse more than 4,300 digits (ValueError), and
    ``array('q')`` anything beyond 64 bits (OverflowError).

    >>> _c_long("-0042"), _c_long("9" * 5000), _c_long("9223372036854775807")
    ((-42, False), (9223372036854775807, True), (9223372036854775807, False))
    """
    negative = digits.startswith("-")
    body = digits.lstrip("+-").lstrip("0")
    if len(body) > len(str(LONG_MAX)):
        return (LONG_MIN if negative else LONG_MAX), True
    value = -int(body or "0") if negative else int(body or "0")
    clamped = min(max(value, LONG_MIN), LONG_MAX)
    return clamped, clamped != value


def parse_decimal(text: str, what: str, path: str | Path | None, lineno: int | None) -> float:
    """A finite number written in ASCII digits, or InputError naming the file and line.

    Python's ``float()`` also reads ``1_000``, ``\\u0663`` (an Arabic-Indic 3) and
    ``infinity``, which trec_eval's ``atof`` reads as 1, 0 and infinity: refused here.

    >>> parse_decimal("-1.5e3", "score", "r.tsv", 1)
    -1500.0
    >>> parse_decimal("1_000", "score", "r.tsv", 4)  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    mathir.errors.InputError: r.tsv:4: score is not a number in ASCII digits: '1_000'
    """
    if not _DECIMAL.fullmatch(text):
        raise InputError(f"{what} is not a number in ASCII digits: {quote_field(text)}",
                         path=path, line=lineno)
    value = float(text)  # 1e99999 is inf, as C's strtod reads it
    if not math.isfinite(value):
        raise InputError(f"{what} is not finite: {quote_field(text)}", path=path, line=lineno)
    return value


def parse_integer(text: str, what: str, path: str | Path | None, lineno: int | None,
                  float_form: bool = False) -> int:
    """An integer in ASCII digits (``float_form``: also ``2.0``) that fits in 64 bits,
    or InputError.

    >>> parse_integer("3", "rank", "r.tsv", 1), parse_integer("2.0", "label", "q", 1, True)
    (3, 2)
    >>> parse_integer("9" * 20, "rank", "r.tsv", 2)  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    mathir.errors.InputError: r.tsv:2: rank '99999999999999999999' is beyond a 64-bit integer
    """
    m = (_WHOLE if float_form else _INTEGER).fullmatch(text)
    if not m:
        raise InputError(f"{what} is not an integer in ASCII digits: {quote_field(text)}",
                         path=path, line=lineno)
    value, saturated = _c_long(m.group(1) if float_form else text)
    if saturated:
        raise InputError(f"{what} {quote_field(text)} is beyond a 64-bit integer", path=path,
                         line=lineno)
    return value


class ReadNotes:
    """What a reader read more leniently than it could have refused, reported as one
    warning per kind of note, naming the first line and counting the others.

    >>> import warnings
    >>> notes = ReadNotes("run.tsv")
    >>> notes.add("score", 3, "score '1_000' read as 1.0")
    >>> notes.add("score", 9, "score 'x' read as 0.0")
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     notes.warn()
    >>> str(w[0].message)
    "run.tsv:3: score '1_000' read as 1.0 (and 1 more such line)"
    """

    def __init__(self, path: str | Path):
        self.path = path
        self._first: dict[str, tuple[int, str]] = {}
        self._count: dict[str, int] = {}

    def add(self, kind: str, lineno: int, message: str) -> None:
        """Note ``message`` about line ``lineno`` (only the first of a kind is kept)."""
        self._first.setdefault(kind, (lineno, message))
        self._count[kind] = self._count.get(kind, 0) + 1

    def warn(self, stacklevel: int = 2) -> None:
        """One warning per kind noted."""
        for kind, (lineno, message) in self._first.items():
            more = self._count[kind] - 1
            tail = f" (and {more} more such line{'s' if more > 1 else ''})" if more else ""
            warnings.warn(f"{self.path}:{lineno}: {message}{tail}", stacklevel=stacklevel + 1)


# C's strtod / atof and atol on a field (no leading blanks: fields are split on them).
_ATOF_HEX = re.compile(r"[+-]?0[xX](?:[0-9a-fA-F]+(?:\.[0-9a-fA-F]*)?|\.[0-9a-fA-F]+)"
                       r"(?:[pP][+-]?[0-9]+)?")
_ATOF_SPECIAL = re.compile(r"[+-]?(?:inf|nan)", re.IGNORECASE)


def atof(text: str) -> float:
    """The number C's ``atof`` reads from ``text``: its longest numeric prefix, else 0.

    A number too large for a double is infinite, as C's ``strtod`` reads it
    (``float.fromhex`` would raise OverflowError).

    >>> atof("2.5"), atof("1_000"), atof("3abc"), atof("\\u0663"), atof("0x1p3")
    (2.5, 1.0, 3.0, 0.0, 8.0)
    >>> atof("0x1p99999"), atof("-0x1p99999"), atof("1e99999")
    (inf, -inf, inf)
    """
    m = _ATOF_HEX.match(text)
    if m:
        hexa = m.group()
        if "p" not in hexa.lower():
            hexa += "p0"
        try:
            return float.fromhex(hexa)
        except OverflowError:  # strtod: HUGE_VAL with ERANGE
            return -math.inf if hexa.startswith("-") else math.inf
    m = _ATOF_SPECIAL.match(text)
    if m:
        return float(m.group())
    m = _DECIMAL.match(text)
    return float(m.group()) if m else 0.0


def atol(text: str) -> int:
    """The integer C's ``atol`` reads from ``text``: its longest integer prefix, else 0,
    saturated at :data:`LONG_MIN` / :data:`LONG_MAX` as glibc's ``strtol`` saturates.

    >>> atol("2.0"), atol("0_3"), atol("\\u0663"), atol("-1x"), atol("9" * 30)
    (2, 0, 0, -1, 9223372036854775807)
    """
    m = _INTEGER.match(text)
    return _c_long(m.group())[0] if m else 0


def read_score(text: str, what: str, path: str | Path, lineno: int, notes: ReadNotes) -> float:
    """A run's score as trec_eval reads it (:func:`atof`), noting any text that is not
    wholly a number in ASCII digits; a score that is not finite (``inf``, ``nan``, ``1e999``)
    is refused (trec_eval's sort would order it arbitrarily).

    >>> notes = ReadNotes("r.tsv")
    >>> read_score("1.5", "score", "r.tsv", 1, notes), read_score("1_000", "score", "r.tsv", 2, notes)
    (1.5, 1.0)
    """
    if _DECIMAL.fullmatch(text):
        value = float(text)
    else:
        value = atof(text)
        notes.add(what, lineno, f"{what} {quote_field(text)} is not a number in ASCII digits: "
                                f"read as {value!r}, as trec_eval reads it (C's atof)")
    if not math.isfinite(value):  # inf, nan, 1e999, 0x1p99999: trec_eval reads +-inf
        raise InputError(f"{what} is not finite: {quote_field(text)}", path=path, line=lineno)
    return value


def read_whole(text: str, what: str, lineno: int, notes: ReadNotes,
               float_form: bool = False) -> int:
    """An integer as trec_eval reads it (:func:`atol`), noting any text that is not
    wholly an integer in ASCII digits (with ``float_form``, ``2.0`` is one), and any
    integer beyond 64 bits: read as :data:`LONG_MAX` (or :data:`LONG_MIN`), where glibc's
    ``atol`` saturates, rather than refused (trec_eval never reads a run's rank; a label
    so large is refused by the qrels reader, being no task's label).

    >>> notes = ReadNotes("q.tsv")
    >>> read_whole("2.0", "relevance", 1, notes, True), read_whole("0_3", "relevance", 2, notes)
    (2, 0)
    >>> read_whole("9" * 5000, "rank", 3, notes)
    9223372036854775807
    """
    m = (_WHOLE if float_form else _INTEGER).fullmatch(text)
    if m:
        value, saturated = _c_long(m.group(1) if float_form else text)
        if saturated:
            notes.add(f"{what} beyond 64 bits", lineno,
                      f"{what} {quote_field(text)} is beyond a 64-bit integer: read as {value} "
                      "(C's atol saturates, as trec_eval reads numbers)")
        return value
    value = atol(text)
    notes.add(what, lineno, f"{what} {quote_field(text)} is not an integer in ASCII digits: "
                            f"read as {value} (C's atol, as trec_eval reads numbers)")
    return value
