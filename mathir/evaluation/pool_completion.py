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

Beside the systems, two rows that no system makes show what the pool rewards by itself:
:func:`length_run` (each topic's judged documents ranked by a length alone: the answer's
text, or its thread file, :func:`thread_file_sizes`) and the random floor. A comparison
table holds one :func:`completed_row` per run (:func:`seed_row` for rows already scored)
and says what each run covers of the pool (:func:`coverage`).

This is a library module (not benchmark code) because it is an evaluation protocol that
applies to any run read with :func:`mathir.read_run` and any qrels, and is tested as such;
``benchmarks/arqmath_judged_pool.py --peers`` applies it to the ARQMath-1 runs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

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


def seed_row(per_seed: pd.DataFrame, plain: pd.DataFrame | None = None,
             primary: str = "nDCG'") -> dict:
    """One row of a comparison table from ``per_seed`` (:func:`completed_scores`): each
    measure's mean over the seeds, the ``primary`` measure's sd and range over them and,
    given ``plain`` (the run's per-topic scores before completion), its mean there
    (``{primary}_not_completed``); 4 decimals.

    >>> seed_row(pd.DataFrame({"nDCG'": [0.5, 0.7]}), pd.DataFrame({"nDCG'": [0.4]}))
    {"nDCG'": 0.6, "nDCG'_seed_sd": 0.1414, "nDCG'_seed_range": [0.5, 0.7], \
"nDCG'_not_completed": 0.4}
    """
    summary = seed_summary(per_seed)
    row = {m: round(s["mean"], 4) for m, s in summary.items()}
    row[f"{primary}_seed_sd"] = round(summary[primary]["sd"], 4)
    row[f"{primary}_seed_range"] = [round(summary[primary]["min"], 4),
                                    round(summary[primary]["max"], 4)]
    if plain is not None:
        row[f"{primary}_not_completed"] = round(float(plain[primary].mean()), 4)
    return row


def coverage(run: pd.DataFrame, qrels: pd.DataFrame, collection: Iterable[str]) -> dict:
    """What ``run`` (as read, before any restriction) covers of a pool: its rows and
    topics, its rows whose document is in the pool (``collection``), its rows judged in
    the pool's ``qrels``, and the share of those qrels it retrieved.

    >>> run = pd.DataFrame({"qid": ["A.1", "A.1", "A.2"], "docno": ["x", "out", "y"]})
    >>> q = pd.DataFrame({"qid": ["A.1", "A.1", "A.2"], "docno": ["x", "z", "z"], "label": [1, 0, 2]})
    >>> coverage(run, q, {"x", "y", "z"})
    {'rows': 3, 'topics': 2, 'in_pool': 2, 'judged_in_pool': 1, 'of_pool_judged': 3, \
'share_of_pool_judged': 0.3333}
    """
    qid, docno = run["qid"].astype(str), run["docno"].astype(str)
    judged = set(zip(qrels["qid"].astype(str), qrels["docno"].astype(str), strict=True))
    hits = sum(1 for k in set(zip(qid, docno, strict=True)) if k in judged)
    return {"rows": int(len(run)), "topics": int(qid.nunique()),
            "in_pool": int(docno.isin(set(collection)).sum()), "judged_in_pool": int(hits),
            "of_pool_judged": int(len(judged)),
            "share_of_pool_judged": round(hits / len(judged), 4) if judged else 0.0}


def completed_row(run: pd.DataFrame, qrels: pd.DataFrame, collection: Iterable[str],
                  seeds: Sequence[int] = DEFAULT_SEEDS,
                  measures: Mapping[str, ir_measures.Measure] = ARQMATH_MEASURES,
                  ) -> tuple[dict, pd.DataFrame]:
    """An outside run (or a system's) by the protocol, for a comparison table: its
    :func:`seed_row` (completed over ``seeds``, with its mean before completion) and its
    :func:`coverage` of the pool, and its per-topic scores (means over the seeds, for
    significance tests).

    >>> qrels = pd.DataFrame({"qid": ["A.1", "A.1"], "docno": ["x", "y"], "label": [0, 3]})
    >>> run = pd.DataFrame({"qid": ["A.1"], "docno": ["y"], "score": [1.0]})
    >>> row, per_topic = completed_row(run, qrels, {"x", "y"}, seeds=[0, 1])
    >>> row["nDCG'"], row["nDCG'_not_completed"], row["coverage"]["judged_in_pool"]
    (1.0, 1.0, 1)
    >>> per_topic["qid"].tolist()
    ['A.1']
    """
    collection = set(collection)
    per_topic, per_seed = completed_scores(run, qrels, seeds, collection, measures)
    row = seed_row(per_seed, per_query(run, qrels, measures))
    row["coverage"] = coverage(run, qrels, collection)
    return row, per_topic


def length_run(qrels: pd.DataFrame, lengths: Mapping[str, float]) -> pd.DataFrame:
    """Each qrels topic's judged documents ranked by ``lengths`` alone, the score min-max
    normalised per topic (0 shortest, 1 longest; one document, or all of one length: 1).

    Under the prime measures (judged documents only) this is the same as ranking the
    whole pool by length with no cutoff. Documents with no length (not in the pool) are
    left out.

    >>> q = pd.DataFrame({"qid": ["A.1"] * 3 + ["A.2"], "docno": ["a", "b", "c", "d"],
    ...                   "label": [0, 2, 1, 3]})
    >>> r = length_run(q, {"a": 10, "b": 30, "c": 20, "d": 5})
    >>> r[r.qid == "A.1"].sort_values("score", ascending=False)["docno"].tolist()
    ['b', 'c', 'a']
    >>> r["score"].tolist()
    [0.0, 1.0, 0.5, 1.0]
    """
    run = qrels[["qid", "docno"]].astype(str)
    run = run[run["docno"].isin(lengths)].copy()
    length = run["docno"].map(lengths).astype(float)
    by = length.groupby(run["qid"])
    low, high = by.transform("min"), by.transform("max")
    span = (high - low).where(high > low)
    run["score"] = ((length - low) / span).fillna(1.0)
    return run.reset_index(drop=True)


def thread_file_sizes(collection: str | Path) -> dict[str, int]:
    """docno (the answer id of an ARQMath thread file ``{question}_{answer}.html``) -> the
    thread file's bytes, for :func:`length_run` (the data MANIFEST's reference ranking).

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "12_345.html").write_text("<html></html>")
    >>> thread_file_sizes(folder)
    {'345': 13}
    """
    return {f.stem.rsplit("_", 1)[-1]: f.stat().st_size
            for f in Path(collection).glob("*.html")}


__all__ = ["DEFAULT_SEEDS", "complete_run", "completed_row", "completed_scores", "coverage",
           "length_run", "random_floor", "seed_row", "seed_summary", "thread_file_sizes"]
