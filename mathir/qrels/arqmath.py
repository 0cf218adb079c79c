"""ARQMath qrels: ``topic_id 0 doc_id relevance``, read by the TREC qrels reader
(:func:`mathir.qrels.trec.read_qrels`) with ARQMath's labels.

* Task 1: doc_id is an answer post id; relevance 0-3.
* Task 2: doc_id is a formula id or a visual id (never both in one file); relevance 0-3.
* Task 3: doc_id is a synthetic answer id (``d_N``); relevance 0-3, plus 5 (system
  failure) and 6 (do not know). Prime measures treat 5 and 6 as unjudged. Only Task 3
  accepts them: in a Task 1 or 2 file a 5 is an error, not a silently unjudged answer.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from mathir.qrels.trec import GRADED_LABELS, read_qrels

NOT_JUDGED_CODES = (5, 6)  # Task 3: system failure, do not know
#: Labels of Task 1 (answers) and Task 2 (formulas): N, L, M, H.
TASK1_LABELS = GRADED_LABELS
#: Labels of Task 3: the grades, 5 (system failure) and 6 (do not know).
TASK3_LABELS = (0, 1, 2, 3, 5, 6)


def read_task3_qrels(path: str | Path, key: str | None = None,
                     duplicates: str = "error") -> pd.DataFrame:
    """Read Task 3 qrels: :func:`read_qrels` with the labels 5 and 6 allowed.

    >>> from mathir.samples import arqmath_sample
    >>> sorted(set(read_task3_qrels(arqmath_sample().task3_qrels).label)) <= [0, 1, 2, 3, 5, 6]
    True
    """
    return read_qrels(path, key, TASK3_LABELS, duplicates)


def judged_only(qrels: pd.DataFrame) -> pd.DataFrame:
    """Drop the Task 3 codes 5 and 6, which count as not judged for prime measures.

    >>> judged_only(pd.DataFrame({"qid": ["A.1"] * 2, "docno": ["d_1", "d_2"], "label": [2, 5]})).docno.tolist()
    ['d_1']
    """
    return qrels[~qrels["label"].isin(NOT_JUDGED_CODES)].reset_index(drop=True)
