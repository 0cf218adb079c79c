"""A run is reused only while everything that determines it is unchanged.

Before: reuse compared the pipeline's ``repr``, which does not show the code of a
``pt.apply`` function, so an edited user pipeline silently reused the old run (nDCG'
0.9336 printed where 0.5826 is right).
"""

import functools
import json
import threading

import pyterrier as pt
import pytest

import mathir
from mathir.experiment import identity as provenance
from mathir.experiment import run_experiment
from mathir.tasks import get_task


def _ndcg(res, name):
    return float(res.table.loc[name, "nDCG'"])


@pytest.fixture
def index_dir(sample_index):
    return sample_index.path


def test_an_edited_lambda_registered_in_the_task_is_recomputed(tmp_path, index_dir, monkeypatch):
    # The only way in before: a lambda put into the task's pipelines. Fails on the old
    # code (`reused: ['mine']`, nDCG' 0.9336 twice).
    task = get_task("arqmath-task1")
    monkeypatch.setitem(task.pipelines, "mine",
                        lambda index, **kw: mathir.bm25(index) >> pt.apply.doc_score(
                            lambda r: r.score))
    first = run_experiment(task, pipelines=["mine"], out=tmp_path, index_dir=index_dir,
                           quiet=True)
    monkeypatch.setitem(task.pipelines, "mine",
                        lambda index, **kw: mathir.bm25(index) >> pt.apply.doc_score(
                            lambda r: -r.score))
    edited = run_experiment(task, pipelines=["mine"], out=tmp_path, index_dir=index_dir,
                            quiet=True)
    assert edited.reused == [] and edited.recomputed == {"mine": "the pipeline's code changed"}
    assert _ndcg(first, "mine") == pytest.approx(0.9336, abs=1e-4)
    assert _ndcg(edited, "mine") == pytest.approx(0.5826, abs=1e-4)


def test_an_edited_lambda_recomputes_and_an_unchanged_rerun_reuses(tmp_path, index_dir):
    def experiment(pipelines):
        return run_experiment("arqmath-task1", pipelines=pipelines, out=tmp_path,
                              index_dir=index_dir, quiet=True)

    mine = {"mine": lambda index: mathir.bm25(index) >> pt.apply.doc_score(lambda r: r.score)}
    first = experiment(["bm25", mine])
    assert first.recomputed == {"bm25": "no run file yet", "mine": "no run file yet"}
    # the same code again (another function object): reused
    again = experiment(["bm25", {"mine": lambda index: mathir.bm25(index)
                                 >> pt.apply.doc_score(lambda r: r.score)}])
    assert again.reused == ["bm25", "mine"] and again.table.equals(first.table)
    edited = experiment(["bm25", {"mine": lambda index: mathir.bm25(index)
                                  >> pt.apply.doc_score(lambda r: -r.score)}])
    assert edited.reused == ["bm25"]
    assert edited.recomputed == {"mine": "the pipeline's code changed"}
    assert _ndcg(edited, "mine") == pytest.approx(0.5826, abs=1e-4)
    assert _ndcg(edited, "bm25") == _ndcg(first, "bm25") == _ndcg(first, "mine")


def test_a_changed_closure_value_recomputes(tmp_path, index_dir):
    def scaled(sign):
        return {"mine": lambda index: mathir.bm25(index) >> pt.apply.doc_score(
            lambda r: sign * r.score)}

    first = run_experiment("arqmath-task1", pipelines=scaled(1), out=tmp_path,
                           index_dir=index_dir, quiet=True)
    assert run_experiment("arqmath-task1", pipelines=scaled(1), out=tmp_path,
                          index_dir=index_dir, quiet=True).reused == ["mine"]
    flipped = run_experiment("arqmath-task1", pipelines=scaled(-1), out=tmp_path,
                             index_dir=index_dir, quiet=True)
    assert flipped.reused == [] and _ndcg(flipped, "mine") < _ndcg(first, "mine") - 0.3


