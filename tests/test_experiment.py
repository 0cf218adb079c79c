"""mathir experiment: significance, provenance and reuse, HTML reports, parallel topics."""

import dataclasses
import json
import shutil

from mathir.cli import main
from mathir.tasks import get_task, run_experiment


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
    assert "PisaBM25(" in manifest["pipeline"] and "k1=1.2" in manifest["pipeline"]
    assert manifest["topics"]["sha256"] and manifest["index"]
    again = run_experiment("arqmath-task1", out=tmp_path, quiet=True)
    assert again.reused == ["tfidf", "bm25"]
    assert again.table.equals(first.table)
    # a changed topic file invalidates both runs
    topics = tmp_path / "topics.xml"
    shutil.copy(sample.task1_topics, topics)
    topics.write_text(topics.read_text().replace("</Topics>", "</Topics>\n"))
    data = dataclasses.replace(get_task("arqmath-task1").data(), topics=topics)
    assert run_experiment("arqmath-task1", data, out=tmp_path, quiet=True).reused == []
    assert run_experiment("arqmath-task1", data, out=tmp_path, quiet=True, reuse=False).reused == []


def test_parallel_workers_give_the_same_table(tmp_path):
    one = run_experiment("arqmath-task1", out=tmp_path / "a", quiet=True)
    two = run_experiment("arqmath-task1", out=tmp_path / "b", quiet=True, workers=2)
    assert two.table.equals(one.table)
    for name in ("tfidf", "bm25"):
        assert one.runs[name].read_text() == two.runs[name].read_text()


def test_cli_html_report_and_marked_table(tmp_path, capsys):
    assert main(["experiment", "arqmath-task1", "--out", str(tmp_path), "--quiet", "--format", "html",
                 "--baseline", "bm25", "--test", "wilcoxon"]) == 0
    report = tmp_path / "arqmath-task1" / "sample" / "report.html"
    assert capsys.readouterr().out.strip() == str(report)
    page = report.read_text(encoding="utf-8")
    assert page.count("data:image/png;base64,") >= 1 and "bm25 (baseline)" in page
    assert main(["experiment", "arqmath-task1", "--out", str(tmp_path), "--quiet",
                 "--format", "markdown"]) == 0
    out = capsys.readouterr().out
    assert "| tfidf" in out and "significantly different from tfidf" in out


def test_worldtree_report_embeds_the_length_histogram(tmp_path):
    from mathir.tasks import write_experiment_report

    res = run_experiment("worldtree", out=tmp_path, quiet=True, pipelines=["tfidf", "bm25"])
    page = write_experiment_report(res).read_text(encoding="utf-8")
    assert page.count("data:image/png;base64,") >= 2  # per-topic chart + MAP by length
