"""`mathir train-reranker` and the bm25>>crossencoder pipeline from the command line."""

import json
from pathlib import Path

import numpy as np
import pytest

from mathir.cli import main

pytest.importorskip("sentence_transformers")


def _encoder_weights(model_dir: str | Path) -> dict[str, np.ndarray]:
    """The transformer weights of a saved model, keyed without the ``bert.`` prefix a
    cross-encoder's classification model puts on them (its head left out)."""
    from safetensors.numpy import load_file

    weights = load_file(str(Path(model_dir) / "model.safetensors"))
    return {k.removeprefix("bert."): v for k, v in weights.items()
            if not k.startswith("classifier.") and not k.endswith("position_ids")}


def moved_from(model_dir: str | Path, base_dir: str | Path) -> float:
    """The share of the base model's weight tensors that training changed (the saved model
    must hold every one of them)."""
    new, base = _encoder_weights(model_dir), _encoder_weights(base_dir)
    assert set(base) <= set(new)
    return sum(not np.array_equal(new[k], base[k]) for k in base) / len(base)


#: the sample's topics that the experiment after training runs
TWO_TOPICS = ("A.1", "A.2")


def two_topic_data(root: Path) -> Path:
    """A Task 1 data folder of the embedded sample's posts, :data:`TWO_TOPICS` and their
    judgments (year 2022)."""
    import re
    import shutil

    from mathir.samples import arqmath_sample

    s = arqmath_sample()
    (root / "collection").mkdir(parents=True)
    shutil.copy(s.posts, root / "collection" / "Posts.V1.3.xml")
    topics = s.task1_topics.read_text(encoding="utf-8")
    kept = [m.group(0) for m in re.finditer(r'\s*<Topic number="([^"]+)">.*?</Topic>', topics,
                                            flags=re.S) if m.group(1) in TWO_TOPICS]
    (root / "Topics_Task1_2022_V0.1.xml").write_text(
        '<?xml version="1.0" ?>\n<Topics>' + "".join(kept) + "\n</Topics>\n", encoding="utf-8")
    qrels = [line for line in s.task1_qrels.read_text(encoding="utf-8").splitlines()
             if line.split("\t")[0] in TWO_TOPICS]
    (root / "qrel_task1_2022_official.tsv").write_text("\n".join(qrels) + "\n")
    return root


@pytest.mark.slow  # among the longest: left out of the quick loop (-m 'not slow')
def test_train_reranker_then_experiment_with_it(tmp_path, monkeypatch, capsys,
                                                two_layer_minilm):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    # From MiniLM's first 2 layers (what is checked, the command and the pipeline around
    # the model, holds at any depth): the cross-encoder scores 100 answers a topic at 256
    # word pieces below, most of this test's time, at a third of the 6 layers' cost.
    assert main(["train-reranker", "arqmath-task1", "--out", "ce", "--max-steps", "1",
                 "--base", str(two_layer_minilm), "--batch-size", "2", "--max-length", "32",
                 "--quiet"]) == 0
    out, err = capsys.readouterr()
    assert "cross-encoder trained on" in out and "positive) from" in err
    manifest = json.loads((tmp_path / "ce" / "manifest.json").read_text())
    assert manifest["steps"] == 1
    # The one step changed the transformer's weights (most of them: AdamW moves every
    # weight with a gradient by about the learning rate).
    assert manifest["base"] == str(two_layer_minilm)
    assert moved_from(tmp_path / "ce", manifest["base"]) > 0.9
    # On two of the sample's topics.
    data = two_topic_data(tmp_path / "data")
    assert main(["experiment", "arqmath-task1", "--data", str(data), "--year", "2022",
                 "--pipelines", "bm25,bm25>>crossencoder", "--cross-encoder", "ce",
                 "--format", "json", "--quiet"]) == 0
    table = json.loads(capsys.readouterr().out)
    assert set(table) == {"bm25", "bm25>>crossencoder"}
    # The reranker reorders BM25's top 100 with the cross-encoder's scores, probabilities
    # (BM25's scores are not).
    from mathir.runs.trec import read_run

    runs = {n: read_run(next((tmp_path / "runs" / "arqmath-task1").glob(f"*/{n}.tsv")))
            for n in table}
    assert set(runs["bm25"]["qid"]) == set(TWO_TOPICS)
    top = runs["bm25"].sort_values(["qid", "rank"], kind="stable").groupby("qid").head(100)
    assert len(top) == 200  # the sample's 250 answers: 100 reranked a topic
    reranked = runs["bm25>>crossencoder"]
    assert set(zip(reranked["qid"], reranked["docno"], strict=True)) == set(
        zip(top["qid"], top["docno"], strict=True))
    assert runs["bm25"]["score"].max() > 1
    assert runs["bm25>>crossencoder"]["score"].between(0, 1, inclusive="neither").all()


