"""WorldTree prediction files: ``questionID<TAB>explanationID`` in rank order, or TREC.

* ``predict`` (default when writing; the TextGraphs submission format ``predict.txt``):
  two TAB-separated columns, no header, best fact first. There is no score: the order
  of the lines is the ranking.
* ``trec``: ``qid Q0 docno rank score run``.

Both are read (the format is recognised by the number of columns). Unlike ARQMath runs
there is no cut-off: the official scorer gives AP 0 to a question whose ranking misses
a gold fact, so a system should rank every fact. On reading, a repeated (question,
fact) keeps its first line, as the scorer does (ids compared lower-cased); a TREC file
is ordered by score (ties by rank); an empty file or a question outside ``topics`` is an
:class:`InputError` naming the line. The frame gets a ``score`` that decreases with the
rank, so that it sorts like the file.
"""

from __future__ import annotations

import csv
import math
import warnings
from array import array
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from mathir.errors import InputError
from mathir.readers.tabular import iter_fields, parse_integer, quote_field
from mathir.runs.trec import run_tag
from mathir.storage import atomic_file

FORMATS = ("predict", "trec")
RUN_COLUMNS = ["qid", "docno", "rank", "score", "name"]


def read_run(path: str | Path, topics: Iterable[str] | None = None) -> pd.DataFrame:
    """Read a prediction file (2 columns) or TREC run (6) into ``qid, docno, rank, score, name``.

    ``rank`` starts at 1 per question. Ids are held once each (the frame's ``qid``,
    ``docno`` and ``name`` cells share one string per distinct id): a full prediction
    file repeats every fact id for every question, so memory stays near 40 bytes a row.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "predict.txt"
    >>> _ = p.write_text("Q1\\tb\\nQ1\\ta\\nQ1\\tB\\n")
    >>> import warnings
    >>> with warnings.catch_warnings(record=True):
    ...     run = read_run(p)
    >>> run[["docno", "rank"]].values.tolist()
    [['b', 1], ['a', 2]]
    """
    known = set(topics) if topics is not None else None
    coded = _read_predictions_fast(path, known)
    if coded is None:
        coded = _read_lines(path, known)
    return _finish(coded, path)


class _Ids:
    """Distinct strings and their codes, in order of first appearance."""

    def __init__(self) -> None:
        self.code: dict[str, int] = {}

    def encode(self, values: Iterable[str]) -> np.ndarray:
        code = self.code
        return np.fromiter((code.setdefault(v, len(code)) for v in values), dtype=np.int32)

    def strings(self) -> np.ndarray:
        out = np.empty(len(self.code), dtype=object)
        out[:] = list(self.code)
        return out

    def lower_codes(self) -> np.ndarray:
        """For each code, a code of its lower-cased string (ids compare lower-cased)."""
        if not any(s != s.lower() for s in self.code):  # the usual case: no copies made
            return np.arange(len(self.code), dtype=np.int32)
        return _Ids().encode(s.lower() for s in self.code)


@dataclass
class _Coded:
    """A run as integer codes into its distinct ids (``score``/``rank`` for TREC only)."""

    width: int
    qids: _Ids = field(default_factory=_Ids)
    docnos: _Ids = field(default_factory=_Ids)
    names: _Ids = field(default_factory=_Ids)
    q: list[np.ndarray] = field(default_factory=list)
    d: list[np.ndarray] = field(default_factory=list)
    n: list[np.ndarray] = field(default_factory=list)
    score: array | None = None
    rank: array | None = None


