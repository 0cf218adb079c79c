"""ARQMath Task 1 run files.

* ARQMath-2/3 (default when writing): ``topic post_id rank score run`` (5 columns, TAB).
* ARQMath-1 / TREC: ``topic Q0 post_id rank score run`` (6 columns).

Both are read (whitespace separated, CRLF tolerated). Documented behaviour on reading:

* a non-numeric or NaN/infinite score, or a non-integer rank: :class:`InputError`
  naming the line;
* a repeated (topic, post) pair: the first occurrence is kept, later ones dropped;
* more than :data:`MAX_RESULTS` rows for a topic: the best 1000 (by score, then rank)
  are kept, as the official evaluation cuts at 1000;
* ties in score are allowed; evaluation orders them as trec_eval does;
* a topic absent from the given topics, or an empty file: :class:`InputError`.

Reading streams the file: memory holds the best 1000 rows of each topic and an 8-byte
fingerprint per row (to find repeated pairs), not the file (see :func:`best_rows`).
"""

from __future__ import annotations

import heapq
import math
import warnings
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from mathir.errors import InputError
from mathir.storage import atomic_file
from mathir.tabular import iter_fields

MAX_RESULTS = 1000
RUN_COLUMNS = ["qid", "docno", "rank", "score", "name"]
FORMATS = ("arqmath", "trec")


def parse_number(text: str, kind: type, what: str, path, lineno: int):
    """``kind(text)`` (int or finite float), or InputError naming the file and line."""
    try:
        value = kind(text)
    except ValueError:
        raise InputError(f"{what} is not {'an integer' if kind is int else 'a number'}: {text!r}",
                         path=path, line=lineno) from None
    if kind is float and not math.isfinite(value):
        raise InputError(f"{what} is not finite: {text!r}", path=path, line=lineno)
    return value


def read_run(path: str | Path, topics: Iterable[str] | None = None,
             max_results: int = MAX_RESULTS) -> pd.DataFrame:
    """Read a Task 1 run (5- or 6-column format) into ``qid, docno, rank, score, name``.

    ``topics`` (ids), when given, makes a topic outside them an error.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "r.tsv"
    >>> _ = p.write_text("A.1\\t10\\t1\\t2.5\\tbm25\\nA.1\\t11\\t2\\t1.5\\tbm25\\n")
    >>> read_run(p).docno.tolist()
    ['10', '11']
    """
    known = set(topics) if topics is not None else None

    def rows() -> Iterator[tuple]:
        for lineno, fields in iter_fields(path, 5, 6, sep=None):
            if len(fields) == 6:
                if fields[1] != "Q0":
                    raise InputError(
                        "6 columns must be 'topic Q0 post_id rank score run' (second column Q0)",
                        path=path, line=lineno,
                    )
                qid, _, docno, rank, score, name = fields
            else:
                qid, docno, rank, score, name = fields
            if known is not None and qid not in known:
                raise InputError(f"topic {qid!r} is not in the topics", path=path, line=lineno)
            yield (qid, docno, parse_number(rank, int, "rank", path, lineno),
                   parse_number(score, float, "score", path, lineno), name.strip())

    return best_rows(rows, RUN_COLUMNS, max_results, path)


