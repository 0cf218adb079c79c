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

from mathir.evaluation.measures import PRIME_MEASURES
from mathir.evaluation.per_topic import per_topic_scores
from mathir.qrels.arqmath import NOT_JUDGED_CODES

#: The ARQMath Task 1/2 measures by column name, as the tasks declare them
#: (:data:`mathir.evaluation.measures.PRIME_MEASURES`): ``nDCG(judged_only=True)``,
#: ``AP(rel=2, judged_only=True)``, ``P(rel=2, judged_only=True)@10``, ``Bpref(rel=2)``.
ARQMATH_MEASURES: dict[str, ir_measures.Measure] = {m.name: m.resolve() for m in PRIME_MEASURES}


def per_query(run: pd.DataFrame, qrels: pd.DataFrame,
              measures: Mapping[str, ir_measures.Measure] = ARQMATH_MEASURES,
              not_judged: tuple[int, ...] = NOT_JUDGED_CODES) -> pd.DataFrame:
    """:func:`mathir.evaluation.per_topic.per_topic_scores` with ARQMath's defaults: the
    prime measures, Task 3's codes 5 and 6 not judgments.

    >>> run = pd.DataFrame({"qid": ["A.1"], "docno": ["5"], "score": [1.0]})
    >>> qrels = pd.DataFrame({"qid": ["A.1", "A.2"], "docno": ["5", "6"], "label": [3, 2]})
    >>> per_query(run, qrels)["nDCG'"].tolist()
    [1.0, 0.0]
    """
    return per_topic_scores(run, qrels, measures, not_judged)


def evaluate(run: pd.DataFrame, qrels: pd.DataFrame,
             measures: Mapping[str, ir_measures.Measure] = ARQMATH_MEASURES) -> dict[str, float]:
    """Mean of each measure over all qrels topics (the ARQMath convention).

    >>> run = pd.DataFrame({"qid": ["A.1"], "docno": ["5"], "score": [1.0]})
    >>> qrels = pd.DataFrame({"qid": ["A.1", "A.2"], "docno": ["5", "6"], "label": [3, 2]})
    >>> evaluate(run, qrels)["nDCG'"]
    0.5
    """
    table = per_query(run, qrels, measures)
    how = table.attrs["aggregation"]
    return {name: float(table[name].sum() if how[name] == "sum" else table[name].mean())
            for name in measures}


def compare(runs: Mapping[str, pd.DataFrame], qrels: pd.DataFrame,
            measures: Mapping[str, ir_measures.Measure] = ARQMATH_MEASURES) -> pd.DataFrame:
    """A table with one row per run (index: run name) and one column per measure."""
    rows = {name: evaluate(run, qrels, measures) for name, run in runs.items()}
    return pd.DataFrame.from_dict(rows, orient="index", columns=list(measures))
