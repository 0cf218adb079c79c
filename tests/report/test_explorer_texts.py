"""The report reads the index, never a collection file (issue 51): the ARQMath explorer's
answer texts come from the answer index's text store, the same texts the collection holds."""

from __future__ import annotations

import pytest

from mathir.experiment import experiment_explorer, run_experiment, view_run_files
from mathir.indexing.answer_collection import AnswerCollection, answer_texts
from mathir.indexing.text_store import AnswerTexts
from mathir.report.explorer_views import Lookups, build_explorer
from mathir.tasks import get_task

TASK1 = get_task("arqmath-task1")


@pytest.fixture(scope="module")
def experiment(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("texts")
    res = run_experiment(TASK1, out=tmp / "runs", pipelines=["bm25", "tfidf"], quiet=True,
                         index_dir=tmp / "index")
    AnswerTexts.for_index(res.index)  # built once, as the first page asks for it
    return res


def _no_collection_reads(monkeypatch):
    def parsed(self):
        raise AssertionError(f"the report parsed the collection again: {self.path}")

    monkeypatch.setattr(AnswerCollection, "iter_posts", parsed)


def test_the_task1_explorer_reads_answers_from_the_text_store(experiment, monkeypatch):
    # Before: the page parsed every post of the collection again for the answers' texts
    # (7.2 s for the 3,395 thread files of ARQMath's judged pool; 0.06 s from the store).
    res = experiment
    docnos = set(res.index.docnos())
    expected = answer_texts(res.data.collection, docnos)  # the collection's own texts
    assert len(expected) == 250
    _no_collection_reads(monkeypatch)
    ex, _ = experiment_explorer(res)
    same, _ = build_explorer(
        res.evaluation, res.topics, res.data, baseline=res.baseline,
        primary=res.evaluation.primary, depth=20,
        lookups=Lookups(texts=lambda ds: {d: expected[d] for d in ds if d in expected}))
    assert [t.snippets for t in ex.topics] == [t.snippets for t in same.topics]
    snippets = [s for t in ex.topics for s in t.snippets.values()]
    assert len(snippets) > 100
    assert not [s for s in snippets if "not in the collection" in s]


def test_view_reads_answers_from_the_index_it_judged_on(experiment, monkeypatch, tmp_path):
    # ``mathir view`` judges on the collection's index and hands it to the page
    res = experiment
    first = view_run_files(TASK1, res.runs.values(), res.data, tmp_path / "first.html",
                           given=True).files["report"].read_text(encoding="utf-8")
    _no_collection_reads(monkeypatch)
    scored = view_run_files(TASK1, res.runs.values(), res.data, tmp_path / "again.html",
                            given=True)
    assert scored.index is not None
    page = scored.files["report"].read_text(encoding="utf-8")
    assert page == first and "not in the collection" not in page


@pytest.mark.slow  # two `mathir view` processes
def test_the_page_is_the_same_in_every_process(experiment, tmp_path):
    # The answers' snippets were written in the order of a set of docnos, which differs
    # between processes (string hashing): two views of the same runs differed in bytes.
    import os
    import subprocess
    import sys

    pages = []
    for seed in ("1", "2"):
        out = tmp_path / f"seed{seed}.html"
        subprocess.run([sys.executable, "-m", "mathir", "view", "--task", "arqmath-task1",
                        "--quiet", "--out", str(out), *map(str, experiment.runs.values())],
                       check=True, env={**os.environ, "PYTHONHASHSEED": seed})
        pages.append(out.read_bytes())
    assert pages[0] == pages[1]
