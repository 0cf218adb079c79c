"""TREC qrels files: ``topic_id iteration doc_id relevance``, read as NIST's trec_eval reads
them (the generic reader of every task's TREC-style judgments; ARQMath's labels and Task 3's
codes are :mod:`mathir.qrels.arqmath`'s).

The rules are trec_eval's (its ``get_qrels.c`` and ``form_res_rels.c``): 4 fields split
on ASCII whitespace, ``#`` lines are comments, and a (topic, document) pair judged twice
is refused, naming both lines (``duplicates="last"`` keeps the last judgment instead, as
ir_measures does). A label is read as trec_eval reads it, with C's ``atol``: ``2.0``
is 2 (the official 2020 visual-id qrels write labels so); a field that is not wholly an
integer in ASCII digits counts as its integer prefix, as there (``0_3`` and an
Arabic-Indic 3 as 0, ``2.5`` as 2, where Python's ``int``/``float`` would read 3, 3 and
2.5), with a warning naming the line; a label beyond 64 bits is read as C's ``atol``
saturates (``LONG_MAX``), which no task allows: refused, naming the line (trec_eval
cannot score such qrels either). Blank lines, which trec_eval refuses, are skipped
with a warning.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from mathir.errors import InputError
from mathir.readers.tabular import ReadNotes, iter_trec_fields, quote_field, read_whole

QRELS_COLUMNS = ["qid", "docno", "label", "iteration"]
#: Graded labels 0-3 (ARQMath Tasks 1 and 2: N, L, M, H), the default labels.
GRADED_LABELS = (0, 1, 2, 3)
DUPLICATES = ("error", "last")


def read_qrels(path: str | Path, key: str | None = None,
               allowed_labels: tuple[int, ...] = GRADED_LABELS,
               duplicates: str = "error") -> pd.DataFrame:
    """Read a TREC-style qrels file into ``qid, docno, label, iteration``.

    ``key`` names what the doc ids are (e.g. ``"visual_id"``); when given, a column of
    that name repeats ``docno``. ``allowed_labels`` are the task's labels (ARQMath Tasks 1 and
    2: 0-3; :func:`mathir.qrels.arqmath.read_task3_qrels` adds 5 and 6). A (topic, document) pair judged
    twice is an error naming both lines, unless ``duplicates="last"``.

    >>> from mathir.samples import arqmath_sample
    >>> q = read_qrels(arqmath_sample().task1_qrels)
    >>> list(q.columns), q.label.dtype.kind
    (['qid', 'docno', 'label', 'iteration'], 'i')
    """
    if duplicates not in DUPLICATES:
        raise InputError(f"duplicates must be one of {list(DUPLICATES)}, not {duplicates!r}")
    rows: dict[tuple[str, str], tuple[int, str, int]] = {}  # pair -> (label, iteration, line)
    notes = ReadNotes(path)
    for lineno, (qid, it, docno, rel) in iter_trec_fields(path, 4, 4, blank_lines="warn"):
        label = read_whole(rel, "relevance", lineno, notes, float_form=True)
        if label not in allowed_labels:
            raise InputError(f"relevance {quote_field(rel)} is not one of "
                             f"{list(allowed_labels)} (this task's labels)", path=path,
                             line=lineno)
        earlier = rows.get((qid, docno))
        if earlier is not None:
            if duplicates == "error":
                raise InputError(
                    f"topic {qid} document {docno} is judged twice, here ({label}) and on line "
                    f"{earlier[2]} ({earlier[0]}); trec_eval refuses duplicate judgments "
                    "(duplicates='last', --qrels-duplicates last, keeps the last one, as "
                    "ir_measures does)", path=path, line=lineno)
            del rows[(qid, docno)]  # the last one wins, in its own place
        rows[(qid, docno)] = (label, it, lineno)
    if not rows:
        raise InputError("qrels file has no judgments", path=path)
    notes.warn()
    df = pd.DataFrame([(qid, docno, label, it) for (qid, docno), (label, it, _) in rows.items()],
                      columns=QRELS_COLUMNS)
    df["label"] = df["label"].astype("int64")
    if key:
        df[key] = df["docno"]
    df.attrs["source"] = str(path)
    return df
