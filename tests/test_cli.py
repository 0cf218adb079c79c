import json
import shutil
import subprocess
import sys

import pytest

from mathir.cli import main
from tests.conftest import error_lines, real_path


@pytest.mark.slow  # among the longest: left out of the quick loop (-m 'not slow')
def test_demo_runs_every_task_on_the_sample(tmp_path, capsys):
    assert main(["demo", "--out", str(tmp_path), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "arqmath-task1" in out and "nDCG'" in out
    runs = sorted(p.name for p in (tmp_path / "arqmath-task1" / "sample").glob("*.tsv"))
    assert runs == ["bm25.tsv", "tfidf.tsv"]


def test_experiment_json_and_evaluate_agree(tmp_path, capsys, sample):
    assert main(["experiment", "arqmath-task1", "--out", str(tmp_path), "--format", "json", "--quiet"]) == 0
    table = json.loads(capsys.readouterr().out)
    assert set(table) == {"tfidf", "bm25"}
    run = tmp_path / "arqmath-task1" / "sample" / "bm25.tsv"
    assert main(["evaluate", "arqmath-task1", "--qrels", str(sample.task1_qrels), "--format", "json", str(run)]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["bm25"] == table["bm25"]
    assert set(again["bm25"]) == {"nDCG'", "MAP'", "P'@10", "bpref"}


def test_index_and_run_commands(tmp_path, capsys):
    idx = tmp_path / "idx"
    assert main(["index", "arqmath-task1", "--index", str(idx), "--quiet"]) == 0
    assert "250 documents" in capsys.readouterr().out
    out = tmp_path / "r" / "tf.tsv"
    assert main(["run", "arqmath-task1", "--pipeline", "tfidf", "--index", str(idx), "--out", str(out),
                 "--run-format", "trec", "--quiet"]) == 0
    first = out.read_text().splitlines()[0].split("\t")
    assert first[1] == "Q0" and first[3] == "1" and first[5] == "tf"


def test_index_in_shards(tmp_path, capsys):
    assert main(["index", "arqmath-task2", "--index", str(tmp_path / "one"), "--quiet"]) == 0
    assert main(["index", "arqmath-task2", "--index", str(tmp_path / "three"), "--shards", "3",
                 "--quiet"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split(": ")[1] == out[1].split(": ")[1]  # the same number of formulas
    for rep in ("tuples", "words"):
        for name in ("inv.docs", "inv.freqs", "fwd.documents", "fwd.terms"):
            assert (tmp_path / "three" / rep / name).read_bytes() == \
                (tmp_path / "one" / rep / name).read_bytes()


@pytest.mark.parametrize("task,pipeline", [("arqmath-task2", "formula-tuples"),
                                           ("arqmath-task1", "bm25")])
def test_impact_shards_write_the_run_of_one_and_stay_impacts(task, pipeline, tmp_path, capsys):
    runs = []
    for name, shards in (("one", "1"), ("three", "3")):
        index = tmp_path / name
        assert main(["index", task, "--index", str(index), "--shards", shards,
                     "--scoring", "bm25-impacts", "--quiet"]) == 0
        (tmp_path / name / "runs").mkdir()
        out = tmp_path / name / "runs" / "run.tsv"
        # `run` opens the index as it is: it does not build a bm25 index in its place.
        assert main(["run", task, "--pipeline", pipeline, "--index", str(index),
                     "--out", str(out), "--quiet"]) == 0
        assert json.loads((index / "manifest.json").read_text())["scoring"] == "bm25-impacts"
        runs.append(out.read_bytes())
    assert runs[0] == runs[1] and len(runs[0].splitlines()) > 100


@pytest.mark.parametrize("argv,msg", [
    (["evaluate", "arqmath-task1", "--qrels", "/no/qrels.tsv", "x.tsv"], "error: /no/qrels.tsv: file not found"),
    (["experiment", "no-such-task"], "error: unknown task 'no-such-task'"),
    (["experiment", "arqmath-task1", "--pipelines", "bm26"], "error: unknown pipeline 'bm26'"),
    (["experiment", "arqmath-task1", "--data", "/no/dir"], "error: /no/dir: data directory not found"),
    (["index", "arqmath-task1", "--index", "i", "--shards", "2"],
     "error: answer shards are kept and searched side by side"),
    (["index", "worldtree", "--index", "i", "--shards", "2"],
     "error: worldtree's index has no option shards"),
    (["index", "arqmath-task2", "--index", "i", "--ray", "local"], "error: --ray indexes shards"),
    (["index", "arqmath-task2", "--index", "i", "--shards", "0"], "error: --shards must be at least 1"),
])
def test_user_errors_print_one_line_and_exit_2(argv, msg, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv + ["--quiet"] if argv[0] == "experiment" else argv) == 2
    err = error_lines(capsys.readouterr().err)
    assert err[-1].startswith(msg) and "Traceback" not in "\n".join(err)


def test_bad_run_file_via_console_script(tmp_path, sample):
    bad = tmp_path / "bad.tsv"
    bad.write_text("A.1 5 1 nan r\n")
    proc = subprocess.run([sys.executable, "-m", "mathir.cli", "evaluate", "arqmath-task1", "--qrels",
                           str(sample.task1_qrels), str(bad)], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"error: {bad}:1: score is not finite: 'nan'"


def test_a_factory_that_returns_no_transformer_is_one_error_line(tmp_path, capsys):
    # it was an AttributeError traceback after indexing
    code = main(["experiment", "arqmath-task1", "--out", str(tmp_path), "--quiet",
                 "--pipeline", "x=builtins:str"])
    err = error_lines(capsys.readouterr().err)
    assert code == 2 and len(err) == 1, err
    assert err[0].startswith("error: pipeline 'x': its factory builtins:str returned str, not a "
                             "PyTerrier transformer")


@pytest.mark.parametrize("content", ["", '<?xml version="1.0"?>\n<posts></posts>\n'])
def test_a_collection_without_answers_is_one_error_line(tmp_path, capsys, sample, content):
    # PISA's StopIteration escaped as a traceback
    data = tmp_path / "data"
    data.mkdir()
    shutil.copy(sample.task1_topics, data / "Topics_Task1_2020_V2.0.xml")
    shutil.copy(sample.task1_qrels, data / "qrel_task1_2020_official.tsv")
    (data / "Posts.V1.3.xml").write_text(content)
    code = main(["experiment", "arqmath-task1", "--data", str(data), "--year", "2020",
                 "--out", str(tmp_path / "o"), "--quiet", "--pipelines", "bm25"])
    err = error_lines(capsys.readouterr().err)
    assert code == 2 and len(err) == 1 and err[0].startswith("error: "), err
    assert "Posts.V1.3.xml: " in err[0]
    assert ("no answer posts" if content else "malformed XML") in err[0]


def test_an_empty_thread_folder_is_one_error_line(tmp_path, capsys, sample):
    data = tmp_path / "data"
    (data / "threads_all").mkdir(parents=True)
    shutil.copy(sample.task1_topics, data / "Topics_Task1_2020_V2.0.xml")
    shutil.copy(sample.task1_qrels, data / "qrel_task1_2020_official.tsv")
    code = main(["experiment", "arqmath-task1", "--data", str(data), "--year", "2020",
                 "--out", str(tmp_path / "o"), "--quiet", "--pipelines", "bm25"])
    err = error_lines(capsys.readouterr().err)
    assert code == 2 and len(err) == 1 and err[0].startswith("error: "), err
    assert "threads_all" in err[0] and "no thread files (*.html) in the folder" in err[0]


def test_evaluate_with_topics_refuses_unknown_topic(tmp_path, sample, capsys):
    run = tmp_path / "r.tsv"
    run.write_text("A.1\t1002\t1\t2.0\tr\nB.7\t1003\t1\t1.0\tr\n")
    argv = ["evaluate", "arqmath-task1", "--qrels", str(sample.task1_qrels), "--topics",
            str(sample.task1_topics), str(run)]
    assert main(argv) == 2
    assert error_lines(capsys.readouterr().err) == [f"error: {run}:2: topic 'B.7' is not in the topics"]


@pytest.mark.realdata
def test_cli_parity_mirmu(capsys):
    run = real_path("arqmath", "runs", "arqmath1", "prim_MIRMU-task1-Ensemble-auto-both-A.tsv")
    qrels = real_path("arqmath", "qrels", "task1", "qrel_task1_2020_official.tsv")
    assert main(["evaluate", "arqmath-task1", "--qrels", str(qrels), "--format", "json", str(run)]) == 0
    scores = json.loads(capsys.readouterr().out)["prim_MIRMU-task1-Ensemble-auto-both-A"]
    assert round(scores["nDCG'"], 3) == 0.238
    assert round(scores["MAP'"], 3) == 0.064 and round(scores["P'@10"], 3) == 0.139


# --- experiment: extras, quiet, output formats ----------------------------------------------

REVERSED = """
import pyterrier as pt
import mathir

PIPELINES = {"reversed": lambda index: mathir.bm25(index) >> pt.apply.doc_score(lambda r: -r.score)}
"""


def test_ray_without_ray_is_one_error_line_before_any_work(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # as if not installed
    out = tmp_path / "runs"
    assert main(["experiment", "arqmath-task1", "--ray", "local", "--out", str(out),
                 "--quiet"]) == 2
    err = error_lines(capsys.readouterr().err)
    assert len(err) == 1 and err[0].startswith("error: --ray") and "pip install 'mathir[cluster]'" in err[0]
    assert not (out / ".index").exists()  # no index was built


def test_the_dagger_note_follows_marked_tables_and_sits_inside_latex(tmp_path, capsys):
    pipelines = tmp_path / "reversed.py"
    pipelines.write_text(REVERSED)
    argv = ["experiment", "arqmath-task1", "--pipelines", "bm25,reversed", "--pipelines-file",
            str(pipelines), "--out", str(tmp_path / "runs"), "--quiet"]
    assert main(argv + ["--format", "markdown"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert "†" in lines[3] and lines[3].startswith("| reversed")
    assert lines[4:] == ["", "† significantly different from bm25 (paired t-test, holm "
                             "correction, p < 0.05)"]
    assert main(argv + ["--format", "latex"]) == 0
    latex = capsys.readouterr().out.strip().splitlines()
    assert latex[-1] == r"\end{tabular}" and latex[-3] == r"\bottomrule"
    assert latex[-2].startswith(r"\multicolumn{5}{l}{\footnotesize $^\dagger$ significantly "
                                "different from bm25")


def test_json_stays_one_object(tmp_path, capsys):
    pipelines = tmp_path / "reversed.py"
    pipelines.write_text(REVERSED)
    assert main(["experiment", "arqmath-task1", "--pipelines-file", str(pipelines), "--out",
                 str(tmp_path / "runs"), "--format", "json", "--per-topic",
                 str(tmp_path / "pt.csv"), "--quiet"]) == 0
    table = json.loads(capsys.readouterr().out)
    assert list(table) == ["tfidf", "bm25", "reversed"]
    assert table["reversed"]["nDCG'"] == pytest.approx(0.5826, abs=1e-4)


def test_per_topic_scores_and_significance_as_csv(tmp_path, capsys):
    import pandas as pd

    out = tmp_path / "scores.csv"
    assert main(["experiment", "arqmath-task1", "--out", str(tmp_path / "runs"), "--format",
                 "json", "--per-topic", str(out), "--baseline", "bm25", "--quiet"]) == 0
    table = json.loads(capsys.readouterr().out)
    scores = pd.read_csv(out, dtype={"qid": str})
    assert list(scores.columns) == ["qid", "run", "nDCG'", "MAP'", "P'@10", "bpref"]
    assert len(scores) == 20 and set(scores["run"]) == {"tfidf", "bm25"}
    means = scores.groupby("run")["nDCG'"].mean()
    assert means["bm25"] == pytest.approx(table["bm25"]["nDCG'"], abs=1e-5)
    sig = pd.read_csv(tmp_path / "scores.significance.csv")
    assert list(sig.columns[:5]) == ["run", "measure", "baseline", "test", "correction"]
    row = sig[(sig["run"] == "tfidf") & (sig["measure"] == "nDCG'")].iloc[0]
    assert row["baseline"] == "bm25" and row["correction"] == "holm"
    assert row["delta"] == pytest.approx(means["tfidf"] - means["bm25"], abs=1e-5)
    assert 0 < row["p"] <= 1 and "significant" in sig.columns


def test_every_task_has_per_topic_scores():
    # one evaluation path: Task 3 was means only ("--per-topic: arqmath-task3 has no
    # per-topic scores"); tests/tasks/test_arqmath_task3.py writes its per-topic file
    from mathir.tasks import TASKS

    assert all(task.has_per_topic for task in TASKS.values())


def test_run_format_trec_is_written_recorded_and_scores_the_same(tmp_path, capsys):
    argv = ["experiment", "arqmath-task1", "--pipelines", "bm25", "--out", str(tmp_path),
            "--format", "json", "--quiet"]
    assert main(argv) == 0
    five = json.loads(capsys.readouterr().out)
    run = tmp_path / "arqmath-task1" / "sample" / "bm25.tsv"
    assert len(run.read_text().splitlines()[0].split("\t")) == 5
    assert main(argv + ["--run-format", "trec"]) == 0
    assert json.loads(capsys.readouterr().out) == five
    first = run.read_text().splitlines()[0].split("\t")
    assert len(first) == 6 and first[1] == "Q0"
    manifest = json.loads(run.with_name("bm25.manifest.json").read_text())
    assert manifest["format"] == "trec"


NOISY = '''
import logging
import warnings

import pyterrier as pt

import mathir


def noisy(index):
    """What a neural pipeline prints while it loads: progress bars, library warnings."""
    import tqdm
    from transformers.utils import logging as tlog

    for _ in tlog.tqdm(range(3), desc="Loading weights"):
        pass
    for _ in tqdm.tqdm(range(3), desc="Batches"):
        pass
    tlog.get_logger("transformers.modeling_utils").warning("Some weights were not used")
    # pyterrier's add_ranks calls DataFrame.drop(inplace=True): a pandas FutureWarning
    return mathir.bm25(index) >> pt.apply.generic(pt.model.add_ranks)


PIPELINES = {"noisy": noisy}
'''


@pytest.mark.parametrize("quiet", [False, True])
def test_quiet_silences_library_bars_and_warnings_not_ours(tmp_path, quiet):
    # Before, --quiet still showed "Loading weights" bars and pandas `inplace` warnings.
    # A library's deprecation notice about another library (pandas' about PyTerrier's
    # DataFrame.drop(inplace=True)) is never shown: it is not the user's to act on.
    (tmp_path / "noisy.py").write_text(NOISY)
    argv = [sys.executable, "-m", "mathir.cli", "experiment", "arqmath-task1", "--pipelines",
            "noisy", "--pipelines-file", "noisy.py", "--out", "runs", "--cross-encoder", "ce"]
    proc = subprocess.run(argv + (["--quiet"] if quiet else []), capture_output=True, text=True,
                          cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr
    noise = ["Loading weights", "Batches", "Some weights were not used"]
    assert [n for n in noise if n in proc.stderr] == ([] if quiet else noise)
    assert "inplace" not in proc.stderr and "deprecated" not in proc.stderr
    # mathir's own warnings stay
    assert "warning: cross_encoder: used by none of the pipelines run (noisy)" in proc.stderr


@pytest.mark.parametrize("command", [["experiment", "arqmath-task1", "--year", "2021"],
                                     ["run", "arqmath-task1", "--pipeline", "bm25", "--year",
                                      "2020", "--out", "r.tsv"],
                                     ["experiment", "arqmath-task2", "--year", "2022"]])
def test_a_year_without_data_is_an_error_not_the_sample(command, capsys, tmp_path, monkeypatch):
    # it evaluated the 10-topic sample and exited 0
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MATHIR_DATA", raising=False)
    assert main([*command, "--quiet"]) == 2
    err = error_lines(capsys.readouterr().err)
    assert len(err) == 1 and "needs the real files: give --data DIR" in err[0]
    assert "MATHIR_DATA" in err[0]


def test_the_cli_reads_mathir_data_as_the_library_does(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MATHIR_DATA", str(tmp_path / "nowhere"))
    assert main(["experiment", "arqmath-task1", "--year", "2021", "--quiet"]) == 2
    assert f"{tmp_path / 'nowhere'}: data directory not found" in capsys.readouterr().err
    # without a year, the sample (mathir demo and the quick start do not depend on it)
    assert main(["experiment", "arqmath-task1", "--quiet", "--pipelines", "bm25",
                 "--out", str(tmp_path / "o")]) == 0
