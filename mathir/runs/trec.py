"""ARQMath Task 1 run files.

* ARQMath-2/3 (default when writing): ``topic post_id rank score run`` (5 columns, TAB).
* ARQMath-1 / TREC: ``topic Q0 post_id rank score run`` (6 columns).

Both are read as NIST's ``trec_eval`` reads a run (its ``get_trec_results.c``), which
is what the ARQMath organisers score runs with:

* fields are split on ASCII whitespace (a non-breaking space is part of a field);
  a line whose first non-blank character is ``#`` is a comment; blank lines are skipped;
* a TREC line has 6 fields (further fields are ignored, as trec_eval ignores them; the
  second field is not checked); a 5-field line is the ARQMath-2/3 format, whose rank is
  an integer in ASCII digits: one that looks like a TREC line without its run tag
  (``Q0`` second in any case, a rank that is not such an integer, post id 0 beside a
  numeric run tag) is refused, naming the line (trec_eval refuses every 5-field line;
  see :func:`check_five_columns`); a file mixing the two formats is refused;
* a score is read as trec_eval reads it, with C's ``atof``: a field that is not wholly
  a number in ASCII digits (``1_000``, an Arabic-Indic digit, ``3abc``) counts as its
  numeric prefix (1, 0, 3), as there, and a warning names the line (Python's
  ``float()`` would read 1000 and 3); a score that is not finite (``inf``, ``nan``) is
  refused, as is one beyond a double (``1e99999``, ``0x1p99999``, which ``atof`` reads
  as infinite). trec_eval ignores ranks; in a TREC line a rank that is not an integer is
  read with C's ``atol``, with a warning (it often shows columns out of place); in
  either format a rank beyond 64 bits is saturated at 2**63 - 1 as glibc's ``atol``
  saturates, with a warning naming the line;
* a repeated (topic, post) pair: the first occurrence is kept and a warning names the
  line (trec_eval refuses the file: "duplicate docs");
* every row is kept, as trec_eval keeps them; a topic with more than
  :data:`MAX_RESULTS` rows (ARQMath's limit for submissions) gets a warning. Pass
  ``max_results`` to keep only each topic's best rows;
* ties in score are allowed; evaluation orders them as trec_eval does;
* a topic absent from the given topics, or an empty file: :class:`InputError`.

Lines are read one at a time with a length cap (:mod:`mathir.readers.tabular`); memory holds
the rows in columns plus 16 bytes per row (a fingerprint of the pair and the line
number) to find repeated pairs (see :func:`best_rows`).
"""

from __future__ import annotations

import contextlib
import gzip
import io
import math
import warnings
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO

import numpy as np
import pandas as pd

from mathir.errors import InputError
from mathir.readers.tabular import (
    DECIMAL_PATTERN,
    INTEGER_PATTERN,
    ReadNotes,
    iter_trec_fields,
    parse_decimal,
    parse_integer,
    quote_field,
    read_score,
    read_whole,
)
from mathir.storage import atomic_file

MAX_RESULTS = 1000
RUN_COLUMNS = ["qid", "docno", "rank", "score", "name"]
FORMATS = ("arqmath", "trec")


def parse_number(text: str, kind: type, what: str, path, lineno: int):
    """``text`` as an int or a finite float written in ASCII digits, or InputError
    naming the file and line (see :func:`mathir.readers.tabular.parse_decimal`).

    >>> parse_number("2.5", float, "score", "r.tsv", 1)
    2.5
    """
    if kind is int:
        return parse_integer(text, what, path, lineno)
    return parse_decimal(text, what, path, lineno)


