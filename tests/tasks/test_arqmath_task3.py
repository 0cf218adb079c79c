"""ARQMath-3 Task 3 through the registry and the command line."""

import importlib.util
import json

import pytest

from mathir.cli import main
from mathir.experiment import run_experiment
from mathir.runs.arqmath_task3 import read_task3_run
from mathir.tasks import get_task
from tests.conftest import real_path

# Table 5 of the ARQMath-3 overview: AR and P@1 of the 14 Task 3 runs.
TABLE5 = {
    "Baseline2022-task3-GPT3-auto-both-generate-P": (1.346, 0.500),
    "approach0-task3-run1-manual-both-extract-A": (1.282, 0.436),
    "approach0-task3-run4-manual-both-extract-A": (1.231, 0.397),
    "approach0-task3-run3-manual-both-extract-A": (1.179, 0.372),
    "approach0-task3-run2-manual-both-extract-A": (1.115, 0.321),
    "approach0-task3-run5-manual-both-extract-P": (0.949, 0.282),
    "DPRL-Task3-SVMSBERT-auto-both-extract-A": (0.462, 0.154),
    "DPRL-Task3-SVMBERT-auto-both-extract-P": (0.449, 0.154),
    "DPRL-Task3-AMRSBERT-auto-both-extract-A": (0.423, 0.128),
    "DPRL-Task3-AMRBERT-auto-both-extract-A": (0.385, 0.103),
    "TU_DBS-task3-amps3_se1_hints-auto-both-generate-A": (0.325, 0.078),
    "TU_DBS-task3-se3_len_pen_10-auto-both-generate-A": (0.244, 0.064),
    "TU_DBS-task3-amps3_se1_len_pen_20_sample_hint-auto-both-generate-A": (0.231, 0.051),
    "TU_DBS-task3-shortest-auto-both-generate-P": (0.205, 0.026),
}


def test_registry_declares_task3():
    t = get_task("arqmath-task3")
    assert set(t.measure_names) == {"AR", "P@1", "LO", "CS"}
    assert set(t.default_pipelines) == {"tfidf", "bm25"}
    assert set(t.pipelines) == set(get_task("arqmath-task1").pipelines)


NEURAL = all(importlib.util.find_spec(m) for m in ("torch", "transformers", "bert_score"))

@pytest.mark.slow  # among the longest: left out of the quick loop (-m 'not slow')
def test_sample_experiment_writes_valid_answers(tmp_path, bertscore_once):
    warning = "not the official witiko/mathberta" if NEURAL else "LO and CS not computed"
    with pytest.warns(UserWarning, match=warning):
        res = run_experiment("arqmath-task3", out=tmp_path, quiet=True)
    assert list(res.table.index) == ["tfidf", "bm25"]
    for path in res.runs.values():
        run = read_task3_run(path, topics=[f"A.{i}" for i in range(1, 11)])
        assert len(run) == 10 and (run.answer.str.len() <= 1200).all()
    # The sample's topics paraphrase collection questions: the top answers are relevant.
    assert res.table[["AR", "P@1"]].to_dict() == {"AR": {"tfidf": 2.6, "bm25": 2.6},
                                                  "P@1": {"tfidf": 0.9, "bm25": 0.9}}
    if not NEURAL:
        assert list(res.table.columns) == ["AR", "P@1"]
        return
    assert list(res.table.columns) == ["AR", "P@1", "LO", "CS"]
    # LO: token-set F1 (exact); CS: BERTScore with the packaged MiniLM (layer 6), which the
    # note says is not the official model (float noise across machines: 1e-4).
    assert res.table["LO"].to_dict() == pytest.approx({"tfidf": 0.948739, "bm25": 0.960345},
                                                      abs=1e-6)
    assert res.table["CS"].to_dict() == pytest.approx({"tfidf": 0.9652, "bm25": 0.9675},
                                                      abs=1e-4)
    assert "all-MiniLM-L6-v2" in res.table.attrs["note"]