def test_a_ready_transformer_is_fingerprinted_through_its_parts(tmp_path, sample_index):
    def experiment(fn):
        pipe = mathir.bm25(sample_index) >> pt.apply.doc_score(fn)
        return run_experiment("arqmath-task1", pipelines={"mine": pipe}, out=tmp_path,
                              index_dir=sample_index.path, quiet=True)

    first = experiment(lambda r: r.score)
    assert experiment(lambda r: r.score).reused == ["mine"]
    edited = experiment(lambda r: -r.score)
    assert edited.recomputed == {"mine": "the pipeline's code changed"}
    assert _ndcg(edited, "mine") == pytest.approx(0.5826, abs=1e-4) != _ndcg(first, "mine")
    manifest = json.loads((tmp_path / "arqmath-task1" / "sample" / "mine.manifest.json")
                          .read_text())
    assert manifest["pipeline"]["transformer"] == "pyterrier._ops:Compose"


def test_changing_a_factory_keyword_argument_recomputes(tmp_path, index_dir):
    def experiment(k1):
        return run_experiment("arqmath-task1",
                              pipelines={"tuned": functools.partial(mathir.bm25, k1=k1)},
                              out=tmp_path, index_dir=index_dir, quiet=True)

    first = experiment(1.2)
    manifest = json.loads((tmp_path / "arqmath-task1" / "sample" / "tuned.manifest.json")
                          .read_text())
    assert manifest["pipeline"]["factory"] == "mathir.pipelines.lexical:bm25"
    assert manifest["pipeline"]["kwargs"] == {"k1": 1.2}
    assert experiment(1.2).reused == ["tuned"]
    changed = experiment(0.5)
    assert changed.recomputed == {"tuned": "the pipeline's arguments changed: k1"}
    assert not changed.table.equals(first.table)


def weighted(index, model: str):
    """A pipeline whose "model" is a directory holding one weight, as a trained model."""
    from pathlib import Path

    weight = float((Path(model) / "weight.txt").read_text())
    return mathir.bm25(index) >> pt.apply.doc_score(lambda r: weight * r.score)


@pytest.mark.parametrize("with_manifest", [False, True])
def test_changing_a_model_file_recomputes(tmp_path, index_dir, with_manifest):
    model = tmp_path / "model"
    model.mkdir()
    (model / "weight.txt").write_text("1.0")
    if with_manifest:  # as `mathir train-reranker` writes
        (model / "manifest.json").write_text('{"steps": 1}')

    def experiment():
        return run_experiment("arqmath-task1", pipelines={"w": weighted}, out=tmp_path / "runs",
                              index_dir=index_dir, quiet=True, options={"model": str(model)})

    first = experiment()
    assert experiment().reused == ["w"]
    (model / "weight.txt").write_text("-1.0")  # retrained in place: size and mtime change
    retrained = experiment()
    assert retrained.recomputed == {"w": "the pipeline's arguments changed: model"}
    assert _ndcg(retrained, "w") == pytest.approx(0.5826, abs=1e-4) != _ndcg(first, "w")
    stored = json.loads((tmp_path / "runs" / "arqmath-task1" / "sample" / "w.manifest.json")
                        .read_text())["pipeline"]["kwargs"]["model"]
    assert stored["path"] == str(model.resolve())
    assert (stored["fingerprint"]["manifest_sha256"] is not None) == with_manifest


def test_options_go_only_to_factories_that_name_them(tmp_path, index_dir):
    seen = {}

    def ranker(index, cross_encoder=None):
        seen["cross_encoder"] = cross_encoder
        return mathir.bm25(index)

    with pytest.warns(UserWarning, match="bi_encoder: used by none of the pipelines run"):
        res = run_experiment("arqmath-task1", pipelines=["tfidf", {"ce": ranker}], out=tmp_path,
                             index_dir=index_dir, quiet=True,
                             options={"cross_encoder": "ce-model", "bi_encoder": "be"})
    assert seen == {"cross_encoder": "ce-model"} and list(res.table.index) == ["tfidf", "ce"]


