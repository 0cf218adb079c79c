"""VisualIdDocno: Task 2 pipelines scored by plain pt.Experiment, as the official evaluation."""

from __future__ import annotations

import pandas as pd
import pyterrier as pt
import pytest

from mathir.evaluation.formula_search import evaluate_task2
from mathir.evaluation.prime import ARQMATH_MEASURES
from mathir.pipelines.dedup import VisualDedup, VisualIdDocno
from mathir.pipelines.formula import formula_tuples, formula_words
from mathir.qrels.trec import read_qrels
from mathir.topics.arqmath import read_task2_topics

NAMES = list(ARQMATH_MEASURES)
MEASURES = list(ARQMATH_MEASURES.values())


@pytest.fixture(scope="module")
def findex(sample_formula_index):
    return sample_formula_index


@pytest.fixture(scope="module")
def task2(sample):
    return read_task2_topics(sample.task2_topics), read_qrels(sample.task2_qrels_visual_id)


@pytest.mark.parametrize("make", [formula_tuples, formula_words])
def test_experiment_with_visual_docnos_equals_the_official_evaluation(findex, sample, task2,
                                                                      make):
    topics, qrels = task2
    pipe = make(findex, num_results=20)
    official = evaluate_task2({"run": pipe(topics)}, qrels, sample.formulas).loc["run"]
    table = pt.Experiment([pipe >> VisualIdDocno()], topics, qrels, MEASURES)
    got = [table.iloc[0][str(m)] for m in MEASURES]
    assert got == pytest.approx(official[NAMES].tolist())
    assert official["nDCG'"] > 0.3  # a real score, not the 0.0 of formula-id docnos


def test_without_it_the_experiment_scores_zero(findex, task2):
    # What the stage is for: formula ids are never judged in visual-id qrels.
    topics, qrels = task2
    table = pt.Experiment([formula_tuples(findex, num_results=20)], topics, qrels, MEASURES)
    assert table.iloc[0][str(ARQMATH_MEASURES["nDCG'"])] == 0.0


def test_keeps_formula_ids_drops_rows_without_visual_id_and_dedups():
    res = pd.DataFrame({"qid": ["1", "1", "1", "1", "2"],
                        "docno": ["a", "b", "c", "d", "e"],
                        "visual_id": ["v", None, "v", "w", "v"],
                        "score": [1.0, 5.0, 3.0, 2.0, 1.0]})
    out = VisualIdDocno()(res)
    assert out[["qid", "docno", "formula_id", "rank"]].values.tolist() == [
        ["1", "v", "c", 0], ["1", "w", "d", 1], ["2", "v", "e", 0]]
    # After VisualDedup it only renames: the formula retrievers' formula_id is kept.
    deduped = VisualDedup()(res.assign(formula_id=res["docno"], visual_id=res["visual_id"]
                                       .fillna("")))
    assert VisualIdDocno()(deduped)["formula_id"].tolist() == ["c", "d", "e"]


def test_needs_visual_ids_and_keeps_empty_frames():
    with pytest.raises(ValueError, match="visual_id"):
        VisualIdDocno()(pd.DataFrame({"qid": ["1"], "docno": ["a"], "score": [1.0]}))
    empty = pd.DataFrame({"qid": [], "docno": [], "visual_id": [], "score": []})
    assert VisualIdDocno()(empty).empty