def _read_lines(path: str | Path, known: set[str] | None) -> _Coded:
    """The line-by-line reader: every problem is an InputError naming its line."""
    coded: _Coded | None = None
    q, d, n = array("i"), array("i"), array("i")  # each row's id codes, 4 bytes each

    stem = Path(path).stem
    for lineno, fields in iter_fields(path, 2, 6, sep=None):
        if coded is None:
            if len(fields) not in (2, 6):
                raise InputError("expected 2 columns (questionID, explanationID) or 6 (TREC)",
                                 path=path, line=lineno)
            coded = _Coded(len(fields))
            if coded.width == 6:
                coded.score, coded.rank = array("d"), array("q")
        if len(fields) != coded.width:
            raise InputError(f"expected {coded.width} columns, found {len(fields)}", path=path,
                             line=lineno)
        if coded.width == 2:
            qid, docno = fields
            name = stem
        else:
            qid, q0, docno, rank, score_text, name = fields
            if q0 != "Q0":
                raise InputError("6 columns must be 'qid Q0 docno rank score run'", path=path,
                                 line=lineno)
            # ASCII digits within 64 bits: int() read Arabic-Indic digits, and a rank
            # of 20 digits overflowed the rank array (an OverflowError traceback)
            rank_value = parse_integer(rank, "rank", path, lineno)
            try:
                score = float(score_text)
            except ValueError:
                raise InputError(f"score is not a number: {quote_field(score_text)}",
                                 path=path, line=lineno) from None
            if not math.isfinite(score):
                raise InputError(f"score is not finite: {quote_field(score_text)}", path=path,
                                 line=lineno)
            coded.score.append(score)
            coded.rank.append(rank_value)
        if known is not None and qid not in known:
            raise InputError(f"question {qid!r} is not in the topics", path=path, line=lineno)
        q.append(coded.qids.code.setdefault(qid, len(coded.qids.code)))
        d.append(coded.docnos.code.setdefault(docno, len(coded.docnos.code)))
        n.append(coded.names.code.setdefault(name, len(coded.names.code)))
    if coded is None:
        raise InputError("run file is empty", path=path)
    coded.q, coded.d, coded.n = ([np.frombuffer(a, dtype=np.int32)] for a in (q, d, n))
    return coded


_BLOCK = 100_000


def _read_predictions_fast(path: str | Path, known: set[str] | None) -> _Coded | None:
    """A well-formed 2-column file read by pandas' C parser (full runs have ~10^6 lines).

    Read in blocks whose ids are encoded at once. Anything unusual (another width, empty
    or space-containing fields, CR, bad UTF-8, unknown questions) returns None, and the
    line-by-line reader names the bad line.
    """
    coded = _Coded(2)
    try:
        # (a context: the file is closed when a block returns None early)
        with pd.read_csv(path, sep="\t", header=None, dtype=str, quoting=csv.QUOTE_NONE,
                         na_filter=False, engine="c", encoding="utf-8",
                         chunksize=_BLOCK) as blocks:
            for df in blocks:
                if df.shape[1] != 2:
                    return None
                for c, ids, out in ((0, coded.qids, coded.q), (1, coded.docnos, coded.d)):
                    codes, distinct = pd.factorize(df[c])
                    distinct = pd.Series(distinct, dtype=object)
                    if (distinct == "").any() or distinct.str.contains(r"\s|\x00",
                                                                        regex=True).any():
                        return None
                    if c == 0 and known is not None and not set(distinct) <= known:
                        return None
                    out.append(ids.encode(distinct)[codes])
                coded.n.append(coded.names.encode([Path(path).stem])[np.zeros(len(df), np.int32)])
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, OSError):
        return None
    if not coded.q:
        return None
    return coded