def test_package_versions_and_mathir_source_are_part_of_the_identity(tmp_path, index_dir,
                                                                    monkeypatch):
    def experiment():
        return run_experiment("arqmath-task1", pipelines=["bm25"], out=tmp_path,
                              index_dir=index_dir, quiet=True)

    experiment()
    versions = provenance.package_versions()
    monkeypatch.setattr(provenance, "package_versions",
                        lambda: {**versions, "torch": "99.0"})
    assert experiment().recomputed == {
        "bm25": f"package versions changed: torch {versions.get('torch', '-')} -> 99.0"}
    monkeypatch.setattr(provenance, "mathir_source", lambda: {"sha256": "edited", "files": 1})
    assert experiment().recomputed == {"bm25": "mathir's source files changed"}


def test_model_environment_variables_no_pipeline_reads_are_not_part_of_the_identity(
        tmp_path, index_dir, monkeypatch):
    # Before: MATHIR_CROSS_ENCODER and MATHIR_BI_ENCODER, which no pipeline reads any
    # more (models are arguments), were fingerprinted: setting one recomputed every run.
    monkeypatch.delenv("MATHIR_CROSS_ENCODER", raising=False)
    run_experiment("arqmath-task1", pipelines=["bm25"], out=tmp_path, index_dir=index_dir,
                   quiet=True)
    monkeypatch.setenv("MATHIR_CROSS_ENCODER", str(tmp_path))
    monkeypatch.setenv("MATHIR_BI_ENCODER", str(tmp_path))
    res = run_experiment("arqmath-task1", pipelines=["bm25"], out=tmp_path, index_dir=index_dir,
                         quiet=True)
    assert res.reused == ["bm25"]
    manifest = json.loads((tmp_path / "arqmath-task1" / "sample" / "bm25.manifest.json")
                          .read_text())
    assert "environment" not in manifest


def test_a_pipeline_object_that_ran_is_reused_until_a_parameter_changes(tmp_path, sample_index,
                                                                       sample):
    # Before: its fingerprint pickled its live state ("cannot pickle RetrievalContext"),
    # so once it had run, its runs were recomputed on every call.
    from mathir.pipelines.lexical import MathWordsQuery, PisaBM25
    from mathir.topics.arqmath import read_task1_topics

    retriever = PisaBM25(sample_index)
    pipe = MathWordsQuery() >> retriever
    pipe.transform(read_task1_topics(sample.task1_topics))

    def experiment():
        return run_experiment("arqmath-task1", pipelines={"mine": pipe}, out=tmp_path,
                              index_dir=sample_index.path, quiet=True)

    first = experiment()
    assert first.recomputed == {"mine": "no run file yet"}
    again = experiment()
    assert again.reused == ["mine"] and again.table.equals(first.table)
    fresh = run_experiment("arqmath-task1", pipelines={"mine": mathir.bm25(sample_index)},
                           out=tmp_path, index_dir=sample_index.path, quiet=True)
    assert fresh.reused == ["mine"]  # the same declaration, never run
    retriever.set_parameter("k1", 0.9)
    assert experiment().recomputed == {"mine": "the pipeline's code changed"}
    retriever.set_parameter("num_results", 5)
    assert experiment().recomputed == {"mine": "the pipeline's code changed"}
    assert experiment().reused == ["mine"]


class Locked(pt.Transformer):
    """A transformer holding a lock: its state cannot be hashed."""

    def __init__(self, inner):
        self.lock = threading.Lock()
        self.inner = inner

    def transform(self, topics):
        with self.lock:
            return self.inner.transform(topics)


def test_what_cannot_be_fingerprinted_is_never_reused(tmp_path, sample_index):
    for _ in range(2):
        pipe = Locked(mathir.bm25(sample_index))
        res = run_experiment("arqmath-task1", pipelines={"locked": pipe}, out=tmp_path,
                             index_dir=sample_index.path, quiet=True)
        assert res.reused == [] and res.recomputed["locked"].startswith(
            "its code cannot be fingerprinted (TypeError: cannot pickle '_thread.lock' object)")
