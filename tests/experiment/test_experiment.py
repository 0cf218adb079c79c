"""mathir experiment: significance, provenance and reuse, HTML reports, parallel topics."""

import dataclasses
import json
import shutil

import pytest

from mathir.cli import main
from mathir.experiment import run_experiment
from mathir.tasks import get_task
from tests.conftest import error_lines


def test_significance_against_the_chosen_baseline(tmp_path):
    res = run_experiment("arqmath-task1", out=tmp_path, quiet=True, baseline="bm25")
    assert res.baseline == "bm25"
    sig = res.significance
    assert set(sig.index.get_level_values("system")) == {"tfidf", "bm25"}
    assert not sig.loc[("bm25", "nDCG'"), "significant"] and sig.loc[("bm25", "nDCG'"), "p"] == 1.0
    assert set(res.per_topic["bm25"].qid) == {f"A.{i}" for i in range(1, 11)}


def test_runs_are_reused_only_while_their_manifest_matches(tmp_path, sample):
    first = run_experiment("arqmath-task1", out=tmp_path, quiet=True)
    assert first.reused == []
    manifest = json.loads((tmp_path / "arqmath-task1" / "sample" / "bm25.manifest.json").read_text())
    # the identity is declared: factory, arguments, code; the repr only describes
    assert manifest["pipeline"] == {"name": "bm25", "factory": "mathir.pipelines.lexical:bm25",
                                    "kwargs": {}, "code": manifest["pipeline"]["code"]}
    assert "PisaBM25(" in manifest["description"] and "k1=1.2" in manifest["description"]
    assert manifest["topics"]["sha256"] and manifest["index"] and manifest["source"]["mathir"]
    again = run_experiment("arqmath-task1", out=tmp_path, quiet=True)
    assert again.reused == ["tfidf", "bm25"] and again.recomputed == {}
    assert again.table.equals(first.table)
    # a changed topic file invalidates both runs
    topics = tmp_path / "topics.xml"
    shutil.copy(sample.task1_topics, topics)
    topics.write_text(topics.read_text().replace("</Topics>", "</Topics>\n"))
    data = dataclasses.replace(get_task("arqmath-task1").data(), topics=topics)
    changed = run_experiment("arqmath-task1", data, out=tmp_path, quiet=True)
    assert changed.reused == [] and set(changed.recomputed.values()) == {"the topics changed"}
    off = run_experiment("arqmath-task1", data, out=tmp_path, quiet=True, reuse=False)
    assert off.reused == [] and set(off.recomputed.values()) == {"reuse turned off"}


@pytest.mark.slow
def test_parallel_workers_give_the_same_table(tmp_path):
    one = run_experiment("arqmath-task1", out=tmp_path / "a", quiet=True)
    two = run_experiment("arqmath-task1", out=tmp_path / "b", quiet=True, workers=2)
    assert two.table.equals(one.table)
    for name in ("tfidf", "bm25"):
        assert one.runs[name].read_text() == two.runs[name].read_text()


def test_cli_html_report_prints_the_table_and_the_path(tmp_path, capsys):
    # Before: only the path was printed.
    assert main(["experiment", "arqmath-task1", "--out", str(tmp_path), "--quiet", "--format", "html",
                 "--baseline", "bm25", "--test", "wilcoxon"]) == 0
    report = tmp_path / "arqmath-task1" / "sample" / "report.html"
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].split() == ["run", "nDCG'", "MAP'", "P'@10", "bpref"]
    assert lines[2].split()[:2] == ["tfidf", "0.9344"] and lines[3].split()[:2] == ["bm25", "0.9336"]
    assert lines[-1] == str(report)
    page = report.read_text(encoding="utf-8")
    assert page.count("data:image/png;base64,") >= 1 and ">bm25</bdi> (baseline)" in page


