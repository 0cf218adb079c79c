"""Comparing outside runs with systems that rank a whole judged pool: pool completion.

On a *pool* (a collection made of some judged documents, e.g. the 3,395 ARQMath answers
of ``shared/data``), a system that ranks the collection ranks every pool document of a
topic, while another team's run, made on the full collection, may have retrieved only
a few of them: restricted to the pool, the prime measures would punish it for answers
it never saw. The protocol here evens that out:

1. the qrels are restricted to the pool (done by the caller, as the experiments do);
2. the run is restricted to the pool's documents;
3. for each qrels topic, the judged pool documents the run did not retrieve are
   appended after its own ranking, in a random order (a topic it lacks gets only them);
4. the scores are averaged over several seeds of that random order.

The **random floor** is the same protocol applied to an empty run: the expected score
of a random ranking of each topic's judged pool documents.

Only the judged documents of a topic are appended: the prime measures drop every
unjudged document, so appending the unjudged pool documents as well changes nothing.

This is a library module (not benchmark code) because it is an evaluation protocol that
applies to any run read with :func:`mathir.read_run` and any qrels, and is tested as such.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import ir_measures
import numpy as np
import pandas as pd

from mathir.evaluation.prime import ARQMATH_MEASURES, per_query
from mathir.qrels.arqmath import judged_only

#: seeds of the random order of appended documents, as the benchmark uses them
DEFAULT_SEEDS = tuple(range(20))


def complete_run(run: pd.DataFrame, qrels: pd.DataFrame, seed: int,
                 collection: Iterable[str] | None = None) -> pd.DataFrame:
    """``run`` restricted to ``collection`` with each qrels topic's unretrieved judged
    documents appended below its own ranking, in the random order of ``seed``.

    The run's own rows keep their scores (so trec_eval orders them as before, ties
    included); appended documents get strictly lower, strictly decreasing scores.

    >>> run = pd.DataFrame({"qid": ["A.1", "A.1"], "docno": ["x", "gone"], "score": [5.0, 4.0]})
    >>> qrels = pd.DataFrame({"qid": ["A.1"] * 3, "docno": ["x", "y", "z"], "label": [1, 3, 0]})
    >>> out = complete_run(run, qrels, seed=0, collection={"x", "y", "z"})
    >>> out["docno"].tolist()[0], sorted(out["docno"].tolist()[1:])
    ('x', ['y', 'z'])
    """
    rng = np.random.default_rng(seed)
    run = run[["qid", "docno", "score"]].copy()
    run["qid"] = run["qid"].astype(str)
    run["docno"] = run["docno"].astype(str)
    run["score"] = run["score"].astype(float)
    if collection is not None:
        run = run[run["docno"].isin(set(collection))]
    judged = judged_only(qrels)
    parts = [run]
    retrieved = run.groupby("qid")["docno"].agg(set).to_dict()
    lowest = run.groupby("qid")["score"].min().to_dict()
    for qid, docs in judged.groupby(judged["qid"].astype(str))["docno"]:
        missing = sorted(set(docs.astype(str)) - retrieved.get(qid, set()))
        if not missing:
            continue
        order = rng.permutation(len(missing))
        low = lowest.get(qid, 0.0)
        gap = max(1.0, abs(low))  # a step that float64 cannot lose against `low`
        parts.append(pd.DataFrame({"qid": qid, "docno": [missing[i] for i in order],
                                   "score": low - gap * np.arange(1, len(missing) + 1)}))
    return pd.concat(parts, ignore_index=True)


def completed_scores(run: pd.DataFrame, qrels: pd.DataFrame,
                     seeds: Sequence[int] = DEFAULT_SEEDS,
                     collection: Iterable[str] | None = None,
                     measures: Mapping[str, ir_measures.Measure] = ARQMATH_MEASURES,
                     ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Scores of ``run`` completed with each seed (:func:`complete_run`).

    Returns ``(per_topic, per_seed)``: per_topic has one row per qrels topic (``qid``
    and each measure, the mean over seeds), per_seed one row per seed (the measures'
    means over topics, the ARQMath averaging). A run that retrieves every judged
    document of every topic scores the same for all seeds.

    >>> qrels = pd.DataFrame({"qid": ["A.1", "A.1"], "docno": ["x", "y"], "label": [0, 3]})
    >>> run = pd.DataFrame({"qid": ["A.1"], "docno": ["y"], "score": [1.0]})
    >>> topic, seed = completed_scores(run, qrels, seeds=[0, 1])
    >>> float(topic["nDCG'"].iloc[0]), seed["nDCG'"].tolist()
    (1.0, [1.0, 1.0])
    """
    if not len(seeds):
        raise ValueError("no seeds")
    collection = None if collection is None else set(collection)
    tables = [per_query(complete_run(run, qrels, s, collection), qrels, measures)
              .set_index("qid") for s in seeds]
    names = list(measures)
    per_seed = pd.DataFrame([t[names].mean() for t in tables], index=pd.Index(seeds, name="seed"))
    per_topic = (sum(t[names] for t in tables) / len(tables)).reset_index()
    return per_topic, per_seed


def random_floor(qrels: pd.DataFrame, seeds: Sequence[int] = DEFAULT_SEEDS,
                 measures: Mapping[str, ir_measures.Measure] = ARQMATH_MEASURES,
                 ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The scores of random rankings of each topic's judged documents (an empty run,
    completed): ``(per_topic, per_seed)`` as :func:`completed_scores`.

    >>> qrels = pd.DataFrame({"qid": ["A.1"], "docno": ["x"], "label": [2]})
    >>> float(random_floor(qrels, seeds=[3])[1]["nDCG'"].iloc[0])
    1.0
    """
    empty = pd.DataFrame({"qid": pd.Series(dtype=str), "docno": pd.Series(dtype=str),
                          "score": pd.Series(dtype=float)})
    return completed_scores(empty, qrels, seeds, None, measures)


def seed_summary(per_seed: pd.DataFrame) -> dict[str, dict[str, float]]:
    """Measure -> ``{"mean", "sd", "min", "max"}`` over the seeds (sd with ddof=1; 0 for
    one seed).

    >>> seed_summary(pd.DataFrame({"m": [0.5, 0.7]}))["m"]["mean"]
    0.6
    """
    out = {}
    for m in per_seed.columns:
        x = per_seed[m].to_numpy(dtype=float)
        out[m] = {"mean": float(x.mean()), "sd": float(x.std(ddof=1)) if len(x) > 1 else 0.0,
                  "min": float(x.min()), "max": float(x.max())}
    return out


__all__ = ["DEFAULT_SEEDS", "complete_run", "completed_scores", "random_floor", "seed_summary"]