def test_crossencoder_pipeline_without_model_is_a_user_error(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["experiment", "arqmath-task1", "--pipelines", "bm25>>crossencoder",
                 "--quiet"]) == 2
    assert "error: bm25>>crossencoder needs a cross-encoder model" in capsys.readouterr().err


def test_train_reranker_bad_base_is_a_user_error(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert main(["train-reranker", "arqmath-task1", "--out", "ce", "--base", "nobody/nothing-here",
                 "--max-steps", "1", "--quiet"]) == 2
    assert "never downloaded" in capsys.readouterr().err


@pytest.mark.slow  # among the longest: left out of the quick loop (-m 'not slow')
def test_worldtree_bi_and_cross_encoders_then_the_fused_pipelines(tmp_path, monkeypatch, capsys,
                                                                  two_layer_minilm):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    # Both from MiniLM's first 2 layers, as above.
    for kind in ("bi-encoder", "cross-encoder"):
        assert main(["train-reranker", "worldtree", "--split", "train", "--kind", kind,
                     "--base", str(two_layer_minilm),
                     "--out", kind, "--first-stage", "tfidf", "--negative-depth", "20",
                     "--negatives", "1", "--max-steps", "2", "--batch-size", "4",
                     "--max-length", "48", "--learning-rate", "1e-5", "--quiet"]) == 0
        assert f"{kind} trained on" in capsys.readouterr().out
        manifest = json.loads((tmp_path / kind / "manifest.json").read_text())
        assert manifest["steps"] == 2 and manifest["learning_rate"] == 1e-5
        assert moved_from(tmp_path / kind, manifest["base"]) > 0.9
    # The cross-encoder trained further, listwise, from the first one (the README's recipe).
    assert main(["train-reranker", "worldtree", "--split", "train", "--base", "cross-encoder",
                 "--loss", "listwise", "--out", "listwise", "--first-stage", "tfidf",
                 "--negative-depth", "20", "--negatives", "3", "--max-steps", "1",
                 "--batch-size", "8", "--max-length", "48", "--seed", "3", "--quiet"]) == 0
    manifest = json.loads((tmp_path / "listwise" / "manifest.json").read_text())
    assert manifest["loss"] == "listwise" and manifest["base"].endswith("cross-encoder")
    assert manifest["seed"] == 3
    assert moved_from(tmp_path / "listwise", tmp_path / "cross-encoder") > 0.9
    assert main(["train-reranker", "worldtree", "--split", "train", "--kind", "bi-encoder",
                 "--loss", "listwise", "--out", "x", "--quiet"]) == 2
    assert "cross-encoder option" in capsys.readouterr().err
    assert main(["experiment", "worldtree", "--pipelines",
                 "ltr,ltr-dense,ltr-crossencoder,ltr-dense-crossencoder",
                 "--bi-encoder", "bi-encoder", "--cross-encoder", "cross-encoder",
                 "--format", "json", "--quiet"]) == 0
    table = json.loads(capsys.readouterr().out)
    assert set(table) == {"ltr", "ltr-dense", "ltr-crossencoder", "ltr-dense-crossencoder"}
    # Each fusion with a trained model ranks otherwise than ltr alone (constant or ignored
    # model scores would leave ltr's ranking, and its MAP, unchanged).
    for name in ("ltr-dense", "ltr-crossencoder", "ltr-dense-crossencoder"):
        assert abs(table[name]["MAP"] - table["ltr"]["MAP"]) > 0.01, (name, table)