def read_run(path: str | Path, topics: Iterable[str] | None = None,
             max_results: int | None = None) -> pd.DataFrame:
    """Read a Task 1 run (5- or 6-column format) into ``qid, docno, rank, score, name``.

    ``topics`` (ids), when given, makes a topic outside them an error. Every row is
    kept unless ``max_results`` is given (then each topic's best rows by score).

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "r.tsv"
    >>> _ = p.write_text("A.1\\t10\\t1\\t2.5\\tbm25\\nA.1\\t11\\t2\\t1.5\\tbm25\\n")
    >>> read_run(p).docno.tolist()
    ['10', '11']
    """
    known = set(topics) if topics is not None else None
    notes = ReadNotes(path)

    def rows() -> Iterator[tuple[int, tuple]]:
        first: tuple[int, int] | None = None  # (line, fields) of the first row
        for lineno, fields in iter_trec_fields(path, 5):
            if len(fields) == 5:
                check_five_columns(fields, path, lineno)
            width = min(len(fields), 6)
            if first is None:
                first = (lineno, width)
            elif width != first[1]:
                raise InputError(
                    f"{width} columns, but line {first[0]} has {first[1]}: a run is in one "
                    "format, ARQMath's 'topic post_id rank score run' (5) or TREC's "
                    "'topic Q0 post_id rank score run' (6)", path=path, line=lineno)
            if width == 6:
                qid, _, docno, rank, score, name = fields[:6]
            else:
                qid, docno, rank, score, name = fields
            if known is not None and qid not in known:
                raise InputError(f"topic {qid!r} is not in the topics", path=path, line=lineno)
            yield lineno, (qid, docno, read_whole(rank, "rank", lineno, notes),
                           read_score(score, "score", path, lineno, notes), name)

    run = best_rows(rows, RUN_COLUMNS, max_results, path)
    notes.warn()
    return run


_TAGLESS = ("a TREC line without its run tag, it seems (expected 'topic Q0 post_id rank "
            "score run_tag', or ARQMath's 'topic post_id rank score run' with an integer "
            "rank; trec_eval refuses it too)")


def check_five_columns(fields: Sequence[str], path: str | Path, lineno: int) -> None:
    """Refuse a 5-field line that is not ARQMath's ``topic post_id rank score run``.

    trec_eval refuses every 5-field line; mathir reads the ARQMath-2/3 format, whose
    rank is an integer in ASCII digits. A TREC line that lost its run tag
    (``topic Q0 docno rank score``) would be read with ``Q0`` as the post, the document
    id as the rank (read as 0, with a warning, before) and the score as the run tag,
    and score 0.0000 everywhere; it is refused, naming the line, when its second field
    is ``Q0`` (any case), its rank is not an integer, or its post id is 0 and its run
    tag a number (``A.1 0 1002 1 9.5``; real runs hold post id 0 beside a named tag).

    >>> check_five_columns(["A.1", "1002", "1", "9.5", "bm25"], "r.tsv", 1)
    >>> check_five_columns(["A.1", "0", "d3", "1", "9.5"], "r.tsv", 2)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    mathir.errors.InputError: r.tsv:2: rank 'd3' is not an integer in ASCII digits: ...
    """
    post, rank, tag = fields[1], fields[2], fields[4]
    if post.upper() == "Q0":
        why = f"5 columns with {post} second"
    elif not INTEGER_PATTERN.fullmatch(rank):
        why = f"rank {quote_field(rank)} is not an integer in ASCII digits"
    elif post == "0" and DECIMAL_PATTERN.fullmatch(tag):
        why = f"5 columns with post id 0 and a number as run tag ({quote_field(tag)})"
    else:
        return
    raise InputError(f"{why}: {_TAGLESS}", path=path, line=lineno)


