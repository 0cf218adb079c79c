"""The arqmath-task2 declaration and Task 1's formula-aware pipelines, end to end."""

from __future__ import annotations

import json

import pytest

from mathir.errors import InputError
from mathir.experiment import run_experiment
from mathir.tasks import TASKS, get_task
from tests.conftest import real_path


def test_declared_with_formula_pipelines():
    task = get_task("arqmath-task2")
    assert task.default_pipelines == ("formula-words", "formula-tuples")
    assert {"formula-aware", "formula-aware-rrf"} <= set(TASKS["arqmath-task1"].pipelines)


def test_sample_experiment_writes_task2_runs(tmp_path):
    res = run_experiment("arqmath-task2", out=tmp_path, quiet=True)
    assert list(res.table.index) == ["formula-words", "formula-tuples"]
    assert res.data.extras["formula_index"].name == "latex_representation_v3.tsv"
    line = res.runs["formula-tuples"].read_text().splitlines()[0].split("\t")
    assert len(line) == 6 and line[0].startswith("B.") and line[5] == "formula-tuples"
    assert res.table.loc["formula-words"].to_dict() == pytest.approx(
        {"nDCG'": 0.9658, "MAP'": 0.9255, "P'@10": 0.42, "bpref": 0.8156}, abs=1e-4)
    assert res.table.loc["formula-tuples"].to_dict() == pytest.approx(
        {"nDCG'": 0.9388, "MAP'": 0.8864, "P'@10": 0.42, "bpref": 0.7850}, abs=1e-4)


def test_evaluate_rejects_unknown_options_and_needs_index(sample):
    task = get_task("arqmath-task2")
    import pandas as pd
    run = pd.DataFrame({"qid": ["B.1"], "docno": ["20011"], "score": [1.0]})
    qrels = task.read_qrels(sample.task2_qrels_visual_id)
    with pytest.raises(InputError, match="assignments"):
        task.table({"r": run}, qrels, formula_index=sample.formulas, assignments="x")
    with pytest.raises(InputError, match="formula index"):
        task.table({"r": run}, qrels)


def test_task1_formula_aware_on_sample(tmp_path):
    res = run_experiment("arqmath-task1", pipelines=["bm25", "formula-aware"], out=tmp_path,
                         quiet=True)
    # On the sample the formulas help: question and answers share their formulas.
    assert res.table.loc["formula-aware", "nDCG'"] >= res.table.loc["bm25", "nDCG'"]


def test_cli_run_and_evaluate(tmp_path, sample, capsys):
    from mathir.cli import main
    out = tmp_path / "tuples.tsv"
    assert main(["run", "arqmath-task2", "--pipeline", "formula-tuples", "--out", str(out),
                 "--quiet"]) == 0
    capsys.readouterr()
    assert main(["evaluate", "arqmath-task2", str(out), "--qrels",
                 str(sample.task2_qrels_visual_id), "--formula-index", str(sample.formulas),
                 "--format", "json"]) == 0
    scores = json.loads(capsys.readouterr().out)["tuples"]
    # the same run as the experiment's formula-tuples (test_sample_experiment_writes_task2_runs)
    assert scores == pytest.approx({"nDCG'": 0.9388, "MAP'": 0.8864, "P'@10": 0.42,
                                    "bpref": 0.7850}, abs=1e-4)


@pytest.mark.realdata
def test_locates_real_task2_files():
    root = real_path("arqmath")
    data = get_task("arqmath-task2").data(root, "2021")
    assert data.qrels.name == "qrel_task2_2021_visual_id_v3_official.tsv"
    assert data.topics.name.startswith("Topics_Task2_2021")
    assert data.extras["formula_index"].name == "formula_index_from_thread_html.tsv"


def test_cli_formula_id_qrels_give_the_visual_id_scores(tmp_path, capsys, sample):
    import json

    from mathir.cli import main

    run = tmp_path / "r.tsv"
    run.write_text("B.1\t20012\t1002\t1\t2.0\tr\nB.1\t20011\t1002\t2\t1.0\tr\n")
    base = ["evaluate", "arqmath-task2", "--formula-index", str(sample.formulas), "--format", "json"]
    assert main(base + ["--qrels", str(sample.task2_qrels_visual_id), str(run)]) == 0
    by_visual = json.loads(capsys.readouterr().out)
    assert main(base + ["--qrels", str(sample.task2_qrels_formula_id), "--qrels-key", "formula_id",
                        str(run)]) == 0
    by_formula = json.loads(capsys.readouterr().out)
    assert by_formula == by_visual
    assert 0 < by_visual["r"]["nDCG'"] < 1  # the relevant formula is ranked second


def test_index_build_options_reach_the_formula_builder(tmp_path):
    task = get_task("arqmath-task2")
    data = task.data()
    sharded = task.index(data, tmp_path / "sharded", quiet=True, shards=2)
    assert sharded.manifest["shards"] == 2
    plain = task.index(data, tmp_path / "plain", quiet=True)
    assert sharded.docnos() == plain.docnos()
    with pytest.raises(InputError, match=r"worldtree's index has no option shards"):
        get_task("worldtree").index(get_task("worldtree").data(), tmp_path / "w",
                                    quiet=True, shards=2)
    with pytest.raises(InputError, match=r"no option colour \(its options: shards, ray_address"):
        task.index(data, tmp_path / "c", quiet=True, colour="red")
