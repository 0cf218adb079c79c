"""Run identity (mathir.experiment.identity): what a run's manifest records, and, end
to end, that a run is reused only while everything that determines it is unchanged.
"""

import functools
import json
import threading

import pyterrier as pt
import pytest

import mathir
from mathir.experiment import identity as provenance
from mathir.experiment import run_experiment
from mathir.experiment.code_fingerprint import NotFingerprintable, code_fingerprint
from mathir.experiment.identity import (
    describe_argument,
    describe_topics,
    manifest_path,
    package_versions,
    pipeline_identity,
    reusable,
    run_manifest,
    stale_reason,
    write_manifest,
)
from mathir.tasks import get_task


def test_manifest_beside_run_and_reuse_rules(tmp_path):
    topics = tmp_path / "topics.xml"
    topics.write_text("<Topics/>")
    index = tmp_path / "idx"
    index.mkdir()
    (index / "manifest.json").write_text('{"collection": 1}')
    run = tmp_path / "bm25.tsv"
    run.write_text("A.1\t1\t1\t1.0\tbm25\n")
    m = run_manifest("arqmath-task1", "PisaBM25(k1=1.2)", topics, index_dir=index)
    assert write_manifest(run, m) == manifest_path(run) == tmp_path / "bm25.manifest.json"
    assert m["topics"]["sha256"] and m["index"] and "mathir" in m["versions"]

    later = run_manifest("arqmath-task1", "PisaBM25(k1=1.2)", topics, index_dir=index)
    assert reusable(run, later)  # only time/command differ

    assert not reusable(run, run_manifest("arqmath-task1", "PisaBM25(k1=0.9)", topics, index_dir=index))
    topics.write_text("<Topics> </Topics>")
    assert not reusable(run, run_manifest("arqmath-task1", "PisaBM25(k1=1.2)", topics, index_dir=index))
    topics.write_text("<Topics/>")
    (index / "manifest.json").write_text('{"collection": 2}')
    assert not reusable(run, run_manifest("arqmath-task1", "PisaBM25(k1=1.2)", topics, index_dir=index))
    (index / "manifest.json").write_text('{"collection": 1}')
    assert reusable(run, later)
    run.unlink()
    assert not reusable(run, later)


# --- declared identity: versions, code fingerprints, arguments ------------------------------


def test_versions_name_the_packages_that_compute():
    # Before: the `python-terrier` meta-package instead of `pyterrier`, and no
    # pyterrier-dr, lightgbm, torch or sentence-transformers.
    v = package_versions()
    assert "python-terrier" not in v
    for name in ("pyterrier", "pyterrier-pisa", "pyterrier-dr", "lightgbm", "torch",
                 "sentence-transformers", "transformers", "scikit-learn", "numpy", "sympy",
                 "ir-measures", "mathir", "python"):
        assert v.get(name), name


def test_the_manifest_records_source_hash_and_git_state(tmp_path):
    topics = tmp_path / "topics.xml"
    topics.write_text("<Topics/>")
    m = run_manifest("arqmath-task1", pipeline_identity("bm25", functools.partial(max)), topics)
    assert len(m["source"]["mathir"]) == 64
    git = provenance.git_state()
    assert git is None or (len(git["commit"]) == 40 and git["dirty"] in (True, False, None))
    json.dumps(m)  # all of it is JSON


def _scaled(factor):
    return lambda r: factor * r.score


def helper(x):
    return x + 1