def best_rows(rows: Callable[[], Iterator[tuple[int, tuple]]], columns: Sequence[str],
              max_results: int | None, path: str | Path) -> pd.DataFrame:
    """The rows of a run file as :func:`read_run` keeps them.

    ``rows()`` yields ``(line number, row)`` with the row a tuple in ``columns`` order
    (which names ``qid``, ``docno``, ``rank`` and ``score``), checked, in file order.
    Semantics: a repeated (topic, document) pair keeps its first row (a warning names
    the first repeat and its earlier line); a topic with more than :data:`MAX_RESULTS`
    rows gets a warning, and with ``max_results`` each topic keeps its best
    ``max_results`` rows; rows come topic by topic (sorted), by score (descending),
    rank, then file order.

    Memory: the rows in columns (``rank`` and ``score`` as 8-byte arrays, repeated
    strings shared) and 16 bytes a row (a hash of the pair and the line number);
    repeats are found with :func:`numpy.unique` over the hashes, then compared exactly.

    >>> rows = lambda: iter([(1, ("A.1", "7", 2, 1.0, "r")), (2, ("A.1", "8", 1, 3.0, "r"))])
    >>> best_rows(rows, RUN_COLUMNS, None, "r.tsv").docno.tolist()
    ['8', '7']
    """
    if max_results is not None and max_results < 1:
        raise InputError(f"max_results must be at least 1, not {max_results}")
    q, d, r, s = (columns.index(c) for c in ("qid", "docno", "rank", "score"))
    shared: dict[str, str] = {}  # one string object per topic, run name, ...
    cells: list[list | array] = [
        array("q") if i == r else array("d") if i == s else [] for i in range(len(columns))]
    fingerprints = array("q")  # hash((qid, docno)) of every row
    lines = array("q")
    for lineno, row in rows():
        fingerprints.append(hash((row[q], row[d])))
        lines.append(lineno)
        for i, value in enumerate(row):
            if i in (q, len(row) - 1) and isinstance(value, str):
                value = shared.setdefault(value, value)
            cells[i].append(value)
    n = len(lines)
    if not n:
        raise InputError("run file has no results", path=path)
    keep = np.ones(n, dtype=bool)
    suspects = _repeated(fingerprints)
    del fingerprints
    if suspects.size:
        keep = _first_of_pairs(cells[q], cells[d], suspects, lines, path)
    frame = pd.DataFrame({c: (np.frombuffer(cells[i], dtype=np.int64 if i == r else np.float64)
                              if i in (r, s) else cells[i])
                          for i, c in enumerate(columns)})
    del cells
    frame["_line"] = np.frombuffer(lines, dtype=np.int64)
    frame = frame[keep]
    frame = frame.sort_values(["qid", "score", "rank", "_line"],
                              ascending=[True, False, True, True], kind="stable")
    counts = frame.groupby("qid", sort=False).cumcount()
    over = counts >= MAX_RESULTS
    if over.any():
        many = frame.loc[over, "qid"].unique()
        if max_results is None:
            warnings.warn(f"{path}: {len(many)} topic(s) have more than {MAX_RESULTS:,} rows "
                          f"(e.g. {many[0]}), ARQMath's limit for submissions: all are "
                          "evaluated, as trec_eval does (max_results cuts them)",
                          stacklevel=3)
    if max_results is not None and (counts >= max_results).any():
        warnings.warn(f"{path}: kept the best {max_results} rows of topics with more",
                      stacklevel=3)
        frame = frame[counts < max_results]
    return frame.drop(columns="_line").reset_index(drop=True)


def _repeated(fingerprints: array) -> np.ndarray:
    """The values that occur more than once in ``fingerprints``, as a sorted array.

    >>> _repeated(array("q", [5, 1, 5, 2, 1])).tolist()
    [1, 5]
    """
    values, counts = np.unique(np.frombuffer(fingerprints, dtype=np.int64), return_counts=True)
    return values[counts > 1]


