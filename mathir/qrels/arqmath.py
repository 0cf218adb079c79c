"""ARQMath qrels: ``topic_id 0 doc_id relevance``, whitespace separated.

* Task 1: doc_id is an answer post id; relevance 0-3.
* Task 2: doc_id is a formula id or a visual id (never both in one file).
* Task 3: doc_id is a synthetic answer id (``d_N``); relevance 0-3, plus 5 (system
  failure) and 6 (do not know). Prime measures treat 5 and 6 as unjudged.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from mathir.errors import InputError
from mathir.tabular import iter_fields

QRELS_COLUMNS = ["qid", "docno", "label", "iteration"]
NOT_JUDGED_CODES = (5, 6)  # Task 3: system failure, do not know


def read_qrels(path: str | Path, key: str | None = None, allowed_labels: tuple[int, ...] = (0, 1, 2, 3, 5, 6)) -> pd.DataFrame:
    """Read a TREC-style qrels file into ``qid, docno, label, iteration``.

    ``key`` names what the doc ids are (e.g. ``"visual_id"``); when given, a column of
    that name repeats ``docno``. Labels may be written as floats (``2.0``). A repeated
    (qid, docno) pair keeps its first judgment.

    >>> from mathir.samples import arqmath_sample
    >>> q = read_qrels(arqmath_sample().task1_qrels)
    >>> list(q.columns), q.label.dtype.kind
    (['qid', 'docno', 'label', 'iteration'], 'i')
    """
    rows = []
    for lineno, (qid, it, docno, rel) in iter_fields(path, 4, sep=None):
        try:
            value = float(rel)
        except ValueError:
            raise InputError(f"relevance is not a number: {rel!r}", path=path, line=lineno) from None
        if not math.isfinite(value) or value != int(value) or int(value) not in allowed_labels:
            raise InputError(
                f"relevance {rel!r} is not one of {list(allowed_labels)}", path=path, line=lineno
            )
        rows.append((qid, docno, int(value), it))
    if not rows:
        raise InputError("qrels file has no judgments", path=path)
    df = pd.DataFrame(rows, columns=QRELS_COLUMNS)
    df = df.drop_duplicates(["qid", "docno"], keep="first").reset_index(drop=True)
    df["label"] = df["label"].astype("int64")
    if key:
        df[key] = df["docno"]
    df.attrs["source"] = str(path)
    return df


def judged_only(qrels: pd.DataFrame) -> pd.DataFrame:
    """Drop the Task 3 codes 5 and 6, which count as not judged for prime measures.

    >>> judged_only(pd.DataFrame({"qid": ["A.1"] * 2, "docno": ["d_1", "d_2"], "label": [2, 5]})).docno.tolist()
    ['d_1']
    """
    return qrels[~qrels["label"].isin(NOT_JUDGED_CODES)].reset_index(drop=True)
