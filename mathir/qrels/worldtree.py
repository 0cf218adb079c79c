"""WorldTree gold explanations -> qrels frames with a ``role`` column.

The gold of a question is its ``explanation`` cell: space-separated ``uid|ROLE`` items,
roles CENTRAL, GROUNDING, LEXGLUE, BACKGROUND, NEG and ROLE (the files also hold the
typo ``NE``; it is kept as written). As in the task's scorer, ids are lower-cased and a
UID listed twice counts once, at its first position, with the role of its last
mention. Questions with an empty explanation have no gold and are not evaluated.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from mathir.errors import InputError
from mathir.topics.worldtree import read_questions

ROLES = ("CENTRAL", "GROUNDING", "LEXGLUE", "BACKGROUND", "NEG", "ROLE")
QRELS_COLUMNS = ["qid", "docno", "label", "role", "question", "answer"]


def parse_explanation(text: str, path: str | Path | None = None,
                      line: int | None = None) -> list[tuple[str, str]]:
    """``uid|ROLE ...`` -> ``[(uid, ROLE)]`` (uid lower-cased, role upper-cased).

    >>> parse_explanation("AB12|CENTRAL cd34|lexglue")
    [('ab12', 'CENTRAL'), ('cd34', 'LEXGLUE')]
    """
    items = []
    for item in text.split():
        uid, sep, role = item.partition("|")
        if not sep or not uid or not role:
            raise InputError(f"explanation item {item!r} is not uid|ROLE", path=path, line=line)
        items.append((uid.lower(), role.upper()))
    return items


def qrels_from_topics(topics: pd.DataFrame, source: str | Path | None = None) -> pd.DataFrame:
    """Qrels (``qid, docno, label, role, question, answer``) from a question topic frame.

    Rows keep the explanation order; ``label`` is 1 for every gold fact.
    """
    rows = []
    repeated = 0
    for qid, expl, question, answer in zip(topics["qid"], topics["explanation"],
                                           topics["question"], topics["answer"], strict=True):
        gold: dict[str, str] = {}
        for uid, role in parse_explanation(expl, path=source):
            if uid in gold:
                repeated += 1
            gold[uid] = role  # first position, last role (as the official scorer)
        rows += [(qid, uid, 1, role, question, answer) for uid, role in gold.items()]
    if repeated:
        warnings.warn(f"{source or 'questions'}: {repeated} repeated gold UID(s) within "
                      "explanations counted once", stacklevel=3)
    return pd.DataFrame(rows, columns=QRELS_COLUMNS)


def read_qrels(path: str | Path) -> pd.DataFrame:
    """The gold explanations of a WorldTree question TSV as a qrels frame.

    >>> from mathir.samples import worldtree_sample
    >>> q = read_qrels(worldtree_sample().questions("Dev"))
    >>> q.loc[0, ["qid", "role"]].tolist(), int(q.loc[0, "label"])
    (['WT_DEV_01', 'CENTRAL'], 1)
    """
    topics = read_questions(path, explained_only=True)
    qrels = qrels_from_topics(topics, source=path)
    if qrels.empty:
        raise InputError("no question has a gold explanation", path=path)
    qrels.attrs["source"] = str(path)
    return qrels


def missing_gold(qrels: pd.DataFrame, docnos: Iterable[str]) -> pd.DataFrame:
    """Gold rows whose UID is not a fact of the tablestore (they force AP = 0).

    >>> q = pd.DataFrame({"qid": ["q1", "q1"], "docno": ["a", "zz"], "role": ["CENTRAL"] * 2})
    >>> missing_gold(q, ["a", "b"])[["qid", "docno"]].values.tolist()
    [['q1', 'zz']]
    """
    known = set(docnos)
    return qrels[~qrels["docno"].isin(known)].reset_index(drop=True)