def test_no_dagger_footnote_without_a_dagger(tmp_path, capsys):
    # Before: "† significantly different ..." followed every table with significance tests,
    # also when no value was marked (tfidf and bm25 do not differ on the sample).
    for fmt in ("markdown", "table", "latex", "html"):
        assert main(["experiment", "arqmath-task1", "--out", str(tmp_path), "--quiet",
                     "--format", fmt]) == 0
        out = capsys.readouterr().out
        assert "tfidf" in out and "†" not in out and "\\dagger" not in out
        assert "significantly different" not in out


def test_worldtree_report_embeds_the_length_histogram(tmp_path):
    from mathir.experiment import write_experiment_report

    res = run_experiment("worldtree", out=tmp_path, quiet=True, pipelines=["tfidf", "bm25"])
    page = write_experiment_report(res).read_text(encoding="utf-8")
    assert page.count("data:image/png;base64,") >= 2  # per-topic chart + MAP by length


def test_a_run_of_a_changed_collection_is_not_reused(tmp_path):
    # Word problems have no index manifest to notice a collection edited in place: the
    # run manifest's data fingerprint must (before, the stale runs were reused).
    from mathir.samples import word_problems_sample

    sample = word_problems_sample()
    problems = json.loads(sample.problems.read_text(encoding="utf-8"))
    train = set(sample.split("train").read_text().split())
    # Every training problem becomes a copy of the first (under its own id): as many
    # problems as before, so the pipelines' descriptions do not change, but one template.
    first_train = next(p for p in problems if str(p["iIndex"]) in train)
    edited = [{**first_train, "iIndex": p["iIndex"]} if str(p["iIndex"]) in train else p
              for p in problems]
    collection = tmp_path / "data" / "draw.json"
    collection.parent.mkdir()
    shutil.copy(sample.problems, collection)
    task = get_task("word-problems")
    data = task.data(collection=collection)
    first = run_experiment(task, data, out=tmp_path / "runs", quiet=True)
    collection.write_text(json.dumps(edited), encoding="utf-8")  # edited in place
    alone = run_experiment(task, data, out=tmp_path / "alone", quiet=True)
    assert not alone.table.equals(first.table)  # the edited collection scores otherwise
    second = run_experiment(task, data, out=tmp_path / "runs", quiet=True)
    assert second.reused == [] and second.table.equals(alone.table)
    assert json.loads((tmp_path / "runs" / "word-problems" / "sample" /
                       "nearest-template.manifest.json").read_text())["data"]["collection"]


def test_unknown_correction_is_refused_before_any_work(tmp_path, capsys):
    # Before: the whole experiment ran (index, runs), then statsmodels raised a traceback.
    from mathir.cli import main

    out = tmp_path / "runs"
    assert main(["experiment", "arqmath-task1", "--correction", "bonferoni", "--out", str(out),
                 "--quiet"]) == 2
    err = error_lines(capsys.readouterr().err)
    assert err == ["error: unknown correction 'bonferoni'; expected one of bonferroni, sidak, "
                   "holm-sidak, holm, simes-hochberg, hommel, fdr_bh, fdr_by, fdr_tsbh, fdr_tsbky"]
    assert not (out / ".index").exists() and not (out / "arqmath-task1").exists()


@pytest.mark.parametrize("command", ["experiment", "run"])
def test_a_run_format_the_task_cannot_write_is_refused_before_any_work(tmp_path, capsys, command):
    # Before: Task 2 pipelines ran in full, then writing the first run failed.
    from mathir.cli import main

    out = tmp_path / "runs"
    args = (["experiment", "arqmath-task2", "--out", str(out)] if command == "experiment" else
            ["run", "arqmath-task2", "--pipeline", "formula-tuples", "--out", str(out / "r.tsv")])
    assert main([*args, "--run-format", "trec", "--quiet"]) == 2
    assert error_lines(capsys.readouterr().err) == [
        "error: arqmath-task2 writes run files as arqmath, not 'trec'"]
    assert not out.exists() or not any(out.rglob("*"))


