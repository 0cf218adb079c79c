"""The per-topic scorer of every task whose measures are ir_measures ones: a run's
per-topic values for each measure over every qrels topic (:func:`per_topic_scores`),
computed by ir_measures over arrays (cost by the size of the run, not of the qrels),
gdeval's measures given numeric topic ids and mapped back.
"""

from __future__ import annotations

from collections.abc import Mapping

import ir_measures
import numpy as np
import pandas as pd

from mathir.errors import InputError
from mathir.evaluation.measures import aggregation_of
from mathir.qrels.arqmath import NOT_JUDGED_CODES, judged_only


def _qrels_for_ir_measures(qrels: pd.DataFrame, not_judged: tuple[int, ...]) -> pd.DataFrame:
    q = judged_only(qrels) if not_judged == NOT_JUDGED_CODES else \
        qrels[~qrels["label"].isin(not_judged)]
    return pd.DataFrame({"query_id": q["qid"].astype(str), "doc_id": q["docno"].astype(str),
                         "relevance": q["label"].astype(int)})


def _run_for_ir_measures(run: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame({"query_id": run["qid"].astype(str), "doc_id": run["docno"].astype(str),
                         "score": run["score"].astype(float)})


def _dict_of_dicts(frame: pd.DataFrame, value: str) -> dict[str, dict[str, object]]:
    """``{query_id: {doc_id: value}}``, ir_measures' own form of a run or qrels frame (a
    later repeat of a pair wins, as in ir_measures' conversion).

    Made here once: ir_measures converts a DataFrame row by row through a namedtuple on
    every call, and :func:`per_topic_scores` makes a call per trec_eval setting.

    >>> _dict_of_dicts(pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"],
    ...                              "score": [2.0, 1.0]}), "score")
    {'1': {'a': 2.0, 'b': 1.0}}
    """
    out: dict[str, dict[str, object]] = {}
    for q, d, v in zip(frame["query_id"].tolist(), frame["doc_id"].tolist(),
                       frame[value].tolist(), strict=True):
        out.setdefault(q, {})[d] = v
    return out


def _setting(measure: ir_measures.Measure) -> tuple:
    """What decides the trec_eval invocation a measure needs: its relevance level, gains
    and judged_only flag (absent: the defaults).

    >>> _setting(ir_measures.parse_measure("nDCG(gains={0:0,1:1})@10"))
    (None, ((0, 0), (1, 1)), False)
    >>> _setting(ir_measures.parse_measure("NumRet")) == _setting(ir_measures.P@5)
    True
    """
    params = getattr(measure, "params", {}) or {}
    gains = params.get("gains")
    return (params.get("rel"), tuple(sorted(gains.items())) if isinstance(gains, dict) else gains,
            bool(params.get("judged_only")))


def per_topic_scores(run: pd.DataFrame, qrels: pd.DataFrame,
                     measures: Mapping[str, ir_measures.Measure],
                     not_judged: tuple[int, ...] = ()) -> pd.DataFrame:
    """One row per qrels topic, one column per measure (``{column: ir_measures
    measure}``): ir_measures' per-topic values of ``run``; a topic the run does not answer
    scores the measure's default, 0, as ir_measures scores it. ``attrs["aggregation"]``
    says how each column aggregates (mean, or sum for the counts).

    ``not_judged``: labels that are not judgments (ARQMath Task 3's codes 5 and 6).

    >>> import ir_measures
    >>> run = pd.DataFrame({"qid": ["A.1"], "docno": ["5"], "score": [1.0]})
    >>> qrels = pd.DataFrame({"qid": ["A.1", "A.2"], "docno": ["5", "6"], "label": [3, 2]})
    >>> per_topic_scores(run, qrels, {"P@1": ir_measures.P@1})["P@1"].tolist()
    [1.0, 0.0]
    """
    q = _qrels_for_ir_measures(qrels, tuple(not_judged))
    if q.empty:  # no topic to average over: the mean would be NaN, not a score
        codes = f" (labels {', '.join(map(str, not_judged))} count as not judged)" \
            if not_judged else ""
        raise InputError(f"the qrels judge no document{codes}", path=qrels.attrs.get("source"))
    topics = sorted(q["query_id"].unique())
    names: dict = {}  # measure -> its columns (one measure may be asked for under two names)
    for name, m in measures.items():
        names.setdefault(m, []).append(name)
    columns = {name: j for j, name in enumerate(measures)}
    rows = {m: [columns[n] for n in ns] for m, ns in names.items()}
    # an unanswered topic scores the measure's default, 0, as ir_measures scores it
    values = np.zeros((len(columns), len(topics)))
    for m, js in rows.items():
        values[js] = float(getattr(m, "DEFAULT", 0.0))
    position = dict(zip(topics, range(len(topics)), strict=True))
    r = _run_for_ir_measures(run) if len(run) else pd.DataFrame()
    if not r.empty:
        r = r[r["query_id"].isin(position)]
    if not r.empty:
        # only the answered topics' judgments: ir_measures would score every other qrels
        # topic its default, 0 (a tuple per topic and measure), as the array already holds
        q = q[q["query_id"].isin(set(r["query_id"]))]
        # gdeval (ERR, nDCG(dcg='exp-log2')) reads numeric topic ids only: its measures
        # see the topics' positions; the others (a user's own function too) their ids
        gdeval = [m for m in names if ir_measures.gdeval.supports(m)]
        numbered = {t: str(i) for t, i in position.items()} if gdeval else None
        # One call per configuration: ir_measures' pytrec_eval provider runs trec_eval once
        # per (rel, gains, judged_only) its measures ask for, and puts the measures that
        # name none of them (NumRet, NumQ, nDCG without gains) in whichever invocation its
        # set of measures yields first, by the process's hash seed: NumRet counted only
        # judged documents beside a judged_only measure (86 for 210), and nDCG@10 took
        # another measure's gains beside nDCG(gains=...)@10.
        by_setting: dict[tuple, list] = {}
        for m in names:
            if m not in gdeval:
                by_setting.setdefault(_setting(m), []).append(m)
        groups = [(gdeval, numbered), *((group, None) for group in by_setting.values())]
        as_dicts = None
        for group, ids in groups:
            if not group:
                continue
            back = position
            if ids is not None:
                gq = q.assign(query_id=q["query_id"].map(ids))
                gr = r.assign(query_id=r["query_id"].map(ids))
                back = {str(i): i for i in range(len(topics))}
            else:
                as_dicts = as_dicts or (_dict_of_dicts(q, "relevance"),
                                        _dict_of_dicts(r, "score"))
                gq, gr = as_dicts
            for m in ir_measures.iter_calc(group, gq, gr):
                values[rows[m.measure], back[m.query_id]] = float(m.value)
    table = pd.DataFrame({"qid": topics, **{n: values[j] for n, j in columns.items()}})
    table.attrs["aggregation"] = {n: aggregation_of(m) for n, m in measures.items()}
    return table
