"""Every name mathir turns into a path is one path component, and what an experiment
writes lies under ``--out`` (issue 49): tasks, years and splits (data labels), pipelines
and runs; per-topic files are named by the user, never by a measure."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

import mathir
from mathir.cli import main
from mathir.errors import InputError
from mathir.experiment import resolve_pipelines
from mathir.storage import atomic_file
from mathir.storage.paths import path_component, run_folder
from mathir.tasks import TASKS, get_task
from tests.conftest import error_lines

BAD = ["../up", "/abs", "", ".", "..", "a\x00b", "a/b", "a\\b", ".hidden", "a b", "a\nb"]


def _files(root: Path) -> set[Path]:
    return {Path(d) / f for d, _, files in os.walk(root) for f in files}


def test_every_declared_task_name_and_data_label_is_one_path_component():
    for task in TASKS.values():
        assert path_component(task.name) == task.name
        labels = {s.data_label or s.name for s in task.splits if not s.sample}
        assert all(path_component(label) == label for label in labels), task.name
        assert path_component(task.data().label)  # the embedded sample's


@pytest.mark.parametrize("name", BAD)
def test_names_that_are_not_one_path_component_are_refused(name):
    with pytest.raises(InputError, match="so it must be one path component"):
        run_folder("out", name, "sample")
    with pytest.raises(InputError, match="so it must be one path component"):
        run_folder("out", "arqmath-task1", name)
    with pytest.raises(InputError, match="pipeline name .* names the run file"):
        resolve_pipelines("arqmath-task1", [{name: "bm25"}])


def test_a_data_label_that_is_a_path_writes_nothing_outside_out(tmp_path, sample_index):
    """Before: a task (or plug-in) whose data label was ``../up`` wrote its runs to
    ``OUT/<task>/../up``, beside ``--out``'s task folder; a ``/abs`` one replaced --out."""
    task = get_task("arqmath-task1")
    for label in ("../../up", "/abs"):
        data = dataclasses.replace(task.data(), label=label)
        with pytest.raises(InputError, match="data label .*names the folder of its runs"):
            mathir.run_experiment(task, data, ["bm25"], out=tmp_path / "out",
                                  index_dir=sample_index.path, quiet=True)
    assert _files(tmp_path) == set()


def test_what_an_experiment_writes_lies_under_out(tmp_path, sample_index, capsys, monkeypatch):
    """A derived task with measures whose names hold '/' and '@', its report and per-topic
    files: every file is under --out (or is the per-topic file the user named)."""
    monkeypatch.setenv("MATHIR_INDEX_DIR", str(tmp_path / "indexes"))
    mine = mathir.derive_task("arqmath-task1", "mine.v2", topics=["A.1", "A.2", "A.3"],
                              measures=["P(rel=2)@5", "nDCG@10"], register=True)
    try:
        out = tmp_path / "out"
        assert main(["experiment", mine.name, "--pipelines", "bm25,tfidf", "--out", str(out),
                     "--index", str(sample_index.path), "--format", "html", "--per-topic",
                     str(out / "per-topic.csv"), "--quiet"]) == 0
    finally:
        dict.pop(TASKS, mine.name, None)
    capsys.readouterr()
    written = _files(tmp_path) - _files(tmp_path / "indexes")
    assert written and all(p.is_relative_to(out) for p in written), written
    assert {p.name for p in written} >= {"bm25.tsv", "tfidf.tsv", "per-topic.csv",
                                         "per-topic.significance.csv", "report.html"}
    assert (out / "mine.v2" / "sample" / "bm25.tsv").is_file()


def test_a_file_replaced_by_a_folder_is_named_not_its_temporary(tmp_path):
    """Before: ``.bm25.tsv.21919-....tmp: Is a directory``, the temporary's name."""
    run = tmp_path / "bm25.tsv"
    run.mkdir()
    with pytest.raises(InputError) as caught, atomic_file(run) as f:
        f.write("A.1\t1\t1\t1.0\tbm25\n")
    assert str(caught.value).startswith(f"{run}: ") and ".tmp" not in str(caught.value)
    assert os.listdir(tmp_path) == ["bm25.tsv"]  # no temporary left


def test_a_run_file_replaced_by_a_folder_is_one_error_line_naming_it(tmp_path, sample_index,
                                                                    capsys):
    out = tmp_path / "out"
    argv = ["experiment", "arqmath-task1", "--pipelines", "bm25", "--out", str(out), "--index",
            str(sample_index.path), "--quiet"]
    assert main(argv) == 0
    run = out / "arqmath-task1" / "sample" / "bm25.tsv"
    run.unlink()
    run.mkdir()
    capsys.readouterr()
    assert main(argv) == 2
    lines = error_lines(capsys.readouterr().err)
    assert len(lines) == 1 and lines[0].startswith(f"error: {run}: "), lines
    assert ".tmp" not in lines[0]
