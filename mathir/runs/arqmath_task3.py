"""ARQMath-3 Task 3 (open-domain answers): run files and the judged-answer assignment file.

A Task 3 run has **one answer per topic**, one line each, TAB separated::

    topic  rank  score  run  sources  answer

``answer`` is text with formulas as LaTeX between ``$`` (or ``$$``), at most
:data:`MAX_ANSWER_CHARS` Unicode characters (counted with ``len``, as the organisers'
evaluation does); ``sources`` says where the answer came from (e.g. post ids, a URL,
``GPT-3``). The answer is the last column and may not contain a TAB or a line break
(the writer turns them into spaces: whitespace carries no meaning for the measures).

The assignment file (``teams_document_id.tsv``) maps the answer of each judged run for
a topic to the synthetic document id used in the Task 3 qrels::

    run_name  topic  d_N

The run name is the run file's stem, as in the organisers' evaluation.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from mathir.errors import InputError
from mathir.readers.tabular import iter_fields
from mathir.runs.trec import arqmath_format_only, parse_number, run_tag, write_lines

MAX_ANSWER_CHARS = 1200
TASK3_COLUMNS = ["qid", "rank", "score", "name", "sources", "answer"]
ASSIGNMENT_COLUMNS = ["run", "qid", "docno"]
_WHITESPACE = re.compile(r"[\t\r\n\v\f]+")


def read_task3_run(path: str | Path, topics: Iterable[str] | None = None,
                   max_chars: int = MAX_ANSWER_CHARS) -> pd.DataFrame:
    """Read a Task 3 run into ``qid, rank, score, name, sources, answer`` (one row per topic).

    Errors (:class:`InputError` naming the line): not 6 columns, a non-integer rank, a
    non-finite score, an empty answer, an answer longer than ``max_chars`` Unicode
    characters, a second answer for a topic, a topic outside ``topics`` (when given), an
    empty file. Topics of ``topics`` without an answer only warn (one judged ARQMath-3
    run lacks a topic).

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "r.tsv"
    >>> _ = p.write_text("A.1\\t1\\t1.0\\tmine\\t1002\\tUse $e^{x\\\\ln x}$.\\n", encoding="utf-8")
    >>> read_task3_run(p).loc[0, "answer"]
    'Use $e^{x\\\\ln x}$.'
    """
    known = set(topics) if topics is not None else None
    rows = []
    seen: dict[str, int] = {}
    for lineno, fields in iter_fields(path, 6, 6, sep="\t"):
        qid, rank, score, name, sources, answer = (f.strip() for f in fields)
        if known is not None and qid not in known:
            raise InputError(f"topic {qid!r} is not in the topics", path=path, line=lineno)
        if qid in seen:
            raise InputError(f"a second answer for topic {qid} (first on line {seen[qid]}); "
                             "Task 3 runs have exactly one answer per topic", path=path, line=lineno)
        seen[qid] = lineno
        if not answer:
            raise InputError(f"empty answer for topic {qid}", path=path, line=lineno)
        if len(answer) > max_chars:
            raise InputError(f"answer for topic {qid} has {len(answer)} Unicode characters; "
                             f"at most {max_chars} are allowed", path=path, line=lineno)
        if not name or any(c.isspace() for c in name):
            raise InputError(f"run name must be one word without spaces: {name!r}",
                             path=path, line=lineno)
        rows.append((qid, parse_number(rank, int, "rank", path, lineno),
                     parse_number(score, float, "score", path, lineno), name, sources, answer))
    if not rows:
        raise InputError("run file is empty", path=path)
    if known is not None and len(seen) < len(known):
        missing = sorted(known - set(seen))
        warnings.warn(f"{path}: no answer for {len(missing)} topics: {missing[:5]}", stacklevel=2)
    return pd.DataFrame(rows, columns=TASK3_COLUMNS)


def validate_task3_run(run: pd.DataFrame, topics: Iterable[str] | None = None,
                       max_chars: int = MAX_ANSWER_CHARS) -> pd.DataFrame:
    """Check answers before writing; returns ``qid, rank, score, name, sources, answer``.

    Needs ``qid`` and ``answer``; ``score`` (default 1.0), ``sources`` (default ``-``)
    and ``name`` are optional. Line breaks and TABs in answers become spaces. A topic
    with two answers, an empty or too long answer, a non-finite score, or a topic
    outside ``topics`` is an :class:`InputError`.

    >>> validate_task3_run(pd.DataFrame({"qid": ["A.1"], "answer": ["a\\nb"]})).answer.tolist()
    ['a b']
    """
    missing = {"qid", "answer"} - set(run.columns)
    if missing:
        raise InputError(f"answers lack columns {sorted(missing)}")
    if run.empty:
        raise InputError("no answers to write (empty run)")
    out = pd.DataFrame({"qid": run["qid"].astype(str)})
    out["answer"] = [_WHITESPACE.sub(" ", str(a)).strip() for a in run["answer"]]
    out["score"] = (pd.to_numeric(run["score"], errors="coerce").astype(float)
                    if "score" in run.columns else 1.0)
    out["sources"] = ([_WHITESPACE.sub(" ", str(s)).strip() or "-" for s in run["sources"]]
                      if "sources" in run.columns else "-")
    out["name"] = run["name"].astype(str) if "name" in run.columns else "run"
    dup = out["qid"].duplicated()
    if dup.any():
        raise InputError(f"more than one answer for topic {out.loc[dup, 'qid'].iloc[0]}; "
                         "Task 3 runs have exactly one answer per topic")
    for qid, answer, score in zip(out.qid, out.answer, out.score, strict=True):
        if not answer:
            raise InputError(f"empty answer for topic {qid}")
        if len(answer) > max_chars:
            raise InputError(f"answer for topic {qid} has {len(answer)} Unicode characters; "
                             f"at most {max_chars} are allowed")
        if not math.isfinite(score):
            raise InputError(f"score of topic {qid} is not finite")
    if topics is not None:
        unknown = sorted(set(out["qid"]) - set(topics))
        if unknown:
            raise InputError(f"answers for topics not in the topics: {unknown[:5]}")
    out["rank"] = 1
    return out[TASK3_COLUMNS].reset_index(drop=True)


def write_task3_run(run: pd.DataFrame, path: str | Path, name: str | None = None,
                    topics: Iterable[str] | None = None, format: str = "arqmath") -> Path:
    """Write answers atomically as a Task 3 run; ``name`` is the run tag (default: file stem).

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "extractive.tsv"
    >>> _ = write_task3_run(pd.DataFrame({"qid": ["A.1"], "answer": ["Use $x^2$."],
    ...                                   "sources": ["1002"]}), p)
    >>> p.read_text(encoding="utf-8")
    'A.1\\t1\\t1.0\\textractive\\t1002\\tUse $x^2$.\\n'
    """
    arqmath_format_only(format, "Task 3")
    run = validate_task3_run(run, topics)
    tag = run_tag(name, path)
    return write_lines(path, (f"{r.qid}\t{r.rank}\t{float(r.score)!r}\t{tag}\t{r.sources}\t"
                              f"{r.answer}\n" for r in run.itertuples(index=False)))


def read_assignments(path: str | Path) -> pd.DataFrame:
    """Read the assignment file (``run topic d_N``) into ``run, qid, docno``.

    A run with two ids for one topic is an error naming the line.

    >>> from mathir.samples import arqmath_sample
    >>> a = read_assignments(arqmath_sample().task3_assignments)
    >>> list(a.columns)
    ['run', 'qid', 'docno']
    """
    rows = []
    seen: dict[tuple[str, str], int] = {}
    for lineno, (run, qid, docno) in iter_fields(path, 3, sep=None):
        if (run, qid) in seen:
            raise InputError(f"run {run} has a second answer id for topic {qid} "
                             f"(first on line {seen[run, qid]})", path=path, line=lineno)
        seen[run, qid] = lineno
        rows.append((run, qid, docno))
    if not rows:
        raise InputError("assignment file is empty", path=path)
    return pd.DataFrame(rows, columns=ASSIGNMENT_COLUMNS)
