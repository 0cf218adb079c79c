import functools
import json
import threading

import pytest

from mathir.experiment import identity as provenance
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