def test_code_fingerprints_see_code_constants_closures_and_globals():
    fp = code_fingerprint
    assert fp(lambda r: r.score) == fp(lambda r: r.score)  # another object, same code
    assert fp(lambda r: r.score) != fp(lambda r: -r.score)  # bytecode
    assert fp(lambda r: r.score + 1) != fp(lambda r: r.score + 2)  # constants
    assert fp(_scaled(1)) == fp(_scaled(1)) != fp(_scaled(-1))  # closure values
    # nested lambdas, as in bm25 >> pt.apply.doc_score(lambda ...)
    assert fp(lambda i: (lambda r: r.score)) != fp(lambda i: (lambda r: -r.score))
    # a global function the code calls: its code counts
    uses_helper = lambda x: helper(x)  # noqa: E731
    before = fp(uses_helper)
    global helper
    original = helper
    try:
        helper = lambda x: x + 2  # noqa: E731
        assert fp(uses_helper) != before
    finally:
        helper = original
    assert fp(uses_helper) == before
    # default arguments
    assert fp(lambda r, w=1: w * r.score) != fp(lambda r, w=2: w * r.score)


def test_code_fingerprints_of_objects_and_classes():
    class Scorer:
        def __init__(self, weight):
            self.weight = weight

        def __call__(self, r):
            return self.weight * r.score

    class Negated(Scorer):
        def __call__(self, r):
            return -self.weight * r.score

    assert code_fingerprint(Scorer(1.0)) == code_fingerprint(Scorer(1.0))
    assert code_fingerprint(Scorer(1.0)) != code_fingerprint(Scorer(2.0))  # state
    assert code_fingerprint(Scorer(1.0)) != code_fingerprint(Negated(1.0))  # method code
    # a set of strings hashes alike in every process (sorted, not in hash order)
    assert code_fingerprint({"b", "a"}) == code_fingerprint({"a", "b"})
    # a library function counts by name and version, not by the bytes of its code
    assert code_fingerprint(json.dumps) == code_fingerprint(json.dumps)
    # a recursive function ends
    def fact(n):
        return 1 if n < 2 else n * fact(n - 1)
    assert len(code_fingerprint(fact)) == 64
    # a cached function is hashed through its wrapper
    assert code_fingerprint(functools.lru_cache(lambda x: x)) != code_fingerprint(
        functools.lru_cache(lambda x: -x))


def test_what_cannot_be_hashed_is_said():
    with pytest.raises(NotFingerprintable, match="_thread.lock"):
        code_fingerprint({"lock": threading.Lock()})
    ident = pipeline_identity("x", transformer=[threading.Lock()])
    assert ident["code"] is None and "_thread.lock" in ident["unfingerprinted"]
    assert stale_reason("/nowhere/run.tsv", {"pipeline": ident}).startswith(
        "its code cannot be fingerprinted")


def test_path_arguments_are_fingerprinted(tmp_path):
    model = tmp_path / "model"
    model.mkdir()
    (model / "weights.bin").write_bytes(b"1234")
    first = describe_argument({"model": str(model), "k1": 0.9, "name": "no such path"})
    assert first["k1"] == 0.9 and first["name"] == "no such path"
    assert first["model"]["path"] == str(model.resolve())
    (model / "weights.bin").write_bytes(b"123456")
    assert describe_argument({"model": str(model)})["model"] != first["model"]


def test_stale_reason_says_what_changed(tmp_path):
    topics = tmp_path / "topics.xml"
    topics.write_text("<Topics/>")
    run = tmp_path / "r.tsv"
    assert stale_reason(run, {}) == "no run file yet"
    run.write_text("A.1\t1\t1\t1.0\tr\n")
    assert stale_reason(run, {}) == "the run file has no manifest"
    old = run_manifest("t", pipeline_identity("r", functools.partial(max), {"k": 1}), topics)
    write_manifest(run, old)
    assert stale_reason(run, dict(old)) is None
    new = run_manifest("t", pipeline_identity("r", functools.partial(max), {"k": 2}), topics)
    assert stale_reason(run, new) == "the pipeline's arguments changed: k"
    assert stale_reason(run, {**old, "format": "trec"}) == "the run format changed"
    assert stale_reason(run, {**old, "versions": {**old["versions"], "numpy": "0"}}) == (
        f"package versions changed: numpy {old['versions']['numpy']} -> 0")


