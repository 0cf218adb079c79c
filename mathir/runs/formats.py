"""Writing a result frame in the run format of the task it answers.

:func:`write_run` (``mathir.write_run``) tells ARQMath answer results (Task 1) from
formula results (Task 2, whose frames carry ``post_id`` beside ``visual_id`` or
``formula_id``) and writes each in its task's format; a Task 2 frame used to be
written in the Task 1 format, its post ids lost, and ``mathir evaluate arqmath-task2``
then refused the file.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from mathir.errors import InputError
from mathir.runs.arqmath_task2 import write_task2_run
from mathir.runs.trec import is_formula_results
from mathir.runs.trec import write_run as write_task1_run


def write_run(run: pd.DataFrame, path: str | Path, name: str | None = None,
              format: str = "arqmath", topics: Iterable[str] | None = None) -> Path:
    """Write results atomically in their task's run format (``.gz``: compressed).

    Answers: ARQMath-2/3 (``arqmath``) or TREC (``trec``), as
    :func:`mathir.runs.trec.write_run`; formula results: the Task 2 format
    (:func:`mathir.runs.arqmath_task2.write_task2_run`, ``arqmath`` only).

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "tuples.tsv"
    >>> res = pd.DataFrame({"qid": ["B.1"], "docno": ["70"], "post_id": ["7"],
    ...                     "visual_id": ["1"], "score": [2.0]})
    >>> p = write_run(res, p)
    >>> p.read_text()
    'B.1\\t70\\t7\\t1\\t2.0\\ttuples\\n'
    """
    if not is_formula_results(run):
        return write_task1_run(run, path, name=name, format=format, topics=topics)
    if format != "arqmath":
        raise InputError(f"these are formula results (Task 2), whose runs have one format "
                         f"('arqmath'), not {format!r}")
    return write_task2_run(run, path, name=name, topics=topics)
