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
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from mathir.errors import InputError
from mathir.runs.arqmath import run_tag
from mathir.storage import atomic_file
from mathir.tabular import iter_fields

FORMATS = ("predict", "trec")
RUN_COLUMNS = ["qid", "docno", "rank", "score", "name"]


def read_run(path: str | Path, topics: Iterable[str] | None = None) -> pd.DataFrame:
    """Read a prediction file (2 columns) or TREC run (6) into ``qid, docno, rank, score, name``.

    ``rank`` starts at 1 per question.

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
    fast = _read_predictions_fast(path, known)
    if fast is not None:
        return _finish(fast, path, width=2)
    qids, docnos, ranks, scores, names = [], [], [], [], []
    width = None
    for lineno, fields in iter_fields(path, 2, 6, sep=None):
        if width is None:
            width = len(fields)
            if width not in (2, 6):
                raise InputError("expected 2 columns (questionID, explanationID) or 6 (TREC)",
                                 path=path, line=lineno)
        if len(fields) != width:
            raise InputError(f"expected {width} columns, found {len(fields)}", path=path,
                             line=lineno)
        if width == 2:
            qid, docno = fields
            score, name = math.nan, Path(path).stem
        else:
            qid, q0, docno, rank, score_text, name = fields
            if q0 != "Q0":
                raise InputError("6 columns must be 'qid Q0 docno rank score run'", path=path,
                                 line=lineno)
            try:
                score = float(score_text)
                int(rank)
            except ValueError:
                raise InputError(f"rank or score is not a number: {rank!r} {score_text!r}",
                                 path=path, line=lineno) from None
            if not math.isfinite(score):
                raise InputError(f"score is not finite: {score_text!r}", path=path, line=lineno)
            ranks.append(int(rank))
        if known is not None and qid not in known:
            raise InputError(f"question {qid!r} is not in the topics", path=path, line=lineno)
        qids.append(qid)
        docnos.append(docno)
        scores.append(score)
        names.append(name)
    if not qids:
        raise InputError("run file is empty", path=path)
    run = pd.DataFrame({"qid": qids, "docno": docnos, "score": scores, "name": names})
    if width == 6:
        run["file_rank"] = ranks
    return _finish(run, path, width)


def _read_predictions_fast(path: str | Path, known: set[str] | None) -> pd.DataFrame | None:
    """A well-formed 2-column file read by pandas' C parser (full runs have ~10^6 lines).

    Anything unusual (another width, empty or space-containing fields, CR, bad UTF-8,
    unknown questions) returns None, and the line-by-line reader names the bad line.
    """
    try:
        df = pd.read_csv(path, sep="\t", header=None, dtype=str, quoting=csv.QUOTE_NONE,
                         na_filter=False, engine="c", encoding="utf-8")
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, OSError):
        return None
    if df.shape[1] != 2 or df.empty:
        return None
    for c in (0, 1):
        if (df[c] == "").any() or df[c].str.contains(r"\s|\x00", regex=True).any():
            return None
    if known is not None and not set(df[0].unique()) <= known:
        return None
    return pd.DataFrame({"qid": df[0], "docno": df[1], "score": np.nan, "name": Path(path).stem})


def _finish(run: pd.DataFrame, path: str | Path, width: int) -> pd.DataFrame:
    """Order, drop repeated (question, fact) lines, number the ranks."""
    if width == 6:
        run = run.sort_values(["qid", "score", "file_rank"], ascending=[True, False, True],
                              kind="stable").drop(columns="file_rank")
    n = len(run)
    key = run["qid"].str.lower() + "\t" + run["docno"].str.lower()
    run = run[~key.duplicated()]
    if len(run) < n:
        warnings.warn(f"{path}: dropped {n - len(run)} repeated (question, fact) lines, first "
                      "kept", stacklevel=2)
    run = run.reset_index(drop=True)
    run["rank"] = run.groupby("qid", sort=False).cumcount() + 1
    if width == 2:
        run["score"] = -run["rank"].astype(float)
    return run[RUN_COLUMNS]


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
        unknown = sorted(set(run["qid"].astype(str)) - set(topics))
        if unknown:
            raise InputError(f"results for questions not in the topics: {unknown[:5]}")
    ordered = pd.DataFrame({"qid": run["qid"].astype(str).to_numpy(),
                            "docno": run["docno"].astype(str).to_numpy(), "score": scores,
                            "rank": run["rank"].to_numpy() if "rank" in run else 0})
    ordered = ordered.sort_values(["qid", "score", "rank"], ascending=[True, False, True],
                                  kind="stable")
    ordered = ordered[~ordered.duplicated(["qid", "docno"])]
    ordered["rank"] = ordered.groupby("qid", sort=False).cumcount() + 1
    with atomic_file(path) as f:
        if format == "predict":
            f.writelines(f"{q}\t{d}\n" for q, d in zip(ordered["qid"], ordered["docno"],
                                                       strict=True))
        else:
            f.writelines(f"{q}\tQ0\t{d}\t{r}\t{s!r}\t{tag}\n" for q, d, r, s in
                         zip(ordered["qid"], ordered["docno"], ordered["rank"],
                             ordered["score"].astype(float), strict=True))
    return Path(path)