def _first_of_pairs(qids: list, docnos: list, suspects: np.ndarray, lines: array,
                    path: str | Path) -> np.ndarray:
    """Mask keeping the first row of each (topic, document) pair; warns on repeats.

    Only rows whose fingerprint repeats are compared, exactly (a hash collision drops
    nothing).
    """
    n = len(lines)
    keep = np.ones(n, dtype=bool)
    hashes = np.fromiter((hash(pair) for pair in zip(qids, docnos, strict=True)),
                         dtype=np.int64, count=n)
    first: dict[tuple[str, str], int] = {}
    repeat = None
    for i in np.flatnonzero(np.isin(hashes, suspects)):
        pair = (qids[i], docnos[i])
        j = first.setdefault(pair, int(i))
        if j != i:
            keep[i] = False
            if repeat is None:
                repeat = (lines[i], pair, lines[j])
    if repeat is not None:
        dropped = int(n - keep.sum())
        line, (qid, docno), earlier = repeat
        warnings.warn(f"{path}:{line}: topic {qid} document {docno} repeats line {earlier}; "
                      f"kept the first row of each of {dropped} repeated (topic, document) "
                      "row(s) (trec_eval refuses a run with repeated documents)", stacklevel=4)
    return keep


def _clean(run: pd.DataFrame, max_results: int, source: str) -> pd.DataFrame:
    n = len(run)
    run = run.drop_duplicates(["qid", "docno"], keep="first")
    if len(run) < n:
        warnings.warn(f"{source}: dropped {n - len(run)} repeated (topic, document) rows",
                      stacklevel=3)
    run = run.sort_values(["qid", "score", "rank"], ascending=[True, False, True], kind="stable")
    counts = run.groupby("qid", sort=False).cumcount()
    if (counts >= max_results).any():
        warnings.warn(f"{source}: kept the best {max_results} rows of topics with more",
                      stacklevel=3)
        run = run[counts < max_results]
    return run.reset_index(drop=True)


def check_scores_and_topics(run: pd.DataFrame, topics: Iterable[str] | None,
                            unit: str = "document") -> None:
    """Make ``run.score`` float (in place); InputError for a non-finite score or unknown topic."""
    run["score"] = pd.to_numeric(run["score"], errors="coerce").astype(float)
    bad = ~run["score"].map(math.isfinite)
    if bad.any():
        row = run[bad].iloc[0]
        raise InputError(f"score of topic {row.qid} {unit} {row.docno} is not finite")
    if topics is not None:
        unknown = sorted(set(run["qid"]) - set(topics))
        if unknown:
            raise InputError(f"results for topics not in the topics: {unknown[:5]}")


def validate_run(run: pd.DataFrame, topics: Iterable[str] | None = None,
                 max_results: int = MAX_RESULTS) -> pd.DataFrame:
    """Check a result frame before writing: columns, finite scores, known topics.

    Returns the frame with repeated documents dropped, ranks recomputed from scores,
    and at most ``max_results`` rows per topic.
    """
    missing = {"qid", "docno", "score"} - set(run.columns)
    if missing:
        raise InputError(f"results lack columns {sorted(missing)}")
    if run.empty:
        raise InputError("no results to write (empty run)")
    run = run.copy()
    run["qid"] = run["qid"].astype(str)
    run["docno"] = run["docno"].astype(str)
    check_scores_and_topics(run, topics, "document")
    return rank_by_score(run, RUN_COLUMNS, max_results)


def rank_by_score(run: pd.DataFrame, columns: list[str], max_results: int) -> pd.DataFrame:
    """Keep ``columns``, drop repeated documents, rank 1.. by score, cut at ``max_results``."""
    if "rank" not in run.columns:
        run["rank"] = 0
    if "name" not in run.columns:
        run["name"] = "run"
    run = _clean(run[columns], max_results, source="results")
    run["rank"] = run.groupby("qid", sort=False).cumcount() + 1
    return run


def run_tag(name: str | None, path: str | Path) -> str:
    """The run name written in a run file: ``name``, or the file stem; one word.

    >>> run_tag(None, "runs/bm25.tsv")
    'bm25'
    """
    tag = name or Path(path).stem
    if not tag or any(c.isspace() for c in tag):
        raise InputError(f"run name must be one word without spaces: {tag!r}")
    return tag


