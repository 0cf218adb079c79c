"""ARQMath Task 2 evaluation: formulas judged as visually distinct formulae.

The official procedure, step by step (ARQMath overviews, Task 2 "Evaluation"):

1. map every retrieved formula instance to its visual id with the formula index
   (instances the index does not know, or without a visual id, are dropped);
2. walk each topic's ranking top-down (score descending, then rank, the order of
   :func:`mathir.runs.arqmath_task2.read_task2_run`) and keep only the first instance of
   each visual id; it keeps its own score, so ties are ordered as trec_eval orders them;
3. drop visual ids that have no judgment for the topic (prime measures);
4. compute nDCG', MAP', P'@10 (and bpref) as in Task 1 (:mod:`mathir.evaluation.prime`),
   averaged over every topic of the qrels.

Qrels keyed by formula id become visual-id qrels with the maximum relevance over the
judged instances of each visual id (:func:`visual_id_qrels`), which is how the official
visual-id qrels relate to the formula-id ones (checked on the real files: 1,189 of 1,192).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path

import ir_measures
import numpy as np
import pandas as pd

from mathir.errors import InputError
from mathir.evaluation.prime import ARQMATH_MEASURES, compare
from mathir.readers.formula_tsv import iter_formula_index

QRELS_KEYS = ("visual_id", "formula_id")


def visual_id_map(formula_index: str | Path, formula_ids: Iterable[str] | None = None
                  ) -> dict[str, str]:
    """formula id -> visual id from a formula index TSV (streamed).

    With ``formula_ids`` only those are kept, so a 28-million-row index costs memory
    only for the formulas a run retrieved. Instances without a visual id are left out.

    >>> from mathir.samples import arqmath_sample
    >>> visual_id_map(arqmath_sample().formulas, ["20001"])
    {'20001': '70001'}
    """
    wanted = None if formula_ids is None else set(formula_ids)
    out: dict[str, str] = {}
    for rec in iter_formula_index(formula_index):
        if rec.visual_id and (wanted is None or rec.formula_id in wanted):
            out[rec.formula_id] = rec.visual_id
    return out


def visual_id_qrels(qrels: pd.DataFrame, visual_ids: Mapping[str, str]) -> pd.DataFrame:
    """Formula-id qrels -> visual-id qrels: the maximum relevance over judged instances.

    Judged formulas with no visual id are dropped.

    >>> q = pd.DataFrame({"qid": ["B.1"] * 3, "docno": ["1", "2", "3"], "label": [1, 3, 2]})
    >>> visual_id_qrels(q, {"1": "v", "2": "v", "3": "w"})[["docno", "label"]].values.tolist()
    [['v', 3], ['w', 2]]
    """
    vid = qrels["docno"].astype(str).map(visual_ids)
    q = qrels.assign(docno=vid)[vid.notna()]
    q = q.groupby(["qid", "docno"], as_index=False, sort=True)["label"].max()
    q["visual_id"] = q["docno"]
    q["iteration"] = "0"
    return q[["qid", "docno", "label", "iteration", "visual_id"]]


def deduplicate_visual_ids(run: pd.DataFrame, visual_ids: Mapping[str, str],
                           qrels: pd.DataFrame | None = None) -> pd.DataFrame:
    """A formula run as a visual-id run: first instance of each visual id per topic.

    ``run`` is in top-down order (as read); ``docno`` becomes the visual id and the
    original formula id stays in ``formula_id``. With ``qrels`` (visual ids), visual ids
    not judged for the topic are dropped.

    >>> run = pd.DataFrame({"qid": ["B.1"] * 3, "docno": ["1", "2", "3"], "score": [3.0, 2.0, 1.0]})
    >>> deduplicate_visual_ids(run, {"1": "v", "2": "v", "3": "w"})[["docno", "formula_id"]].values.tolist()
    [['v', '1'], ['w', '3']]
    """
    out = run.copy()
    out["formula_id"] = out["docno"].astype(str)
    out["visual_id"] = out["formula_id"].map(visual_ids)
    out = out[out["visual_id"].notna()]
    out = out.drop_duplicates(["qid", "visual_id"], keep="first")
    out["docno"] = out["visual_id"]
    if qrels is not None:
        judged = set(zip(qrels["qid"].astype(str), qrels["docno"].astype(str), strict=True))
        keep = np.fromiter(((q, d) in judged for q, d in
                            zip(out["qid"].astype(str), out["docno"], strict=True)),
                           dtype=bool, count=len(out))
        out = out[keep]  # a boolean mask (a list, empty, would select no columns)
    return out.reset_index(drop=True)


def evaluate_task2(runs: Mapping[str, pd.DataFrame], qrels: pd.DataFrame,
                   formula_index: str | Path | None = None,
                   visual_ids: Mapping[str, str] | None = None,
                   qrels_key: str = "visual_id",
                   measures: Mapping[str, ir_measures.Measure] = ARQMATH_MEASURES
                   ) -> pd.DataFrame:
    """The official Task 2 evaluation of formula runs; one row per run, one column per measure.

    Give the formula index as a TSV path (``formula_index``) or as a ready mapping
    (``visual_ids``). ``qrels_key`` says what the qrels' doc ids are: ``"visual_id"``
    (the official files) or ``"formula_id"`` (converted with :func:`visual_id_qrels`).

    >>> from mathir.samples import arqmath_sample
    >>> from mathir.qrels.trec import read_qrels
    >>> s = arqmath_sample()
    >>> q = read_qrels(s.task2_qrels_visual_id)
    >>> run = pd.DataFrame({"qid": ["B.1"], "docno": ["20011"], "score": [1.0]})
    >>> float(round(evaluate_task2({"r": run}, q, s.formulas).loc["r", "P'@10"], 3))
    0.01
    """
    deduped, qrels = prepare_task2(runs, qrels, formula_index, visual_ids, qrels_key)
    return compare(deduped, qrels, measures)


def prepare_task2(runs: Mapping[str, pd.DataFrame], qrels: pd.DataFrame,
                  formula_index: str | Path | None = None,
                  visual_ids: Mapping[str, str] | None = None, qrels_key: str = "visual_id",
                  judged_only: bool = True) -> tuple[dict[str, pd.DataFrame], pd.DataFrame]:
    """The official Task 2 steps before scoring: (visual-id runs, visual-id qrels).

    Formulas are mapped to visual ids, each run is deduplicated top-down, unjudged visual
    ids are dropped (unless ``judged_only`` is False: the prime measures drop them too,
    so the scores are the same), and formula-id qrels become visual-id qrels (see
    :func:`evaluate_task2`); per-topic scores then come from the prime measures.
    """
    if qrels_key not in QRELS_KEYS:
        raise InputError(f"qrels_key must be one of {list(QRELS_KEYS)}, not {qrels_key!r}")
    if visual_ids is None:
        if formula_index is None:
            raise InputError("Task 2 evaluation needs the formula index "
                             "(--formula-index TSV) to map formulas to visual ids")
        needed: set[str] = set()
        for run in runs.values():
            needed.update(run["docno"].astype(str))
        if qrels_key == "formula_id":
            needed.update(qrels["docno"].astype(str))
        visual_ids = visual_id_map(formula_index, needed)
    if qrels_key == "formula_id":
        qrels = visual_id_qrels(qrels, visual_ids)
        if qrels.empty:
            raise InputError("no judged formula of the qrels is in the formula index",
                             path=formula_index)
    deduped = {}
    for name, run in runs.items():
        unknown = int((~run["docno"].astype(str).isin(visual_ids.keys())).sum())
        if unknown == len(run) and unknown:
            warnings.warn(f"{name}: none of its {unknown} retrieved formulas is in the formula "
                          "index (is it the index of this collection?); they cannot be "
                          "judged, so the run scores 0", stacklevel=2)
        elif unknown:
            warnings.warn(f"{name}: {unknown} of {len(run)} retrieved formulas have no visual "
                          "id in the formula index and were dropped", stacklevel=2)
        mapped = deduplicate_visual_ids(run, visual_ids)
        judged = deduplicate_visual_ids(run, visual_ids, qrels)
        deduped[name] = judged if judged_only else mapped
        if len(mapped) and judged.empty:
            hint = (" If the qrels hold formula ids, use qrels_key='formula_id' "
                    "(--qrels-key formula_id)." if qrels_key == "visual_id" else "")
            warnings.warn(f"{name}: none of its {len(mapped)} retrieved visual ids is judged in "
                          f"the qrels, so the run scores 0.{hint}", stacklevel=2)
    return deduped, qrels