def _finish(coded: _Coded, path: str | Path) -> pd.DataFrame:
    """Order, drop repeated (question, fact) lines, number the ranks."""
    q = np.concatenate(coded.q)
    d = np.concatenate(coded.d)
    n = np.concatenate(coded.n)
    del coded.q, coded.d, coded.n
    qid_strings = coded.qids.strings()
    score = None
    if coded.width == 6:
        score = np.frombuffer(coded.score, dtype=float)
        rank = np.frombuffer(coded.rank, dtype=np.int64)
        coded.score = coded.rank = None
        qid_order = np.empty(len(qid_strings), dtype=np.int64)
        qid_order[np.argsort(qid_strings, kind="stable")] = np.arange(len(qid_strings))
        # by question id, score (descending), then the file's rank; ties keep file order
        order = np.lexsort((rank, -score, qid_order[q]))
        q, d, n, score = q[order], d[order], n[order], score[order]
        del rank, order
    # a repeated (question, fact) pair, ids compared lower-cased, keeps its first line
    pair = (coded.qids.lower_codes()[q].astype(np.int64) * len(coded.docnos.code)
            + coded.docnos.lower_codes()[d])
    first = ~pd.Series(pair).duplicated().to_numpy()
    del pair
    dropped = int(len(first) - first.sum())
    if dropped:
        warnings.warn(f"{path}: dropped {dropped} repeated (question, fact) lines, first "
                      "kept", stacklevel=3)
        q, d, n = q[first], d[first], n[first]
        score = score[first] if score is not None else None
    rank = pd.Series(q).groupby(q, sort=False).cumcount().to_numpy() + 1
    if score is None:
        score = -rank.astype(float)
    columns = {"qid": qid_strings[q], "docno": coded.docnos.strings()[d], "rank": rank,
               "score": score, "name": coded.names.strings()[n]}
    del q, d, n
    return pd.DataFrame(columns, columns=RUN_COLUMNS, copy=False)


def write_run(run: pd.DataFrame, path: str | Path, name: str | None = None,
              format: str = "predict", topics: Iterable[str] | None = None) -> Path:
    """Write results atomically, best first per question, as ``predict`` or ``trec``.

    Every row is written (no cut-off). ``format="arqmath"`` (the CLI's default for run
    files) means this task's own format, ``predict``.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "bm25.txt"
    >>> res = pd.DataFrame({"qid": ["Q1", "Q1"], "docno": ["a", "b"], "score": [1.0, 3.0]})
    >>> p.read_text().splitlines() if write_run(res, p) else None
    ['Q1\\tb', 'Q1\\ta']
    """
    if format == "arqmath":
        format = "predict"
    if format not in FORMATS:
        raise InputError(f"unknown run format {format!r}; expected one of {list(FORMATS)}")
    tag = run_tag(name, path)
    missing = {"qid", "docno", "score"} - set(run.columns)
    if missing:
        raise InputError(f"results lack columns {sorted(missing)}")
    if run.empty:
        raise InputError("no results to write (empty run)")
    scores = pd.to_numeric(run["score"], errors="coerce").to_numpy(dtype=float)
    if not np.isfinite(scores).all():
        raise InputError("a score is not finite")
    if topics is not None:
        unknown = sorted(set(run["qid"].astype(str).unique()) - set(topics))
        if unknown:
            raise InputError(f"results for questions not in the topics: {unknown[:5]}")
    ordered = pd.DataFrame({"qid": run["qid"].astype(str).to_numpy(),
                            "docno": run["docno"].astype(str).to_numpy(), "score": scores,
                            "rank": run["rank"].to_numpy() if "rank" in run else 0})
    ordered = ordered.sort_values(["qid", "score", "rank"], ascending=[True, False, True],
                                  kind="stable")
    ordered = ordered[~ordered.duplicated(["qid", "docno"])]
    ordered["rank"] = ordered.groupby("qid", sort=False).cumcount() + 1
    # Python lists, not the Series: iterating a pandas string column costs ten times more
    qids, docnos = ordered["qid"].tolist(), ordered["docno"].tolist()
    with atomic_file(path) as f:
        if format == "predict":
            f.writelines(f"{q}\t{d}\n" for q, d in zip(qids, docnos, strict=True))
        else:
            f.writelines(f"{q}\tQ0\t{d}\t{r}\t{s!r}\t{tag}\n" for q, d, r, s in
                         zip(qids, docnos, ordered["rank"].tolist(),
                             ordered["score"].astype(float).tolist(), strict=True))
    return Path(path)
