"""Word-problem split files to topic frames (``qid``, ``query`` = the problem text).

A split or fold file lists problem ids, one a line; the problems themselves are in the
JSON release beside it (:func:`problems_file`).

>>> from mathir.samples import word_problems_sample
>>> read_problem_topics(word_problems_sample().split("test")).columns.tolist()
['qid', 'query']
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from mathir.errors import InputError
from mathir.readers.word_problems import iter_derivation_problems, read_split


def problems_file(split_file: str | Path) -> Path:
    """The problems JSON that a split or fold file belongs to (same folder).

    ``draw-*.txt`` -> ``draw.json``, ``kushman-fold-K.txt`` -> ``kushman.json``,
    ``dolphin-t2-fold-new-K.txt`` -> ``dolphin_t2_final.json``.

    >>> problems_file("data/kushman-fold-3.txt").name
    'kushman.json'
    """
    p = Path(split_file)
    name = p.name.lower()
    target = ("kushman.json" if name.startswith("kushman") else
              "dolphin_t2_final.json" if name.startswith("dolphin") else "draw.json")
    return p.parent / target


def read_problem_topics(split_file: str | Path) -> pd.DataFrame:
    """Topics (``qid``, ``query`` = problem text) of a split file's problems.

    An id that is not in the problems file is an InputError naming its line.
    """
    problems = {p.id: p for p in iter_derivation_problems(problems_file(split_file))}
    rows = []
    for line, pid in enumerate(read_split(split_file), 1):
        if pid not in problems:
            raise InputError(f"problem {pid} is not in {problems_file(split_file).name}",
                             path=split_file, line=line)
        rows.append({"qid": pid, "query": problems[pid].text})
    return pd.DataFrame(rows, columns=["qid", "query"]).drop_duplicates("qid", ignore_index=True)
