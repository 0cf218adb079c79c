"""The examples of docs/extending.md, run: a task declared in a package outside mathir,
installed with pip, goes through every path (``mathir tasks``, ``mathir experiment``,
``mathir evaluate``, ``pt.get_dataset``) with the figures of the same declaration run
in this process; a new measure is one declaration."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import re
import runpy
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import mathir
from mathir.errors import InputError
from mathir.tasks import Measure, get_task

DOC = Path(__file__).resolve().parents[1] / "docs" / "extending.md"
PACKAGE = ("ntcir12_wfb/__init__.py", "pyproject.toml")  # the plug-in package's files

# A tiny formula collection, three formula queries and their graded judgments (0-4),
# written for this test (not NTCIR's data).
FORMULAS = {
    "f1": r"x^2 + y^2 = z^2", "f2": r"a^2 + b^2 = c^2", "f3": r"\sin^2 x + \cos^2 x = 1",
    "f4": r"e^{i \pi} + 1 = 0", "f5": r"\int_0^1 x^2 dx", "f6": r"\frac{a}{b} + \frac{c}{d}",
    "f7": r"\sum_{n=1}^\infty \frac{1}{n^2}", "f8": r"x^2 - y^2", "f9": r"\sqrt{x^2 + y^2}",
    "f10": r"\cos x", "f11": r"\int x dx", "f12": r"\frac{1}{n}",
}
TOPICS = {"W.1": r"x^2 + y^2", "W.2": r"\int_0^1 x dx", "W.3": r"\frac{1}{n^2}"}
QRELS = [("W.1", "f1", 4), ("W.1", "f9", 3), ("W.1", "f2", 2), ("W.1", "f8", 1),
         ("W.1", "f10", 0), ("W.2", "f5", 3), ("W.2", "f11", 4), ("W.2", "f4", 0),
         ("W.3", "f7", 4), ("W.3", "f12", 2), ("W.3", "f6", 1)]


def doc_files() -> dict[str, str]:
    """The files docs/extending.md shows, by the name its ``<!-- file: NAME -->`` gives."""
    text = DOC.read_text()
    return dict(re.findall(r"<!-- file: (\S+) -->\n```\w*\n(.*?)```", text, re.S))


@pytest.fixture(scope="module")
def plugin(tmp_path_factory):
    """The example package, installed with pip into a folder, and its data."""
    root = tmp_path_factory.mktemp("plugin")
    source = root / "ntcir12-wfb"
    for name, text in doc_files().items():
        if name not in PACKAGE:
            continue
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        (source / name).write_text(text)
    site = root / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                    "--no-build-isolation", "--target", str(site), str(source)],
                   check=True, capture_output=True)
    data = root / "data"
    data.mkdir()
    (data / "wfb_formulas.tsv").write_text("".join(f"{k}\t{v}\n" for k, v in FORMULAS.items()))
    (data / "wfb_topics.tsv").write_text("".join(f"{k}\t{v}\n" for k, v in TOPICS.items()))
    (data / "wfb_qrels.txt").write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in QRELS))
    return site, data


def _mathir(site: Path, *args: str, cwd: Path) -> str:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [
        str(site), os.environ.get("PYTHONPATH", "")]))}
    done = subprocess.run([sys.executable, "-m", "mathir", *args], env=env, cwd=cwd,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _in_process_task(site: Path):
    """The same declaration, imported from the installed files (not registered)."""
    spec = importlib.util.spec_from_file_location(
        "ntcir12_wfb_here", site / "ntcir12_wfb" / "__init__.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.TASK


def test_the_doc_shows_the_module_its_pyproject_and_the_reranker():
    assert set(doc_files()) == {*PACKAGE, "reranker_example.py"}


def test_the_example_task_writes_its_year_and_each_file_name_once():
    # its years are its splits' labels: "2016" was written three times (years=, the
    # split's name and its label), and a task declaring only splits had no years
    module = doc_files()["ntcir12_wfb/__init__.py"]
    assert module.count("2016") == 1
    for name in ("wfb_formulas.tsv", "wfb_topics.tsv", "wfb_qrels.txt"):
        assert module.count(name) == 1, name


@pytest.mark.slow  # among the longest: left out of the quick loop (-m 'not slow')
def test_a_plugin_task_runs_through_every_path_with_the_figures_of_its_declaration(
        plugin, tmp_path):
    site, data = plugin
    listed = json.loads(_mathir(site, "tasks", "--format", "json", cwd=tmp_path))
    assert listed["ntcir12-wfb"]["measures"] == {
        "P(rel=3)@5": "precision at 5, relevant: grade >= 3",
        "P@5~": "precision at 5, partially relevant: grade >= 1",
        "nDCG@10": "nDCG at 10 on the grades 0-4", "Exact@1": "the top formula is graded 4"}
    assert "ntcir12-wfb" in _mathir(site, "tasks", cwd=tmp_path)

    out = tmp_path / "runs"
    cli = json.loads(_mathir(site, "experiment", "ntcir12-wfb", "--data", str(data), "--year",
                             "2016", "--out", str(out), "--format", "json", "--quiet",
                             cwd=tmp_path))["tfidf"]
    # its default year, the last of its splits': --data alone
    default = json.loads(_mathir(site, "experiment", "ntcir12-wfb", "--data", str(data), "--out",
                                 str(tmp_path / "default"), "--format", "json", "--quiet",
                                 cwd=tmp_path))["tfidf"]
    assert (tmp_path / "default" / "ntcir12-wfb" / "2016" / "tfidf.tsv").is_file()
    run_file = out / "ntcir12-wfb" / "2016" / "tfidf.tsv"
    assert len(run_file.read_text().split("\n")[0].split()) == 6  # its own format: TREC
    evaluated = json.loads(_mathir(site, "evaluate", "ntcir12-wfb", "--qrels",
                                   str(data / "wfb_qrels.txt"), str(run_file), "--format",
                                   "json", cwd=tmp_path))["tfidf"]

    task = _in_process_task(site)
    here = mathir.run_experiment(task, task.data(data, "2016"), ["tfidf"],
                                 out=tmp_path / "here", quiet=True).table
    assert list(here.columns) == ["P(rel=3)@5", "P@5~", "nDCG@10", "Exact@1"]
    figures = here.loc["tfidf"].to_dict()
    assert figures["P(rel=3)@5"] > 0 and figures["Exact@1"] > 0  # the data is not trivial
    for measure, value in figures.items():
        assert cli[measure] == pytest.approx(value, abs=1e-4), measure
        assert evaluated[measure] == pytest.approx(value, abs=1e-4), measure
        assert default[measure] == pytest.approx(value, abs=1e-4), measure

    # the mathir: dataset of the plug-in, through PyTerrier, in a process that has it
    script = (
        "import json, pyterrier as pt\n"
        f"ds = pt.get_dataset('mathir:ntcir12/wfb/2016', data={str(data)!r})\n"
        "res = ds.task().pipeline('tfidf', ds.get_index()).transform(ds.get_topics())\n"
        "t = pt.Experiment([res], ds.get_topics(), ds.get_qrels(), ds.get_measures(),"
        " names=['tfidf'])\n"
        "print(json.dumps({'pt': t.iloc[0].drop('name').to_dict(),"
        " 'ds': ds.evaluate({'tfidf': res}).loc['tfidf'].to_dict()}))\n")
    env = {**os.environ, "PYTHONPATH": str(site)}
    done = subprocess.run([sys.executable, "-c", script], env=env, cwd=tmp_path,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    through = json.loads(done.stdout.strip().splitlines()[-1])
    for measure, value in figures.items():
        assert through["ds"][measure] == pytest.approx(value, abs=1e-9), measure
    for m in task.measures:
        assert through["pt"][str(m.resolve())] == pytest.approx(figures[m.name], abs=1e-9)


def test_a_missing_file_names_what_the_declaration_needs(plugin, tmp_path):
    site, data = plugin
    env = {**os.environ, "PYTHONPATH": str(site)}
    done = subprocess.run([sys.executable, "-m", "mathir", "experiment", "ntcir12-wfb",
                           "--data", str(tmp_path), "--year", "2016"], env=env, cwd=tmp_path,
                          capture_output=True, text=True)
    assert done.returncode != 0 and "wfb_" in done.stderr and "Traceback" not in done.stderr


def test_a_new_measure_is_one_declaration(tmp_path):
    task1 = get_task("arqmath-task1")
    p5 = Measure("P'@5", "precision at 5 over judged answers", "P(rel=2,judged_only=True)@5")
    with_p5 = dataclasses.replace(task1, name="arqmath-task1-p5",
                                  measures=(*task1.measures, p5))
    res = mathir.run_experiment(with_p5, pipelines=["bm25"], out=tmp_path, quiet=True)
    assert list(res.table.columns) == [*task1.measure_names, "P'@5"]
    assert list(res.per_topic["bm25"].columns) == ["qid", *task1.measure_names, "P'@5"]
    assert 0 < res.table.loc["bm25", "P'@5"] <= 1


def test_a_column_that_is_not_declared_is_an_error():
    task1 = get_task("arqmath-task1")
    scores = {"r": pd.DataFrame({"qid": ["A.1"], "nDCG'": [0.5], "P@3": [0.1]})}
    broken = dataclasses.replace(task1, name="broken", per_topic=lambda runs, qrels: scores)
    run = pd.DataFrame({"qid": ["A.1"], "docno": ["d"], "score": [1.0]})
    qrels = pd.DataFrame({"qid": ["A.1"], "docno": ["d"], "label": [1]})
    with pytest.raises(ValueError, match=r"\['P@3'\], which are not among its declared"):
        broken.table({"r": run}, qrels)
    with pytest.raises(InputError, match="no qrels"):
        broken.table({"r": run}, None)


def test_the_reranker_example_returns_a_ranked_frame(tmp_path, monkeypatch, capsys):
    """The "new reranker" example of docs/extending.md runs as written and ranks BM25's top
answers by its own scorer."""
    monkeypatch.chdir(tmp_path)
    snippet = tmp_path / "reranker_example.py"
    snippet.write_text(doc_files()["reranker_example.py"])
    namespace = runpy.run_path(str(snippet), run_name="__main__")
    results = namespace["results"]
    assert {"qid", "query", "docno", "score", "rank"} <= set(results.columns)
    assert not {"text", "title", "query_0"} & set(results.columns)
    for _, one in results.groupby("qid"):
        assert len(one) == 20
        ranked = one.sort_values("rank")
        assert ranked["rank"].tolist() == list(range(20))
        assert ranked["score"].is_monotonic_decreasing
        # the scores are the word overlap of the answer's text, not BM25's
        assert ranked["score"].between(0, 1).all()
    index = namespace["index"]
    first = results.iloc[0]
    texts = namespace["mathir"].text_store(index).fetch([first["docno"]])[first["docno"]]
    row = {"query": first["query"], "title": texts[0], "text": texts[1]}
    assert first["score"] == namespace["word_overlap"](row)
    table = namespace["res"].table
    assert list(table.index) == ["bm25", "overlap"]
    out = capsys.readouterr().out
    assert "overlap" in out and "nDCG'" in out