def test_declared_run_formats_are_the_ones_write_run_takes(tmp_path):
    import pandas as pd

    from mathir.tasks import TASKS

    for task in TASKS.values():
        for fmt in task.run_formats:  # every declared format is written without error
            frame = pd.DataFrame({"qid": ["1"], "docno": ["7"], "score": [1.0], "post_id": ["7"],
                                  "answer": ["a"], "sources": ["7"], "solution": ["[1.0]"],
                                  "template": ["[]"], "alignment": ["{}"], "equations": ["[]"]})
            assert task.write_run(frame, tmp_path / f"{task.name}-{fmt}.tsv", format=fmt).exists()


def _bm25_run(out):
    return out / "arqmath-task1" / "sample" / "bm25.tsv"


def test_a_changed_run_file_is_recomputed_not_reused(tmp_path):
    # the manifest did not fingerprint the run file: a run cut to 100 lines was reused
    # ("reused: manifest matches", nDCG' 0.0923 instead of 0.9336)
    first = run_experiment("arqmath-task1", out=tmp_path, quiet=True, pipelines=["bm25"])
    run = _bm25_run(tmp_path)
    manifest = json.loads(run.with_name("bm25.manifest.json").read_text())
    assert manifest["run_file"]["bytes"] == run.stat().st_size
    lines = run.read_text().splitlines(keepends=True)
    run.write_text("".join(lines[:100]))
    again = run_experiment("arqmath-task1", out=tmp_path, quiet=True, pipelines=["bm25"])
    assert again.reused == [] and "not the one its manifest recorded" in again.recomputed["bm25"]
    assert again.table.equals(first.table)


def test_a_run_cut_mid_line_is_recomputed_every_time_not_an_error(tmp_path):
    first = run_experiment("arqmath-task1", out=tmp_path, quiet=True, pipelines=["bm25"])
    run = _bm25_run(tmp_path)
    run.write_bytes(run.read_bytes()[:777])  # a half-written file
    for _ in range(2):
        again = run_experiment("arqmath-task1", out=tmp_path, quiet=True, pipelines=["bm25"])
        assert again.table.equals(first.table)
    assert again.reused == ["bm25"]  # the second time, the recomputed file is reused


def test_mathir_run_over_an_experiment_run_is_not_taken_for_it(tmp_path, capsys):
    # `mathir run --pipeline tfidf --out .../bm25.tsv` left bm25's manifest beside
    # tfidf's run: the experiment then printed tfidf's scores as bm25's
    first = run_experiment("arqmath-task1", out=tmp_path, quiet=True)
    run = _bm25_run(tmp_path)
    main(["run", "arqmath-task1", "--pipeline", "tfidf", "--out", str(run), "--quiet"])
    manifest = json.loads(run.with_name("bm25.manifest.json").read_text())
    assert manifest["pipeline"]["name"] == "tfidf"  # mathir run wrote its own manifest
    again = run_experiment("arqmath-task1", out=tmp_path, quiet=True)
    assert again.reused == ["tfidf"] and "bm25" in again.recomputed
    assert again.table.equals(first.table)


def test_the_report_breaks_task1_down_by_the_topic_groups_it_declares(tmp_path):
    # the report knows no task's files: Task 1 declares its topic groups (category,
    # difficulty, dependency of the topic information file), the report draws them
    import dataclasses

    from mathir.experiment import write_experiment_report
    from mathir.tasks import get_task

    task = get_task("arqmath-task1")
    data = task.data()
    topics = task.read_topics(data.topics)["qid"]
    meta = tmp_path / "Task1_ARQMath3_Topic_Information.csv"
    meta.write_text("Topic,Category,Difficulty,Dependency\n" + "".join(
        f"{q},{'Proof' if i % 2 else 'Concept'},Low,Both\n" for i, q in enumerate(topics)))
    res = run_experiment(task, dataclasses.replace(data, metadata=meta), ["tfidf", "bm25"],
                         out=tmp_path / "runs", quiet=True)
    page = write_experiment_report(res).read_text()
    for column in ("category", "difficulty", "dependency"):
        assert f"alt='nDCG&#x27; by topic {column}'" in page
