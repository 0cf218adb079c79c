"""Bring your own pipeline: from Python, from the command line, from a package."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mathir.cli import main
from mathir.errors import InputError
from mathir.experiment import PIPELINE_ENTRY_POINTS, load_pipelines_file, run_experiment
from mathir.tasks import get_task
from tests.conftest import error_lines, install_distribution
from tests.test_readme import MEASURES, SAMPLE_SCORES, markdown_table

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "own_pipeline.py"
# the example's own pipelines on the embedded sample (nDCG', MAP', P'@10, bpref)
EXAMPLE_SCORES = {"bm25": SAMPLE_SCORES["bm25"], "bm25_k0.9_b0.4": SAMPLE_SCORES["bm25_k0.9_b0.4"],
                  "bm25+tfidf": SAMPLE_SCORES["bm25+tfidf"],
                  "bm25_top10": ["0.781†", "0.774", "0.290", "0.767"]}

MODULE = '''
import pyterrier as pt

import mathir


def reversed_bm25(index, sign: float = -1.0):
    return mathir.bm25(index) >> pt.apply.doc_score(lambda r: sign * r.score)
'''


@pytest.fixture
def restore_sys_path(monkeypatch):
    """sys.path as it was, whatever a test imports (mathir leaves it as it found it)."""
    monkeypatch.setattr(sys, "path", list(sys.path))


@pytest.mark.slow
def test_example_script_runs_and_reuses(tmp_path):
    def run():
        return subprocess.run([sys.executable, str(EXAMPLE), "--out", str(tmp_path)],
                              capture_output=True, text=True, timeout=300)

    first = run()
    assert first.returncode == 0, first.stderr
    columns, rows = markdown_table(first.stdout)
    assert columns == MEASURES and rows == EXAMPLE_SCORES
    assert first.stdout.rstrip().endswith("† significantly different from bm25")
    second = run()  # another process: the lambda and the file's factory hash alike
    assert second.stdout == first.stdout
    assert second.stderr.count("(reused)") == 4, second.stderr


def test_the_example_is_a_pipelines_file_for_the_cli(tmp_path, capsys, monkeypatch,
                                                      restore_sys_path):
    out = tmp_path / "runs"
    assert main(["experiment", "arqmath-task1", "--pipelines-file", str(EXAMPLE), "--out",
                 str(out), "--format", "json", "--quiet"]) == 0
    table = json.loads(capsys.readouterr().out)
    assert list(table) == ["tfidf", "bm25", "bm25_k0.9_b0.4", "bm25+tfidf", "bm25_top10"]
    assert round(table["bm25_k0.9_b0.4"]["nDCG'"], 3) == 0.941
    # from the examples folder, one factory by NAME=module:factory
    monkeypatch.chdir(EXAMPLE.parent)
    assert main(["experiment", "arqmath-task1", "--pipelines", "bm25,fused", "--pipeline",
                 "fused=own_pipeline:fused", "--out", str(out), "--quiet"]) == 0
    captured = capsys.readouterr()
    assert "fused" in captured.out and "bm25: " in captured.err
    assert "(reused: manifest matches)" in [line for line in error_lines(captured.err)
                                            if line.startswith("bm25: ")][0]
    assert "fused: " in captured.err and "(recomputed: no run file yet;" in captured.err


def test_python_api_takes_names_mappings_and_references(tmp_path, sample_index):
    import pyterrier as pt

    import mathir

    mine = mathir.bm25(sample_index) >> pt.apply.doc_score(lambda r: -r.score)
    res = run_experiment("arqmath-task1", out=tmp_path, index_dir=sample_index.path, quiet=True,
                         pipelines=["bm25", {"object": mine,
                                             "factory": lambda index: mathir.bm25(index),
                                             "reference": "mathir.pipelines.lexical:tfidf",
                                             "alias": "tfidf"}])
    assert list(res.table.index) == ["bm25", "object", "factory", "reference", "alias"]
    assert res.table.loc["factory"].equals(res.table.loc["bm25"])
    assert res.table.loc["reference"].equals(res.table.loc["alias"])
    assert res.table.loc["object", "nDCG'"] == pytest.approx(0.5826, abs=1e-4)


def test_own_module_factory_runs_in_worker_processes(tmp_path, monkeypatch, capsys,
                                                     restore_sys_path):
    (tmp_path / "mymod.py").write_text(MODULE)
    monkeypatch.chdir(tmp_path)
    for out, workers in (("one", "1"), ("two", "2")):
        assert main(["experiment", "arqmath-task1", "--pipelines", "mine", "--pipeline",
                     "mine=mymod:reversed_bm25", "--out", out, "--workers", workers,
                     "--index", "idx", "--quiet", "--format", "json"]) == 0
        assert json.loads(capsys.readouterr().out)["mine"]["nDCG'"] == pytest.approx(0.5826,
                                                                                     abs=1e-4)
    runs = [tmp_path / o / "arqmath-task1" / "sample" / "mine.tsv" for o in ("one", "two")]
    assert runs[0].read_text() == runs[1].read_text()
    assert json.loads(runs[1].with_name("mine.manifest.json").read_text())[
        "description"].startswith("ParallelTopics(mymod:reversed_bm25")


SHADOW = 'raise ImportError("the {} of the current folder was imported, not the library")\n'


def test_own_module_beside_numpy_py_runs_with_the_real_libraries(tmp_path):
    """Issue 49: before, `--pipeline NAME=module:factory` put the current folder first on
    sys.path for the whole run, so a numpy.py or pandas.py there replaced the library (the
    command failed, or computed with the user's file). Run as the `mathir` command runs:
    a console script's path starts with its bin folder, not the current one (-P)."""
    (tmp_path / "mymod.py").write_text("import numpy\n" + MODULE)
    for shadow in ("numpy", "pandas", "pyterrier", "sklearn", "lxml"):
        (tmp_path / f"{shadow}.py").write_text(SHADOW.format(f"{shadow}.py"))
    proc = subprocess.run([sys.executable, "-P", "-m", "mathir", "experiment", "arqmath-task1",
                           "--pipelines", "mine", "--pipeline", "mine=mymod:reversed_bm25",
                           "--out", "runs", "--index", "idx", "--quiet", "--format", "json"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads(proc.stdout)["mine"]["nDCG'"] == pytest.approx(0.5826, abs=1e-4)


def test_the_current_folder_is_on_the_path_only_while_a_reference_is_imported(
        tmp_path, monkeypatch, restore_sys_path):
    from mathir.experiment import import_reference, own_pipelines

    (tmp_path / "mymod2.py").write_text("import helper2\nfactory = helper2.f\n")
    (tmp_path / "helper2.py").write_text("def f(index):\n    return index\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(sys.modules, "mymod2", raising=False)
    monkeypatch.delitem(sys.modules, "helper2", raising=False)
    before = list(sys.path)
    assert own_pipelines(references=["mine=mymod2:factory"]) == {"mine": "mymod2:factory"}
    assert sys.path == before
    # a module of the current folder, importing its neighbour
    assert import_reference("mymod2:factory").__module__ == "helper2"
    assert sys.path == before and str(tmp_path) not in sys.path
    # an installed module of the same name comes first, and the message says so
    (tmp_path / "json.py").write_text("def mine(index):\n    return index\n")
    with pytest.raises(InputError, match="the installed 'json' at .* is imported, not "
                                         "json.py of the current folder: rename yours"):
        import_reference("json:mine")


def _plugin(tmp_path: Path, entry_points: str) -> None:
    """An installed package declaring ``entry_points``, as pip leaves it on sys.path."""
    (tmp_path / "fakeplugin_mod.py").write_text(MODULE)
    install_distribution(tmp_path, "fakeplugin", PIPELINE_ENTRY_POINTS, entry_points)


def test_an_entry_point_adds_a_pipeline_to_a_task(tmp_path, monkeypatch, capsys):
    _plugin(tmp_path, "arqmath-task1.reversed = fakeplugin_mod:reversed_bm25\n"
                      "worldtree.other = fakeplugin_mod:reversed_bm25\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["tasks"]) == 0
    listed = capsys.readouterr().out
    assert "reversed (entry point)" in listed.split("arqmath-task2")[0]
    assert "other (entry point)" in listed.split("worldtree:")[1]
    assert main(["experiment", "arqmath-task1", "--pipelines", "bm25,reversed", "--out",
                 str(tmp_path / "runs"), "--format", "json", "--quiet"]) == 0
    table = json.loads(capsys.readouterr().out)
    assert table["reversed"]["nDCG'"] == pytest.approx(0.5826, abs=1e-4)
    out = tmp_path / "reversed.tsv"
    assert main(["run", "arqmath-task1", "--pipeline", "reversed", "--out", str(out),
                 "--quiet"]) == 0
    assert out.read_text() == (tmp_path / "runs" / "arqmath-task1" / "sample" /
                               "reversed.tsv").read_text()


def test_an_entry_point_cannot_replace_a_task_pipeline(tmp_path, monkeypatch):
    _plugin(tmp_path, "arqmath-task1.bm25 = fakeplugin_mod:reversed_bm25\nnodot = x:y\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.warns(UserWarning) as caught:
        res = run_experiment("arqmath-task1", pipelines=["bm25"], out=tmp_path / "runs",
                             quiet=True)
    messages = " ".join(str(w.message) for w in caught)
    assert "arqmath-task1.bm25 (fakeplugin 0.1) ignored" in messages
    assert "nodot = 'x:y' (fakeplugin 0.1)" in messages
    assert res.table.loc["bm25", "nDCG'"] == pytest.approx(0.9336, abs=1e-4)


def test_run_command_takes_a_reference(tmp_path, monkeypatch, capsys, restore_sys_path):
    (tmp_path / "mymod.py").write_text(MODULE)
    monkeypatch.chdir(tmp_path)
    assert main(["run", "arqmath-task1", "--pipeline", "mine=mymod:reversed_bm25", "--out",
                 "mine.tsv", "--quiet"]) == 0
    assert "mine.tsv: 10 topics" in capsys.readouterr().out
    assert (tmp_path / "mine.tsv").read_text().splitlines()[0].split("\t")[4] == "mine"


@pytest.mark.parametrize("argv,message", [
    (["--pipeline", "mine"], "error: --pipeline 'mine': expected NAME=package.module:factory"),
    (["--pipeline", "mine=nosuchmodule_xyz:f"],
     "error: pipeline 'mine': cannot import 'nosuchmodule_xyz': No module named 'nosuchmodule_xyz'"),
    (["--pipeline", "mine=json:nothing"],
     "error: pipeline 'mine': module 'json' has no attribute 'nothing'"),
    (["--pipeline", "a/b=json:dumps"], "error: pipeline name 'a/b': it names the run file"),
    (["--pipeline", "mine=json:dumps", "--pipelines", "bm25"],
     "error: --pipeline mine is not among --pipelines bm25"),
    (["--pipelines-file", "nowhere.py"], "error: nowhere.py: pipelines file not found"),
    (["--pipelines-file", "syntax.py"], "error: syntax.py:2: syntax error: "),
    (["--pipelines-file", "TMP/syntax.py"], "error: TMP/syntax.py:2: syntax error: "),
    (["--pipelines-file", "raises.py"],
     "error: raises.py:3: NameError: name 'undefined' is not defined"),
    (["--pipelines-file", "empty.py"],
     "error: empty.py: defines no PIPELINES = {name: pipeline} mapping"),
    (["--pipelines-file", "badimport.py"],
     "error: badimport.py: cannot import nosuchmodule_xyz: No module named 'nosuchmodule_xyz'"),
    (["--pipelines-file", "twice.py", "--pipeline", "x=json:dumps"],
     "error: two pipelines are named 'x'"),
    (["--pipelines-file", "notapipeline.py"],
     "error: pipeline 'x': expected a pt.Transformer, a factory (index) -> pt.Transformer"),
])
def test_own_pipeline_mistakes_are_one_error_line(argv, message, tmp_path, monkeypatch, capsys,
                                                  restore_sys_path):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "syntax.py").write_text("PIPELINES = {}\ndef (:\n")
    (tmp_path / "raises.py").write_text("import json\n\nPIPELINES = {'x': undefined}\n")
    (tmp_path / "empty.py").write_text("X = 1\n")
    (tmp_path / "badimport.py").write_text("import nosuchmodule_xyz\nPIPELINES = {}\n")
    (tmp_path / "twice.py").write_text("PIPELINES = {'x': 'json:dumps'}\n")
    (tmp_path / "notapipeline.py").write_text("PIPELINES = {'x': 42}\n")
    argv = [a.replace("TMP", str(tmp_path)) for a in argv]
    assert main(["experiment", "arqmath-task1", *argv, "--out", "runs", "--quiet"]) == 2
    err = error_lines(capsys.readouterr().err)
    assert len(err) == 1 and err[0].startswith(message.replace("TMP", str(tmp_path))), err
    assert not (tmp_path / "runs" / ".index").exists()


def test_a_pipelines_file_is_loaded_from_its_path(tmp_path):
    f = tmp_path / "dir with space" / "my-pipelines.py"
    f.parent.mkdir()
    f.write_text("import json\nPIPELINES = {'x': json.dumps, 'y': 'json:loads'}\n")
    found = load_pipelines_file(f)
    assert found["y"] == "json:loads" and found["x"].__name__ == "dumps"


def test_default_selection_adds_own_pipelines_to_the_task_defaults(tmp_path, capsys,
                                                                   restore_sys_path):
    (tmp_path / "p.py").write_text("PIPELINES = {'bm25-again': 'mathir.pipelines.lexical:bm25'}")
    assert main(["experiment", "arqmath-task1", "--pipelines-file", str(tmp_path / "p.py"),
                 "--out", str(tmp_path / "runs"), "--format", "json", "--quiet"]) == 0
    table = json.loads(capsys.readouterr().out)
    assert list(table) == [*get_task("arqmath-task1").default_pipelines, "bm25-again"]
    assert table["bm25-again"] == table["bm25"]


def test_what_workers_cannot_rebuild_runs_in_this_process(tmp_path, sample_index):
    import mathir

    f = tmp_path / "mine.py"
    f.write_text("import mathir\n\ndef mine(index):\n    return mathir.bm25(index)\n\n"
                 "PIPELINES = {'file': mine}\n")
    with pytest.warns(UserWarning, match="pipeline 'lambda' runs in this process") as caught:
        res = run_experiment("arqmath-task1", out=tmp_path / "runs", quiet=True, workers=2,
                             index_dir=sample_index.path,
                             pipelines=[load_pipelines_file(f),
                                        {"lambda": lambda index: mathir.bm25(index)}])
    assert any("pipeline 'file' runs in this process" in str(w.message) for w in caught)
    assert res.table.loc["file"].equals(res.table.loc["lambda"])
    assert res.table.loc["file", "nDCG'"] == pytest.approx(0.9336, abs=1e-4)