def test_cli_evaluates_every_run_of_the_assignment_file(sample, capsys):
    assert main(["evaluate", "arqmath-task3", "--qrels", str(sample.task3_qrels),
                 "--assignments", str(sample.task3_assignments), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out) == 4
    assert out["alpha-task3-run1-auto-both-extract-P"] == {"AR": 2.9, "P@1": 1.0}
    assert out["gamma-task3-run1-manual-both-extract-P"] == pytest.approx({"AR": 1.4, "P@1": 0.4})


def test_cli_run_files_get_lo_and_cs_with_a_chosen_model(sample, capsys):
    pytest.importorskip("bert_score")
    from mathir.evaluation.open_answers import default_model_path

    runs = [str(p) for p in sorted(sample.task3_runs.glob("*.tsv"))]
    with pytest.warns(UserWarning, match=r"\(layer 5\), not the official .* not comparable"):
        assert main(["evaluate", "arqmath-task3", "--qrels", str(sample.task3_qrels),
                     "--assignments", str(sample.task3_assignments), "--model",
                     default_model_path(), "--layer", "5", "--format", "json", *runs]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out["beta-task3-gen-auto-both-generate-P"]) == {"AR", "P@1", "LO", "CS"}


def test_cli_needs_runs_or_assignments(sample, capsys):
    assert main(["evaluate", "arqmath-task3", "--qrels", str(sample.task3_qrels)]) == 2
    assert "error: no run files to evaluate" in capsys.readouterr().err


@pytest.mark.realdata
def test_table5_manual_measures_are_reproduced(capsys):
    qrels = real_path("arqmath", "qrels", "task3", "qrel_task3_2022_official_complete.tsv")
    assignments = real_path("arqmath", "qrels", "task3", "teams_document_id.tsv")
    assert main(["evaluate", "arqmath-task3", "--qrels", str(qrels), "--assignments",
                 str(assignments), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == set(TABLE5)
    for run, (ar, p1) in TABLE5.items():
        assert (round(out[run]["AR"], 3), round(out[run]["P@1"], 3)) == (ar, p1), run


def test_readme_task3_example_runs(monkeypatch):
    pytest.importorskip("bert_score")
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    docs = [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    block, doc = next((b, d) for d in docs if d.exists()
                      for b in re.findall(r"```python\n(.*?)```", d.read_text(), re.S)
                      if "evaluate_open_answers" in b)
    scope: dict = {}
    with pytest.warns(UserWarning, match="not comparable"):
        exec(compile(block, str(doc), "exec"), scope)
    table = scope["table"]
    assert list(table.columns) == ["AR", "P@1", "LO", "CS"]
    runs = ["alpha-task3-run1-auto-both-extract-P", "alpha-task3-run2-auto-both-extract-A",
            "beta-task3-gen-auto-both-generate-P", "gamma-task3-run1-manual-both-extract-P"]
    assert list(table.index) == runs
    # AR and P@1 from the judgments; LO exact; CS: MiniLM's BERTScore (float noise: 1e-4).
    assert table["AR"].tolist() == [2.9, 1.5, 1.7, 1.4]
    assert table["P@1"].tolist() == [1.0, 0.5, 0.7, 0.4]
    assert table["LO"].tolist() == pytest.approx([0.810655, 0.558638, 0.530328, 0.596287],
                                                 abs=1e-6)
    assert table["CS"].tolist() == pytest.approx([0.8934, 0.6679, 0.6936, 0.6935], abs=1e-4)
    assert len(scope["refs"]) == 19


def test_task3_works_without_the_neural_extra(sample):
    """Core imports and AR/P@1 need no torch; LO/CS say which extra to install."""
    import subprocess
    import sys

    code = f"""
import sys, warnings
from pathlib import Path

class Blocked:  # as if torch, transformers and bert-score were not installed
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("torch", "transformers", "bert_score"):
            raise ImportError(f"No module named {{name!r}}", name=name)

sys.meta_path.insert(0, Blocked())
import mathir
from mathir.errors import InputError
from mathir.evaluation.open_answers import AnswerModel

with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    t = mathir.evaluate_runs("arqmath-task3", {str(sample.task3_qrels)!r},
                             sorted(Path({str(sample.task3_runs)!r}).glob("*.tsv")),
                             assignments={str(sample.task3_assignments)!r})
assert list(t.columns) == ["AR", "P@1"], t.columns
assert any("mathir[neural]" in str(x.message) for x in w)
assert not any(m in sys.modules for m in ("torch", "transformers", "bert_score"))
try:
    AnswerModel("x", 1).tokenize("a")
except InputError as e:
    assert "pip install 'mathir[neural]'" in str(e), e
else:
    raise AssertionError("no error")
print("ok")
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr


@pytest.mark.slow
def test_task3_scores_per_topic_like_every_task(tmp_path, capsys, bertscore_once):
    """One evaluation path: AR, P@1, LO and CS per topic, so Task 3 gets per-topic files
    and significance tests (before: "--per-topic: arqmath-task3 has no per-topic scores")."""
    import mathir
    from mathir.cli import main

    res = mathir.run_experiment("arqmath-task3", out=tmp_path / "lib", quiet=True)
    assert res.per_topic is not None and res.significance is not None
    assert ("bm25", "AR") in res.significance.index
    for name, frame in res.per_topic.items():  # the table is the mean of its topics
        for m in res.table.columns:
            assert res.table.loc[name, m] == pytest.approx(frame[m].mean())
    per_topic = tmp_path / "pt.csv"
    assert main(["experiment", "arqmath-task3", "--quiet", "--out", str(tmp_path / "cli"),
                 "--per-topic", str(per_topic)]) == 0
    assert per_topic.read_text().splitlines()[0] == "qid,run,AR,P@1,LO,CS"
    assert "AR" in per_topic.with_name("pt.significance.csv").read_text()
    from mathir.tasks import get_task

    assert not hasattr(get_task("arqmath-task3"), "evaluate")
