"""The TextGraphs-2019 explanation-regeneration scorer, with its breakdowns.

Average precision as the task's ``evaluate.py`` computes it (written here because it
differs from trec_eval's AP: a gold fact missing from the ranking makes the question's
AP 0, not a 0 term, so systems must rank every fact):

* ids are lower-cased; a repeated fact in a ranking keeps its first position;
* ``AP = mean over gold facts, in rank order, of (i / rank_i)``; 0 if one is unranked;
* ``MAP`` is the mean over the gold questions that appear in the predictions.

Breakdowns, as the organisers' Scala evaluator reports them (its log of the first 20
Dev questions is reproduced by averaging this way):

* ``MAP:CENTRAL`` / ``MAP:GROUNDING`` / ``MAP:LEXGLUE``: AP of the gold facts of that
  role after the *other* gold facts are removed from the ranking; a question with no
  gold fact of the role counts 0.
* ``MAP:LEXOVERLAP`` / ``MAP:NOLEXOVERLAP``: the same split by whether a gold fact
  shares a word or lemma with the question or its correct answer
  (:func:`lexical_overlap`).
* ``P@1`` .. ``P@5``: gold facts among the top N divided by ``min(N, number of gold)``.

:func:`map_by_length` gives MAP by the length of the gold explanation, as the task page
encourages (:func:`mathir.report.charts.plot_map_by_length` draws it).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import numpy as np
import pandas as pd

ROLE_MEASURES = {"MAP:CENTRAL": "CENTRAL", "MAP:GROUNDING": "GROUNDING", "MAP:LEXGLUE": "LEXGLUE"}
MEASURES = ("MAP", "MAP:CENTRAL", "MAP:GROUNDING", "MAP:LEXGLUE", "MAP:LEXOVERLAP",
            "MAP:NOLEXOVERLAP", "P@1", "P@2", "P@3", "P@4", "P@5")
_WORD = re.compile(r"[a-z0-9]+(?:['-][a-z0-9]+)*")


def average_precision(ranks: list[float]) -> float:
    """AP of gold ranks (1-based; NaN or None = not ranked, which gives 0).

    >>> round(average_precision([1, 7, 18, 53, 102, 384, 408, 858, 860, 3778, 3956]), 4)
    0.1486
    >>> average_precision([1, None])
    0.0
    """
    if not ranks:
        return 0.0
    if any(r is None or not np.isfinite(r) for r in ranks):
        return 0.0
    ordered = sorted(ranks)
    return float(np.mean([(i + 1) / r for i, r in enumerate(ordered)]))


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _stopwords() -> frozenset[str]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS)


def content_terms(text: str, lemmas: Mapping[str, str] | None = None) -> set[str]:
    """The non-stopword words of ``text`` and their lemmas.

    >>> sorted(content_terms("The ice is melting", {"melting": "melt"}))
    ['ice', 'melt', 'melting']
    """
    stops = _stopwords()
    out = set()
    for w in _words(text):
        if w in stops:
            continue
        out.add(w)
        if lemmas and w in lemmas:
            out.add(lemmas[w])
    return out


def lexical_overlap(qrels: pd.DataFrame, fact_texts: Mapping[str, str],
                    lemmas: Mapping[str, str] | None = None) -> pd.Series:
    """Per gold row: does the fact share a content word or lemma with question + answer?

    ``qrels`` needs ``qid, docno, question, answer``. Stopwords (scikit-learn's English
    list) do not count. A gold fact missing from ``fact_texts`` has no overlap.

    >>> q = pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "question": ["Why does ice melt?"] * 2,
    ...                   "answer": ["heat"] * 2})
    >>> lexical_overlap(q, {"a": "melting is a process", "b": "a kind of thing"},
    ...                 {"melting": "melt"}).tolist()
    [True, False]
    """
    cache: dict[str, set[str]] = {}
    flags = []
    for qid, docno, question, answer in zip(qrels["qid"], qrels["docno"], qrels["question"],
                                            qrels["answer"], strict=True):
        if qid not in cache:
            cache[qid] = content_terms(f"{question} {answer}", lemmas)
        flags.append(bool(content_terms(fact_texts.get(docno, ""), lemmas) & cache[qid]))
    return pd.Series(flags, index=qrels.index, dtype=bool)


def _subset_ap(ranks: np.ndarray, keep: np.ndarray) -> float:
    """AP of the gold rows in ``keep`` after the other gold rows leave the ranking."""
    if not keep.any():
        return 0.0
    if np.isnan(ranks[keep]).any():
        return 0.0
    others = np.sort(ranks[~keep & ~np.isnan(ranks)])
    mine = np.sort(ranks[keep])
    shifted = mine - np.searchsorted(others, mine)  # others ranked above each kept fact
    return float(np.mean(np.arange(1, len(mine) + 1) / shifted))


def per_question(run: pd.DataFrame, qrels: pd.DataFrame) -> pd.DataFrame:
    """One row per gold question present in ``run``: ``qid``, ``length`` (gold facts), measures.

    ``run`` needs ``qid, docno`` and ``rank`` (or ``score``: higher first); ``qrels``
    needs ``qid, docno, role`` and, for the overlap split, a boolean ``overlap``
    (see :func:`lexical_overlap`; without it both overlap measures are NaN).

    >>> run = pd.DataFrame({"qid": ["q"] * 3, "docno": ["x", "a", "b"], "rank": [1, 2, 3]})
    >>> gold = pd.DataFrame({"qid": ["q", "q"], "docno": ["a", "b"], "role": ["CENTRAL", "LEXGLUE"]})
    >>> per_question(run, gold)[["MAP", "MAP:CENTRAL", "MAP:LEXGLUE", "P@1", "P@3"]].round(4).values.tolist()
    [[0.5833, 0.5, 0.5, 0.0, 1.0]]
    """
    r = pd.DataFrame({"qid": run["qid"].astype(str).str.lower(),
                      "docno": run["docno"].astype(str).str.lower()})
    if "rank" in run.columns:
        r["order"] = pd.to_numeric(run["rank"]).to_numpy()
    else:
        r["order"] = -pd.to_numeric(run["score"]).to_numpy()
    r = r.sort_values(["qid", "order"], kind="stable").drop_duplicates(["qid", "docno"])
    r["rank"] = r.groupby("qid", sort=False).cumcount() + 1
    g = pd.DataFrame({"qid_orig": qrels["qid"].astype(str),
                      "qid": qrels["qid"].astype(str).str.lower(),
                      "docno": qrels["docno"].astype(str).str.lower(),
                      "role": qrels["role"].astype(str).str.upper()})
    has_overlap = "overlap" in qrels.columns
    g["overlap"] = qrels["overlap"].astype(bool).to_numpy() if has_overlap else False
    g = g.drop_duplicates(["qid", "docno"], keep="last")
    g = g[g["qid"].isin(set(r["qid"].unique()))]
    g = g.merge(r[["qid", "docno", "rank"]], on=["qid", "docno"], how="left")
    rows = []
    for qid, grp in g.groupby("qid_orig", sort=True):
        ranks = grp["rank"].to_numpy(dtype=float)
        roles = grp["role"].to_numpy()
        row = {"qid": qid, "length": len(grp), "MAP": average_precision(list(ranks))}
        for name, role in ROLE_MEASURES.items():
            row[name] = _subset_ap(ranks, roles == role)
        if has_overlap:
            ov = grp["overlap"].to_numpy(dtype=bool)
            row["MAP:LEXOVERLAP"] = _subset_ap(ranks, ov)
            row["MAP:NOLEXOVERLAP"] = _subset_ap(ranks, ~ov)
        else:
            row["MAP:LEXOVERLAP"] = row["MAP:NOLEXOVERLAP"] = np.nan
        for n in range(1, 6):
            hits = int((ranks <= n).sum())  # NaN compares False
            row[f"P@{n}"] = hits / min(n, len(grp))
        rows.append(row)
    return pd.DataFrame(rows, columns=["qid", "length", *MEASURES])


def evaluate(run: pd.DataFrame, qrels: pd.DataFrame) -> dict[str, float]:
    """Mean of each measure over the gold questions in ``run`` (the official MAP rule).

    >>> run = pd.DataFrame({"qid": ["q"] * 2, "docno": ["a", "b"], "rank": [1, 2]})
    >>> gold = pd.DataFrame({"qid": ["q", "q2"], "docno": ["b", "c"], "role": ["CENTRAL"] * 2})
    >>> evaluate(run, gold)["MAP"]
    0.5
    """
    table = per_question(run, qrels)
    if table.empty:
        return {m: 0.0 for m in MEASURES}
    return {m: float(table[m].mean()) for m in MEASURES}


def compare(runs: Mapping[str, pd.DataFrame], qrels: pd.DataFrame) -> pd.DataFrame:
    """Run x measure table (index: run name)."""
    rows = {name: evaluate(run, qrels) for name, run in runs.items()}
    return pd.DataFrame.from_dict(rows, orient="index", columns=list(MEASURES))


def map_by_length(per_q: pd.DataFrame) -> pd.DataFrame:
    """MAP and number of questions per gold explanation length.

    >>> map_by_length(pd.DataFrame({"length": [2, 2, 5], "MAP": [0.5, 1.0, 0.2]})).values.tolist()
    [[2.0, 2.0, 0.75], [5.0, 1.0, 0.2]]
    """
    t = per_q.groupby("length")["MAP"].agg(questions="count", MAP="mean").reset_index()
    return t.astype({"length": int, "questions": int})
