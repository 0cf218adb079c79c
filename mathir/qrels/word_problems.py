"""Word-problem gold: the annotated problems (equations, solutions, derivation) of a
split file's ids, as a frame ``qid, problem`` (one :class:`WordProblem` per id).

>>> from mathir.samples import word_problems_sample
>>> gold = read_gold(word_problems_sample().split("test"))
>>> gold.columns.tolist(), type(gold["problem"][0]).__name__
(['qid', 'problem'], 'WordProblem')
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from mathir.errors import InputError
from mathir.readers.tabular import iter_lines
from mathir.readers.word_problems import iter_derivation_problems
from mathir.topics.word_problems import problems_file


def read_gold(split_file: str | Path) -> pd.DataFrame:
    """The gold problems (``qid``, ``problem``) of a split file's ids (repeats once).

    An id that is not in the problems file is an InputError naming its line: it could
    not be judged, and counting it as unanswered would lower every score silently.
    """
    problems = {p.id: p for p in iter_derivation_problems(problems_file(split_file))}
    ids: list[str] = []
    for line, text in iter_lines(split_file):
        pid = text.strip()
        if pid not in problems:
            raise InputError(f"problem {pid} is not in {problems_file(split_file).name}",
                             path=split_file, line=line)
        ids.append(pid)
    ids = list(dict.fromkeys(ids))
    return pd.DataFrame({"qid": ids, "problem": [problems[i] for i in ids]})
