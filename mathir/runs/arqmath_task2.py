"""ARQMath Task 2 (formula search) run files: ``topic formula_id post_id rank score run``.

Six columns, split on ASCII whitespace (CRLF tolerated, ``#`` comment lines skipped),
as in every ARQMath year. In a
frame, ``docno`` is the formula id (PyTerrier's document column) and ``formula_id``
repeats it; ``post_id`` keeps the post that holds the formula instance.

Reading follows the Task 1 rules (:mod:`mathir.runs.trec`): numbers are read as
trec_eval reads them (a score that is not finite raises :class:`InputError` naming the
line; a rank beyond 64 bits saturates, as C's ``atol``, with a warning); ``Q0`` (any
case) in the formula id column is refused (a TREC line); a repeated (topic, formula)
pair keeps its first row with a warning naming the line, every row is kept
(``max_results`` cuts each topic to its best rows), and the rows come back ordered by
score (descending), then rank: the "top-down" order in which
:mod:`mathir.evaluation.formula_search` deduplicates visual ids.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

import pandas as pd

from mathir.errors import InputError
from mathir.readers.tabular import ReadNotes, iter_trec_fields, read_score, read_whole
from mathir.runs.trec import (
    MAX_RESULTS,
    arqmath_format_only,
    best_rows,
    check_scores_and_topics,
    rank_by_score,
    run_tag,
    write_lines,
)

TASK2_RUN_COLUMNS = ["qid", "docno", "formula_id", "post_id", "rank", "score", "name"]


def read_task2_run(path: str | Path, topics: Iterable[str] | None = None,
                   max_results: int | None = None) -> pd.DataFrame:
    """Read a Task 2 run into ``qid, docno, formula_id, post_id, rank, score, name``.

    ``topics`` (ids), when given, makes a topic outside them an error.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "r.tsv"
    >>> _ = p.write_text("B.1\\t20009\\t1003\\t2\\t0.5\\tx\\nB.1\\t20011\\t1004\\t1\\t0.9\\tx\\n")
    >>> read_task2_run(p)[["docno", "post_id"]].values.tolist()
    [['20011', '1004'], ['20009', '1003']]
    """
    known = set(topics) if topics is not None else None
    notes = ReadNotes(path)

    def rows() -> Iterator[tuple[int, tuple]]:
        for lineno, fields in iter_trec_fields(path, 6, 6):
            qid, formula_id, post_id, rank, score, name = fields
            if formula_id.upper() == "Q0":  # a TREC line: 'topic Q0 docno rank score tag'
                raise InputError("Task 2 runs are 'topic formula_id post_id rank score run' "
                                 f"(found {formula_id} in the formula id column)", path=path,
                                 line=lineno)
            if known is not None and qid not in known:
                raise InputError(f"topic {qid!r} is not in the topics", path=path, line=lineno)
            yield lineno, (qid, formula_id, formula_id, post_id,
                           read_whole(rank, "rank", lineno, notes),
                           read_score(score, "score", path, lineno, notes), name)

    run = best_rows(rows, TASK2_RUN_COLUMNS, max_results, path)
    notes.warn()
    return run


def validate_task2_run(run: pd.DataFrame, topics: Iterable[str] | None = None,
                       max_results: int = MAX_RESULTS) -> pd.DataFrame:
    """Check a formula result frame before writing; ranks (from 1) follow the scores.

    The frame needs ``qid``, ``docno`` (or ``formula_id``), ``post_id`` and ``score``.
    """
    run = run.copy()
    if "docno" not in run.columns and "formula_id" in run.columns:
        run["docno"] = run["formula_id"]
    missing = {"qid", "docno", "post_id", "score"} - set(run.columns)
    if missing:
        raise InputError(f"formula results lack columns {sorted(missing)}")
    if run.empty:
        raise InputError("no results to write (empty run)")
    for c in ("qid", "docno", "post_id"):
        run[c] = run[c].astype(str)
    run["formula_id"] = run["docno"]
    check_scores_and_topics(run, topics, "formula")
    return rank_by_score(run, TASK2_RUN_COLUMNS, max_results)


def write_task2_run(run: pd.DataFrame, path: str | Path, name: str | None = None,
                    format: str = "arqmath", topics: Iterable[str] | None = None) -> Path:
    """Write formula results atomically as a Task 2 run (``format`` must be "arqmath").

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "tuples.tsv"
    >>> res = pd.DataFrame({"qid": ["B.1"] * 2, "docno": ["7", "9"], "post_id": ["1", "2"],
    ...                     "score": [1.0, 3.0]})
    >>> _ = write_task2_run(res, p)
    >>> p.read_text().splitlines()[0]
    'B.1\\t9\\t2\\t1\\t3.0\\ttuples'
    """
    arqmath_format_only(format, "Task 2")
    tag = run_tag(name, path)
    run = validate_task2_run(run, topics)
    return write_lines(path, (
        f"{qid}\t{fid}\t{post}\t{rank}\t{float(score)!r}\t{tag}\n"
        for qid, fid, post, rank, score in zip(run.qid, run.docno, run.post_id, run["rank"],
                                               run.score, strict=True)))
