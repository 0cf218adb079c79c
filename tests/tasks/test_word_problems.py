import json

import pytest

from mathir.cli import main
from mathir.errors import InputError
from mathir.experiment import run_experiment
from mathir.tasks import get_task
from tests.conftest import real_path


def test_task_on_sample(tmp_path):
    res = run_experiment("word-problems", out=tmp_path, quiet=True)
    assert list(res.table.index) == ["nearest-template", "template-retrieval",
                                     "trained-template-retrieval"]
    assert list(res.table.columns) == ["solution_acc", "equation_acc", "derivation_acc"]
    assert res.table.loc["template-retrieval", "solution_acc"] == 1.0
    assert res.runs["template-retrieval"].parent.name == "sample"


def test_unknown_split():
    with pytest.raises(InputError, match="unknown word-problem split"):
        get_task("word-problems").data(None, "fold-9")
    with pytest.raises(InputError, match="only the test split"):
        get_task("word-problems").data(None, "dev")


def test_cli_experiment_json(tmp_path, capsys):
    assert main(["experiment", "word-problems", "--out", str(tmp_path), "--format", "json",
                 "--quiet"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out["template-retrieval"]) == {"solution_acc", "equation_acc", "derivation_acc"}


def test_cli_run_and_evaluate(tmp_path, capsys):
    from mathir.samples import word_problems_sample

    run = tmp_path / "tr.tsv"
    assert main(["run", "word-problems", "--pipeline", "template-retrieval", "--out", str(run),
                 "--quiet"]) == 0
    qrels = word_problems_sample().split("test")
    capsys.readouterr()
    assert main(["evaluate", "word-problems", "--qrels", str(qrels), "--format", "json",
                 str(run)]) == 0
    assert json.loads(capsys.readouterr().out)["tr"]["solution_acc"] == 1.0


@pytest.mark.realdata
def test_folds_locate():
    root = real_path("word_problems")
    task = get_task("word-problems")
    d = task.data(root, "alg514-fold-2")
    assert d.collection.name == "kushman.json" and d.topics.name == "kushman-fold-2.txt"
    index = task.index(d)
    assert index.num_docs == 514 - 102
    d = task.data(root, "dolphin-fold-0")
    assert task.index(d).num_docs == 829 - 134  # 2 problems have no derivation