def arqmath_format_only(format: str, task: str) -> None:
    """Refuse any run format but ``arqmath`` for a task that has only that one.

    >>> arqmath_format_only("trec", "Task 2")
    Traceback (most recent call last):
    mathir.errors.InputError: Task 2 runs have one format ('arqmath'), not 'trec'
    """
    if format != "arqmath":
        raise InputError(f"{task} runs have one format ('arqmath'), not {format!r}")


def write_lines(path: str | Path, lines: Iterable[str]) -> Path:
    """Write a run's lines atomically through :func:`run_file` (``.gz``: compressed).

    >>> import tempfile, pathlib
    >>> p = write_lines(pathlib.Path(tempfile.mkdtemp()) / "r.tsv", ["A.1\\t7\\t1\\t1.0\\tr\\n"])
    >>> p.read_text()
    'A.1\\t7\\t1\\t1.0\\tr\\n'
    """
    path = Path(path)
    with run_file(path) as f:
        f.writelines(lines)
    return path


def write_run(run: pd.DataFrame, path: str | Path, name: str | None = None,
              format: str = "arqmath", topics: Iterable[str] | None = None) -> Path:
    """Write results atomically as an ARQMath-2/3 (``arqmath``) or TREC (``trec``) run.

    Ranks start at 1 and follow the scores; ``name`` is the run tag (default: file stem).
    A path ending in ``.gz`` is written gzip-compressed (every reader of mathir reads it).
    A frame of formula results (a ``post_id`` column beside ``visual_id`` or
    ``formula_id``, as Task 2 pipelines return) is refused: the Task 1 format would drop
    its post ids (:func:`mathir.write_run` writes it as a Task 2 run).

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "bm25.tsv"
    >>> res = pd.DataFrame({"qid": ["A.1", "A.1"], "docno": ["7", "9"], "score": [1.0, 3.0]})
    >>> _ = write_run(res, p)
    >>> p.read_text().splitlines()[0]
    'A.1\\t9\\t1\\t3.0\\tbm25'
    """
    if format not in FORMATS:
        raise InputError(f"unknown run format {format!r}; expected one of {list(FORMATS)}")
    if is_formula_results(run):
        raise InputError("these are formula results (Task 2: post_id beside visual_id or "
                         "formula_id): write them with write_task2_run, or mathir.write_run")
    tag = run_tag(name, path)
    run = validate_run(run, topics)
    return write_lines(path, (
        f"{qid}\tQ0\t{docno}\t{rank}\t{float(score)!r}\t{tag}\n" if format == "trec"
        else f"{qid}\t{docno}\t{rank}\t{float(score)!r}\t{tag}\n"
        for qid, docno, rank, score in zip(run.qid, run.docno, run["rank"], run.score,
                                           strict=True)))


def is_formula_results(run: pd.DataFrame) -> bool:
    """Whether a result frame holds formula instances (Task 2), not answers.

    >>> is_formula_results(pd.DataFrame(columns=["qid", "docno", "post_id", "visual_id"]))
    True
    """
    return "post_id" in run.columns and bool({"visual_id", "formula_id"} & set(run.columns))


@contextlib.contextmanager
def run_file(path: str | Path) -> Iterator[IO[str]]:
    """A run file opened for writing text, atomically; gzip-compressed when ``path``
    ends in ``.gz`` (a plain file under a ``.gz`` name used to be written).

    >>> import gzip, tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "r.trec.gz"
    >>> with run_file(p) as f:
    ...     _ = f.write("A.1 Q0 7 1 1.0 r\\n")
    >>> gzip.decompress(p.read_bytes())
    b'A.1 Q0 7 1 1.0 r\\n'
    """
    path = Path(path)
    if path.suffix != ".gz":
        with atomic_file(path) as f:
            yield f
        return
    with atomic_file(path, "wb") as raw, \
            gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as z, \
            io.TextIOWrapper(z, encoding="utf-8", newline="") as f:
        yield f