def test_a_topic_selection_is_part_of_the_identity(tmp_path):
    """Issue 49: a derived task's selected topics, not only the topics file, decide a run
    (before: a run of two topics was reused for three)."""
    topics = tmp_path / "topics.xml"
    topics.write_text("<Topics/>")
    run = tmp_path / "r.tsv"
    run.write_text("A.1\t1\t1\t1.0\tr\n")
    two = run_manifest("t", "bm25", topics, selection=["A.1", "A.2"])
    write_manifest(run, two)
    assert stale_reason(run, run_manifest("t", "bm25", topics, selection=("A.2", "A.1"))) is None
    assert stale_reason(run, run_manifest("t", "bm25", topics, selection=["A.1", "A.2", "A.3"])
                        ) == "the topic selection changed (2 -> 3 topics)"
    assert stale_reason(run, run_manifest("t", "bm25", topics, selection=["A.1", "A.3"])
                        ) == "the topic selection changed (2 -> 2 topics)"
    assert stale_reason(run, run_manifest("t", "bm25", topics)) == \
        "the topic selection changed (2 -> all topics)"
    assert describe_topics(topics) == describe_topics(topics, None)  # no selection: as before
    assert "selection" not in describe_topics(topics)


# --- live state: what a transformer builds or caches is not what it is ---------------------


class _Scorer:
    """Declared by ``weight``; builds an unpicklable object and caches results on use."""

    def __init__(self, weight):
        self.weight = weight

    def __call__(self, key):
        from mathir.pipelines.parameters import Cache, derived

        derived(self, "_lock", (self.weight,), threading.Lock)
        cache = derived(self, "_results", (self.weight,), Cache)
        return cache.setdefault(key, self.weight * len(key))


def test_live_state_is_left_out_of_fingerprints():
    scorer = _Scorer(2.0)
    declared = code_fingerprint(scorer)
    assert scorer("abc") == 6.0
    assert code_fingerprint(scorer) == declared == code_fingerprint(_Scorer(2.0))
    scorer.weight = 3.0  # what set_parameter does
    assert code_fingerprint(scorer) == code_fingerprint(_Scorer(3.0)) != declared


def test_an_object_may_declare_its_fingerprint():
    class Model:
        def __init__(self, path, loaded):
            self.path, self.loaded = path, loaded

        def __fingerprint__(self):
            return {"path": self.path}

    assert code_fingerprint(Model("m", threading.Lock())) == code_fingerprint(Model("m", 1))
    assert code_fingerprint(Model("m", 1)) != code_fingerprint(Model("n", 1))


def test_a_pipeline_that_ran_keeps_its_fingerprint_and_pickles(sample_index, sample):
    # Before: "cannot pickle 'pyterrier_pisa._pisathon.RetrievalContext' object", so a
    # pipeline object that had run was never reused, and could not go to a worker.
    import pickle

    import mathir
    from mathir.topics.arqmath import read_task1_topics

    topics = read_task1_topics(sample.task1_topics)
    pipe = mathir.bm25(sample_index)
    declared = code_fingerprint(pipe)
    ran = pipe(topics)
    assert code_fingerprint(pipe) == declared == code_fingerprint(mathir.bm25(sample_index))
    assert pipeline_identity("bm25", transformer=pipe)["code"] == declared
    for changed in (mathir.bm25(sample_index, k1=0.9), mathir.bm25(sample_index, num_results=5)):
        assert code_fingerprint(changed) != declared
    again = pickle.loads(pickle.dumps(pipe))
    assert again(topics)[["qid", "docno"]].equals(ran[["qid", "docno"]])


# --- end to end: a run is reused only while everything that determines it is unchanged -----
# Before: reuse compared the pipeline's ``repr``, which does not show the code of a
# ``pt.apply`` function, so an edited user pipeline silently reused the old run (nDCG'
# 0.9336 printed where 0.5826 is right).


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
