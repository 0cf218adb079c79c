"""`mathir train-reranker` and the bm25>>crossencoder pipeline from the command line."""

import json

import pytest

from mathir.cli import main

pytest.importorskip("sentence_transformers")


def test_train_reranker_then_experiment_with_it(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("MATHIR_CROSS_ENCODER", raising=False)
    assert main(["train-reranker", "arqmath-task1", "--out", "ce", "--max-steps", "1",
                 "--batch-size", "2", "--max-length", "32", "--quiet"]) == 0
    out, err = capsys.readouterr()
    assert "cross-encoder trained on" in out and "positive) from" in err
    assert json.loads((tmp_path / "ce" / "manifest.json").read_text())["steps"] == 1
    assert main(["experiment", "arqmath-task1", "--pipelines", "bm25,bm25>>crossencoder",
                 "--cross-encoder", "ce", "--format", "json", "--quiet"]) == 0
    table = json.loads(capsys.readouterr().out)
    assert set(table) == {"bm25", "bm25>>crossencoder"}
    assert 0 <= table["bm25>>crossencoder"]["nDCG'"] <= 1


def test_crossencoder_pipeline_without_model_is_a_user_error(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MATHIR_CROSS_ENCODER", raising=False)
    assert main(["experiment", "arqmath-task1", "--pipelines", "bm25>>crossencoder",
                 "--quiet"]) == 2
    assert "error: bm25>>crossencoder needs a cross-encoder model" in capsys.readouterr().err


def test_train_reranker_bad_base_is_a_user_error(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert main(["train-reranker", "arqmath-task1", "--out", "ce", "--base", "nobody/nothing-here",
                 "--max-steps", "1", "--quiet"]) == 2
    assert "never downloaded" in capsys.readouterr().err


def test_worldtree_bi_and_cross_encoders_then_the_fused_pipelines(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for kind in ("bi-encoder", "cross-encoder"):
        assert main(["train-reranker", "worldtree", "--split", "train", "--kind", kind,
                     "--out", kind, "--first-stage", "tfidf", "--negative-depth", "20",
                     "--negatives", "1", "--max-steps", "2", "--batch-size", "4",
                     "--max-length", "48", "--learning-rate", "1e-5", "--quiet"]) == 0
        assert f"{kind} trained on" in capsys.readouterr().out
        manifest = json.loads((tmp_path / kind / "manifest.json").read_text())
        assert manifest["steps"] == 2 and manifest["learning_rate"] == 1e-5
    # The cross-encoder trained further, listwise, from the first one (the README's recipe).
    assert main(["train-reranker", "worldtree", "--split", "train", "--base", "cross-encoder",
                 "--loss", "listwise", "--out", "listwise", "--first-stage", "tfidf",
                 "--negative-depth", "20", "--negatives", "3", "--max-steps", "1",
                 "--batch-size", "8", "--max-length", "48", "--seed", "3", "--quiet"]) == 0
    manifest = json.loads((tmp_path / "listwise" / "manifest.json").read_text())
    assert manifest["loss"] == "listwise" and manifest["base"].endswith("cross-encoder")
    assert manifest["seed"] == 3
    assert main(["train-reranker", "worldtree", "--split", "train", "--kind", "bi-encoder",
                 "--loss", "listwise", "--out", "x", "--quiet"]) == 2
    assert "cross-encoder option" in capsys.readouterr().err
    assert main(["experiment", "worldtree", "--pipelines",
                 "ltr,ltr-dense,ltr-crossencoder,ltr-dense-crossencoder",
                 "--bi-encoder", "bi-encoder", "--cross-encoder", "cross-encoder",
                 "--format", "json", "--quiet"]) == 0
    table = json.loads(capsys.readouterr().out)
    assert set(table) == {"ltr", "ltr-dense", "ltr-crossencoder", "ltr-dense-crossencoder"}
    assert all(0 < row["MAP"] <= 1 for row in table.values())
