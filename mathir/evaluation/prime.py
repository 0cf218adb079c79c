"""Prime measures (unjudged documents removed) with the ARQMath topic-averaging convention.

ARQMath evaluates with ``trec_eval`` after removing every retrieved document that has
no judgment (Sakai and Kando's "prime" measures): nDCG' on the graded labels 0-3, and
MAP', P'@10 and bpref with H+M binarization (relevance >= 2). We declare them through
``ir_measures`` (``judged_only=True``).

The overview's tables average over **every topic of the qrels**: a topic that a run
does not answer scores 0 (found by reproducing Table 3; e.g. the "Linked MSE posts"
baseline answers 71 of the 77 ARQMath-1 topics: nDCG' 0.3026 over its 71 topics, 0.279
published = 0.3026 * 71 / 77). Topics in the run but not in the qrels are ignored.
"""

from __future__ import annotations

from collections.abc import Mapping

import ir_measures
import pandas as pd

from mathir.errors import InputError
from mathir.evaluation.measures import PRIME_MEASURES
from mathir.qrels.arqmath import NOT_JUDGED_CODES, judged_only

#: The ARQMath Task 1/2 measures by column name, as the tasks declare them
#: (:data:`mathir.evaluation.measures.PRIME_MEASURES`): ``nDCG(judged_only=True)``,
#: ``AP(rel=2, judged_only=True)``, ``P(rel=2, judged_only=True)@10``, ``Bpref(rel=2)``.
ARQMATH_MEASURES: dict[str, ir_measures.Measure] = {m.name: m.resolve() for m in PRIME_MEASURES}


def _qrels_for_ir_measures(qrels: pd.DataFrame, not_judged: tuple[int, ...]) -> pd.DataFrame:
    q = judged_only(qrels) if not_judged == NOT_JUDGED_CODES else \
        qrels[~qrels["label"].isin(not_judged)]
    return pd.DataFrame({"query_id": q["qid"].astype(str), "doc_id": q["docno"].astype(str),
                         "relevance": q["label"].astype(int)})


def _run_for_ir_measures(run: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame({"query_id": run["qid"].astype(str), "doc_id": run["docno"].astype(str),
                         "score": run["score"].astype(float)})


def per_query(run: pd.DataFrame, qrels: pd.DataFrame,
              measures: Mapping[str, ir_measures.Measure] = ARQMATH_MEASURES,
              not_judged: tuple[int, ...] = NOT_JUDGED_CODES) -> pd.DataFrame:
    """One row per qrels topic, one column per measure; unanswered topics score 0.

    ``not_judged``: labels that are not judgments (ARQMath Task 3's codes 5 and 6; a
    task with other labels passes ``()``, as the tasks whose measures are declared
    ir_measures ones do).

    >>> run = pd.DataFrame({"qid": ["A.1"], "docno": ["5"], "score": [1.0]})
    >>> qrels = pd.DataFrame({"qid": ["A.1", "A.2"], "docno": ["5", "6"], "label": [3, 2]})
    >>> per_query(run, qrels)["nDCG'"].tolist()
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
    values = {name: dict.fromkeys(topics, 0.0) for name in measures}
    r = _run_for_ir_measures(run) if len(run) else pd.DataFrame()
    if not r.empty:
        r = r[r["query_id"].isin(set(topics))]
    if not r.empty:
        for m in ir_measures.iter_calc(list(names), q, r):
            for name in names[m.measure]:
                values[name][m.query_id] = float(m.value)
    table = pd.DataFrame({"qid": topics, **{n: [v[t] for t in topics] for n, v in values.items()}})
    return table


def evaluate(run: pd.DataFrame, qrels: pd.DataFrame,
             measures: Mapping[str, ir_measures.Measure] = ARQMATH_MEASURES) -> dict[str, float]:
    """Mean of each measure over all qrels topics (the ARQMath convention).

    >>> run = pd.DataFrame({"qid": ["A.1"], "docno": ["5"], "score": [1.0]})
    >>> qrels = pd.DataFrame({"qid": ["A.1", "A.2"], "docno": ["5", "6"], "label": [3, 2]})
    >>> evaluate(run, qrels)["nDCG'"]
    0.5
    """
    table = per_query(run, qrels, measures)
    return {name: float(table[name].mean()) for name in measures}


def compare(runs: Mapping[str, pd.DataFrame], qrels: pd.DataFrame,
            measures: Mapping[str, ir_measures.Measure] = ARQMATH_MEASURES) -> pd.DataFrame:
    """A table with one row per run (index: run name) and one column per measure."""
    rows = {name: evaluate(run, qrels, measures) for name, run in runs.items()}
    return pd.DataFrame.from_dict(rows, orient="index", columns=list(measures))
