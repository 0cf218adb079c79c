import json
import subprocess
import sys

import pytest

from mathir.cli import main
from tests.conftest import real_path


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


@pytest.mark.parametrize("argv,msg", [
    (["evaluate", "arqmath-task1", "--qrels", "/no/qrels.tsv", "x.tsv"], "error: /no/qrels.tsv: file not found"),
    (["experiment", "no-such-task"], "error: unknown task 'no-such-task'"),
    (["experiment", "arqmath-task1", "--pipelines", "bm26"], "error: unknown pipeline 'bm26'"),
    (["experiment", "arqmath-task1", "--data", "/no/dir"], "error: /no/dir: data directory not found"),
])
def test_user_errors_print_one_line_and_exit_2(argv, msg, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv + ["--quiet"] if argv[0] == "experiment" else argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith(msg) and "Traceback" not in "\n".join(err)


def test_bad_run_file_via_console_script(tmp_path, sample):
    bad = tmp_path / "bad.tsv"
    bad.write_text("A.1 5 1 notanumber r\n")
    proc = subprocess.run([sys.executable, "-m", "mathir.cli", "evaluate", "arqmath-task1", "--qrels",
                           str(sample.task1_qrels), str(bad)], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"error: {bad}:1: score is not a number: 'notanumber'"


def test_evaluate_with_topics_refuses_unknown_topic(tmp_path, sample, capsys):
    run = tmp_path / "r.tsv"
    run.write_text("A.1\t1002\t1\t2.0\tr\nB.7\t1003\t1\t1.0\tr\n")
    argv = ["evaluate", "arqmath-task1", "--qrels", str(sample.task1_qrels), "--topics",
            str(sample.task1_topics), str(run)]
    assert main(argv) == 2
    assert capsys.readouterr().err.strip() == f"error: {run}:2: topic 'B.7' is not in the topics"


@pytest.mark.realdata
def test_cli_parity_mirmu(capsys):
    run = real_path("arqmath", "runs", "arqmath1", "prim_MIRMU-task1-Ensemble-auto-both-A.tsv")
    qrels = real_path("arqmath", "qrels", "task1", "qrel_task1_2020_official.tsv")
    assert main(["evaluate", "arqmath-task1", "--qrels", str(qrels), "--format", "json", str(run)]) == 0
    scores = json.loads(capsys.readouterr().out)["prim_MIRMU-task1-Ensemble-auto-both-A"]
    assert round(scores["nDCG'"], 3) == 0.238
    assert round(scores["MAP'"], 3) == 0.064 and round(scores["P'@10"], 3) == 0.139
