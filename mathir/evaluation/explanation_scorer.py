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
from functools import lru_cache

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


@lru_cache(maxsize=1)
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


def _order(run: pd.DataFrame) -> np.ndarray:
    if "rank" in run.columns:
        return pd.to_numeric(run["rank"]).to_numpy()
    return -pd.to_numeric(run["score"]).to_numpy()


def _lowered_codes(values: pd.Series) -> tuple[np.ndarray, pd.Index]:
    """Codes of ``values.astype(str).str.lower()`` and the distinct strings they index:
    each distinct value is made text once (a run holds a million rows, a few thousand
    distinct documents)."""
    codes, uniques = pd.factorize(values, use_na_sentinel=False)
    texts = pd.Series(uniques, dtype=values.dtype).astype(str).str.lower()
    merged, names = pd.factorize(texts, use_na_sentinel=False)
    return merged[codes].astype(np.int64), pd.Index(np.asarray(names, dtype=object))


def _with_ranks(run: pd.DataFrame, gold: pd.DataFrame) -> pd.DataFrame:
    """The gold rows (lower-cased ``qid, docno``) of the topics ``run`` answers, with the
    ``rank`` of their fact in the run (NaN: not ranked). Ids are lower-cased; a run's
    order is its ``rank`` (or its ``score``, descending), ties in file order, and a
    repeated fact keeps its first position."""
    order = _order(run)
    if order.dtype.kind not in "iuf":  # not a plain numeric array: through pandas
        r = pd.DataFrame({"qid": run["qid"].astype(str).str.lower(),
                          "docno": run["docno"].astype(str).str.lower(), "order": order})
        r = r.sort_values(["qid", "order"], kind="stable").drop_duplicates(["qid", "docno"])
        r["rank"] = r.groupby("qid", sort=False).cumcount() + 1
        gold = gold[gold["qid"].isin(set(r["qid"].unique()))]
        return gold.merge(r[["qid", "docno", "rank"]], on=["qid", "docno"], how="left")
    q, qids = _lowered_codes(run["qid"])
    d, docnos = _lowered_codes(run["docno"])
    width = max(len(docnos), 1)
    by = np.lexsort((order, q))  # by topic, then order; a stable sort: ties in file order
    pairs = q[by] * width + d[by]
    first = ~pd.Series(pairs).duplicated(keep="first").to_numpy()
    pairs, topics = pairs[first], q[by][first]
    starts = np.r_[True, topics[1:] != topics[:-1]] if len(topics) else np.zeros(0, bool)
    ranks = np.arange(len(pairs)) - np.flatnonzero(starts)[np.cumsum(starts) - 1] + 1
    topic = qids.get_indexer(gold["qid"])
    gold = gold[topic >= 0].reset_index(drop=True)
    topic, doc = topic[topic >= 0], docnos.get_indexer(gold["docno"])
    at = pd.Index(pairs).get_indexer(topic * width + doc)
    at[doc < 0] = -1
    return gold.assign(rank=np.where(at >= 0, ranks[at] if len(ranks) else 0, np.nan))


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
    g = pd.DataFrame({"qid_orig": qrels["qid"].astype(str),
                      "qid": qrels["qid"].astype(str).str.lower(),
                      "docno": qrels["docno"].astype(str).str.lower(),
                      "role": qrels["role"].astype(str).str.upper()})
    has_overlap = "overlap" in qrels.columns
    g["overlap"] = qrels["overlap"].astype(bool).to_numpy() if has_overlap else False
    g = _with_ranks(run, g.drop_duplicates(["qid", "docno"], keep="last"))
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
