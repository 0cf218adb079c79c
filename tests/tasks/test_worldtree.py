"""The `worldtree` task end to end: registry, experiment, CLI (on the sample; the real Dev
experiment is in tests/test_path_equality.py)."""

import json

import pytest

from mathir.cli import main
from mathir.evaluation.explanation_scorer import MEASURES
from mathir.experiment import run_experiment
from mathir.samples import worldtree_sample
from mathir.tasks import get_task


def test_registry_declares_worldtree():
    t = get_task("worldtree")
    assert t.measure_names == MEASURES and t.primary_measure == "MAP"
    assert set(t.default_pipelines) <= set(t.pipelines)
    assert {"tfidf", "bm25", "multihop", "fusion", "rrf", "neighbours", "python-baseline"} <= set(t.pipelines)


def test_sample_experiment_writes_runs_table_and_histogram(tmp_path):
    res = run_experiment("worldtree", out=tmp_path, quiet=True)
    assert list(res.table.index) == list(get_task("worldtree").default_pipelines)
    assert list(res.table.columns) == list(MEASURES)
    assert res.table["MAP"].to_dict() == pytest.approx(
        {"tfidf": 0.6915, "bm25": 0.6454, "multihop": 0.7228, "fusion": 0.6889,
         "neighbours": 0.5764, "ltr": 0.6356}, abs=1e-4)  # the sample's Dev questions
    png = tmp_path / "worldtree" / "sample" / "map_by_length.png"
    assert png.read_bytes()[:4] == b"\x89PNG"
    lines = (tmp_path / "worldtree" / "sample" / "map_by_length.tsv").read_text().splitlines()
    assert lines[0] == "run\tlength\tquestions\tMAP" and len(lines) > 5
    first = res.runs["bm25"].read_text().splitlines()[0].split("\t")
    assert len(first) == 2 and first[0].startswith("WT_DEV_")


def test_cli_experiment_evaluate_and_run_agree(tmp_path, capsys):
    s = worldtree_sample()
    assert main(["experiment", "worldtree", "--pipelines", "bm25", "--out", str(tmp_path),
                 "--format", "json", "--quiet"]) == 0
    table = json.loads(capsys.readouterr().out)
    run = tmp_path / "worldtree" / "sample" / "bm25.tsv"
    assert main(["evaluate", "worldtree", "--qrels", str(s.questions("Dev")), "--tablestore",
                 str(s.tables), "--format", "json", str(run)]) == 0
    assert json.loads(capsys.readouterr().out)["bm25"] == table["bm25"]
    out = tmp_path / "r" / "tf.tsv"
    assert main(["run", "worldtree", "--split", "test", "--pipeline", "tfidf", "--out", str(out),
                 "--run-format", "trec", "--quiet"]) == 0
    assert out.read_text().splitlines()[0].split("\t")[1] == "Q0"


def test_cli_errors(tmp_path, capsys):
    assert main(["experiment", "worldtree", "--split", "valid", "--quiet"]) == 2
    assert "unknown WorldTree split 'valid'" in capsys.readouterr().err
    (tmp_path / "tables").mkdir()
    (tmp_path / "tables" / "A.tsv").write_text("X\t[SKIP] UID\nx\tu1\n")
    assert main(["experiment", "worldtree", "--data", str(tmp_path), "--quiet"]) == 2
    assert "no Dev question file" in capsys.readouterr().err
    bad = tmp_path / "p.txt"
    bad.write_text("WT_DEV_01\tx\ty\n")
    assert main(["evaluate", "worldtree", "--qrels", str(worldtree_sample().questions("Dev")), str(bad)]) == 2
    assert "p.txt:1: expected 2 columns" in capsys.readouterr().err


# The real Dev experiment (tfidf MAP > 0.40, neighbours > 0.44, the MAP-by-length chart)
# is checked by tests/test_path_equality.py::test_worldtree_dev_gives_one_number_every_way,
# which runs it anyway.
