"""The researcher's choices: measures, qrels variants, pipelines files, mistakes answered
in mathir's words, defaults said out loud."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings

import ir_measures
import pandas as pd
import pytest

import mathir
from mathir.cli import main
from mathir.errors import InputError
from mathir.tasks import get_task
from tests.conftest import error_lines, real_path

MEASURES = "nDCG(judged_only=True)@10,R(rel=2)@1000"


def _ir_measures(run_path, qrels_path) -> dict:
    """ir_measures' own figures for a written Task 1 run (every qrels topic answered)."""
    task = get_task("arqmath-task1")
    run, qrels = task.read_run(run_path), task.read_qrels(qrels_path)
    measures = [ir_measures.parse_measure(m) for m in MEASURES.split(",")]
    got = ir_measures.calc_aggregate(
        measures, pd.DataFrame({"query_id": qrels.qid, "doc_id": qrels.docno,
                                "relevance": qrels.label}),
        pd.DataFrame({"query_id": run.qid, "doc_id": run.docno, "score": run.score}))
    return {str(m): v for m, v in got.items()}


def test_measures_on_experiment_and_evaluate_are_ir_measures_own(tmp_path, capsys):
    assert main(["experiment", "arqmath-task1", "--pipelines", "bm25", "--quiet", "--measures",
                 MEASURES, "--format", "json", "--out", str(tmp_path)]) == 0
    table = json.loads(capsys.readouterr().out)["bm25"]
    run = tmp_path / "arqmath-task1" / "sample" / "bm25.tsv"
    qrels = mathir.arqmath_sample().task1_qrels
    expected = _ir_measures(run, qrels)
    assert list(table) == MEASURES.split(",")
    assert table == pytest.approx(expected, abs=1e-12)
    assert main(["evaluate", "arqmath-task1", "--qrels", str(qrels), "--measures", MEASURES,
                 "--format", "json", str(run)]) == 0
    assert json.loads(capsys.readouterr().out)["bm25"] == pytest.approx(expected, abs=1e-12)


def test_measures_beside_the_tasks_go_through_every_view(tmp_path):
    res = mathir.run_experiment("arqmath-task1", pipelines=["bm25", "tfidf"], quiet=True,
                                out=tmp_path, measures="+R@1000")
    assert list(res.table.columns) == ["nDCG'", "MAP'", "P'@10", "bpref", "R@1000"]
    assert "R@1000" in res.per_topic["bm25"].columns
    assert ("tfidf", "R@1000") in res.significance.index
    from mathir.experiment import write_experiment_report, write_per_topic

    per_topic, _ = write_per_topic(res, tmp_path / "pt.csv")
    assert "R@1000" in per_topic.read_text().splitlines()[0]
    assert "R@1000" in write_experiment_report(res).read_text(encoding="utf-8")


def test_task2_measures_are_taken_on_visual_ids(tmp_path):
    """A measure that needs the task's step gets it (formulas -> visual ids)."""
    res = mathir.run_experiment("arqmath-task2", pipelines=["formula-words"], quiet=True,
                                out=tmp_path, measures="+nDCG(judged_only=True)")
    assert res.table.loc["formula-words", "nDCG(judged_only=True)"] == \
        res.table.loc["formula-words", "nDCG'"]


def test_a_measure_that_is_not_one_is_one_error_line(tmp_path, capsys):
    assert main(["experiment", "arqmath-task1", "--measures", "nDGC@10", "--out",
                 str(tmp_path)]) == 2
    err = error_lines(capsys.readouterr().err)
    assert err == ["error: measure 'nDGC@10' is not an ir_measures measure (measure not "
                   "found: nDGC); e.g. nDCG@10, AP(rel=2), P(judged_only=True)@5, R@1000"]
    assert not (tmp_path / "arqmath-task1").exists()  # refused before any work
    with pytest.raises(InputError, match="not rankings"):
        mathir.run_experiment("word-problems", out=tmp_path, quiet=True, measures="P@1")


@pytest.mark.realdata
def test_qrels_all_on_2021_gives_another_table(tmp_path, capsys):
    data = real_path("arqmath")
    threads = real_path("arqmath", "collection_sample", "threads_all")
    tables = {}
    for qrels in (None, "all"):
        argv = ["experiment", "arqmath-task1", "--data", str(data), "--year", "2021",
                "--collection", str(threads), "--pipelines", "bm25", "--quiet", "--format",
                "json", "--out", str(tmp_path)]
        assert main(argv + (["--qrels", qrels] if qrels else [])) == 0
        tables[qrels] = json.loads(capsys.readouterr().out)["bm25"]
    assert tables["all"]["nDCG'"] != tables[None]["nDCG'"]
    from mathir.datasets import dataset

    ds = dataset("arqmath/task1/2021", data=str(data), collection=str(threads))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert len(ds.get_qrels("all")) > len(ds.get_qrels())