def best_rows(rows: Callable[[], Iterator[tuple]], columns: Sequence[str], max_results: int,
              path: str | Path) -> pd.DataFrame:
    """The rows of a run file as :func:`read_run` keeps them, in bounded memory.

    ``rows()`` yields the file's rows (tuples in ``columns`` order, which name ``qid``,
    ``docno``, ``rank`` and ``score``), checked, in file order; it is called a second
    time only when a (topic, document) pair occurs twice. Semantics: a repeated pair
    keeps its first row (counted in a warning), then each topic keeps its best
    ``max_results`` rows by score (descending), rank, then file order (a warning says
    when rows were cut); topics come in sorted order, best row first.

    Memory: a heap of ``max_results`` rows per topic and an 8-byte fingerprint (hash of
    the pair) per row; when fingerprints repeat, the second pass also holds the pairs
    whose fingerprint repeats, to tell repeats from hash collisions exactly.

    >>> rows = lambda: iter([("A.1", "7", 2, 1.0, "r"), ("A.1", "8", 1, 3.0, "r")])
    >>> best_rows(rows, RUN_COLUMNS, 1000, "r.tsv").docno.tolist()
    ['8', '7']
    """
    if max_results < 1:
        raise InputError(f"max_results must be at least 1, not {max_results}")
    q, d, r, s = (columns.index(c) for c in ("qid", "docno", "rank", "score"))
    heaps: dict[str, list] = {}
    per_topic: dict[str, int] = {}  # rows kept before the cut
    fingerprints = array("q")  # hash((qid, docno)) of every row, 8 bytes each

    def keep(row: tuple, seq: int) -> None:
        # min-heap of the topic's best rows; the worst (lowest score, highest rank,
        # latest line) on top. seq is unique, so comparisons never reach the row.
        per_topic[row[q]] = per_topic.get(row[q], 0) + 1
        heap = heaps.setdefault(row[q], [])
        entry = (row[s], -row[r], -seq, row)
        if len(heap) < max_results:
            heapq.heappush(heap, entry)
        elif entry > heap[0]:
            heapq.heapreplace(heap, entry)

    for seq, row in enumerate(rows()):
        fingerprints.append(hash((row[q], row[d])))
        keep(row, seq)
    n = len(fingerprints)
    if not n:
        raise InputError("run file is empty", path=path)
    repeated = _repeated(fingerprints)
    del fingerprints
    if repeated:
        # A fingerprint occurs twice: read again, keeping the first row of each pair
        # whose fingerprint repeats (compared exactly, so a hash collision drops
        # nothing). The heaps are rebuilt: they may hold a later repeat of a pair
        # whose first row had been cut.
        heaps.clear()
        per_topic.clear()
        first: dict[tuple[str, str], int] = {}
        dropped = 0
        seq = -1
        for seq, row in enumerate(rows()):
            pair = (row[q], row[d])
            if hash(pair) in repeated and first.setdefault(pair, seq) != seq:
                dropped += 1
            else:
                keep(row, seq)
        if seq + 1 != n:
            raise InputError("the run file changed while it was read", path=path)
        if dropped:
            warnings.warn(f"{path}: dropped {dropped} repeated (topic, document) rows",
                          stacklevel=3)
    if max(per_topic.values()) > max_results:
        warnings.warn(f"{path}: kept the best {max_results} rows of topics with more",
                      stacklevel=3)
    out = [e[3] for qid in sorted(heaps) for e in sorted(heaps[qid], reverse=True)]
    return pd.DataFrame(out, columns=list(columns))


def _repeated(fingerprints: array) -> set[int]:
    """The values that occur more than once in ``fingerprints`` (sorted in place)."""
    values = np.frombuffer(fingerprints, dtype=np.int64)
    values.sort()
    return set(values[1:][values[1:] == values[:-1]].tolist())


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


def write_run(run: pd.DataFrame, path: str | Path, name: str | None = None,
              format: str = "arqmath", topics: Iterable[str] | None = None) -> Path:
    """Write results atomically as an ARQMath-2/3 (``arqmath``) or TREC (``trec``) run.

    Ranks start at 1 and follow the scores; ``name`` is the run tag (default: file stem).

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "bm25.tsv"
    >>> res = pd.DataFrame({"qid": ["A.1", "A.1"], "docno": ["7", "9"], "score": [1.0, 3.0]})
    >>> _ = write_run(res, p)
    >>> p.read_text().splitlines()[0]
    'A.1\\t9\\t1\\t3.0\\tbm25'
    """
    if format not in FORMATS:
        raise InputError(f"unknown run format {format!r}; expected one of {list(FORMATS)}")
    path = Path(path)
    tag = run_tag(name, path)
    run = validate_run(run, topics)
    with atomic_file(path) as f:
        for qid, docno, rank, score in zip(run.qid, run.docno, run["rank"], run.score, strict=True):
            if format == "trec":
                f.write(f"{qid}\tQ0\t{docno}\t{rank}\t{float(score)!r}\t{tag}\n")
            else:
                f.write(f"{qid}\t{docno}\t{rank}\t{float(score)!r}\t{tag}\n")
    return path