def test_qrels_variants_are_listed_and_checked(tmp_path, capsys):
    assert main(["tasks", "--format", "json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert set(listed["arqmath-task1"]["qrels_variants"]) == {"all", "additional"}
    assert main(["experiment", "arqmath-task1", "--qrels", "alll", "--out",
                 str(tmp_path)]) == 2
    assert "neither a qrels variant of arqmath-task1 (its variants: official, all, additional)" in \
        capsys.readouterr().err
    assert main(["experiment", "arqmath-task1", "--qrels", "all", "--out", str(tmp_path)]) == 2
    assert "is a published file: give the data folder" in capsys.readouterr().err


def test_a_pipelines_file_imports_the_module_beside_it(tmp_path, capsys):
    (tmp_path / "helper.py").write_text("from mathir.pipelines.lexical import bm25\n"
                                        "def make(index):\n    return bm25(index)\n")
    pipes = tmp_path / "pipes.py"
    pipes.write_text("from helper import make\nPIPELINES = {'mine': make}\n")
    assert main(["experiment", "arqmath-task1", "--pipelines-file", str(pipes), "--pipelines",
                 "mine", "--quiet", "--format", "json", "--out", str(tmp_path / "runs")]) == 0
    assert "mine" in json.loads(capsys.readouterr().out)
    assert str(tmp_path) not in sys.path  # on the import path only while it loads


def test_get_dataset_mistakes_are_mathirs_words():
    import pyterrier as pt

    with pytest.raises(InputError, match=r"takes the keywords data= and collection=, not "
                                         r"colection=; did you mean collection="):
        pt.get_dataset("mathir:arqmath/task1/2022", data="/tmp", colection="x")
    with pytest.raises(InputError, match=r"did you mean arqmath/task1/2022"):
        pt.get_dataset("mathir:arqmath/task1/2023")


def test_messages_speak_the_callers_language(tmp_path, capsys):
    """collection= in Python, --collection on the command line."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "Topics_Task1_2022.xml").write_text("<Topics/>")
    (data / "qrel_task1_2022_official.tsv").write_text("A.301\t0\t1\t2\n")
    with pytest.raises(InputError, match=r"pass collection=$"):
        get_task("arqmath-task1").data(data, "2022")
    assert main(["index", "arqmath-task1", "--data", str(data), "--year", "2022",
                 "--index", str(tmp_path / "i")]) == 2
    assert "pass --collection PATH" in capsys.readouterr().err


def test_an_exception_in_ones_pipeline_names_the_pipeline_and_topics(tmp_path, capsys):
    pipes = tmp_path / "pipes.py"
    pipes.write_text("import pyterrier as pt\n"
                     "def broken(df):\n    raise ValueError('my bug')\n"
                     "PIPELINES = {'broken': lambda index: pt.apply.generic(broken)}\n")
    assert main(["experiment", "arqmath-task1", "--pipelines-file", str(pipes), "--pipelines",
                 "broken", "--quiet", "--out", str(tmp_path / "runs")]) == 2
    err = [line for line in error_lines(capsys.readouterr().err)
           if not line.startswith("note: ")]
    assert len(err) == 1
    assert err[0].startswith("error: pipeline 'broken' (")
    assert "failed on 10 topics (A.1 .. A.9)" in err[0] or "failed on 10 topics" in err[0]
    assert f"at {pipes}:3 in broken: ValueError: my bug" in err[0]


@pytest.mark.parametrize("workers", ["0", "-1"])
def test_workers_must_be_at_least_one(workers, tmp_path, capsys):
    assert main(["experiment", "arqmath-task1", "--workers", workers, "--out",
                 str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip() == f"error: --workers must be at least 1, not {workers}"
    with pytest.raises(InputError, match="^workers must be at least 1"):
        mathir.run_experiment("arqmath-task1", out=tmp_path, workers=int(workers))


def test_missing_output_folders_are_said(tmp_path, capsys):
    per_topic = tmp_path / "new" / "deeper" / "pt.csv"
    assert main(["experiment", "arqmath-task1", "--pipelines", "bm25", "--quiet",
                 "--per-topic", str(per_topic), "--out", str(tmp_path / "runs")]) == 0
    assert f"note: created the folder {tmp_path / 'new'} for the --per-topic file" in \
        capsys.readouterr().err
    assert per_topic.exists()


def test_a_misspelt_pipeline_gets_did_you_mean(tmp_path, capsys):
    assert main(["experiment", "arqmath-task1", "--pipelines", "bm2", "--out",
                 str(tmp_path)]) == 2
    assert "unknown pipeline 'bm2'; did you mean 'bm25'?" in capsys.readouterr().err


def test_defaults_are_said_on_the_first_stderr_line(tmp_path):
    done = subprocess.run([sys.executable, "-m", "mathir", "experiment", "arqmath-task1",
                           "--pipelines", "bm25", "--quiet", "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=600,
                          env={**__import__("os").environ, "MATHIR_DATA": ""})
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[0].startswith(
        "note: no --data: arqmath-task1 on its embedded sample (10 topics")


@pytest.mark.realdata
def test_the_default_year_is_said(tmp_path):
    data = real_path("arqmath")
    threads = real_path("arqmath", "collection_sample", "threads_all")
    done = subprocess.run([sys.executable, "-m", "mathir", "index", "arqmath-task1", "--data",
                           str(data), "--collection", str(threads), "--quiet"],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[0] == "note: no --year: 2022, the default (--year chooses)"
