"""Every mathir index follows one build protocol and is a PyTerrier artifact.

The protocol (:func:`mathir.storage.build_or_reuse`): an up-to-date index is opened
without creating any file; a stale one is built under a lock, so that a concurrent
builder waits and then reuses it. The artifact: ``pt_meta.json`` names the class that
``pt.Artifact.load(path)`` opens, through the ``pyterrier.artifact`` entry points.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import pyterrier as pt
import pytest

from mathir.errors import InputError
from mathir.indexing import answer_index, dense_index, fact_index, formula_build, text_store
from mathir.indexing.answer_index import AnswerIndex
from mathir.indexing.dense_index import AnswerTexts, DenseAnswerIndex
from mathir.indexing.fact_index import FactIndex
from mathir.indexing.formula_index import FormulaIndex

ROOT = Path(__file__).resolve().parents[2]
# What pyproject.toml declares under [project.entry-points."pyterrier.artifact"].
ENTRY_POINTS = {
    "sparse_index.mathir.arqmath_answers": "mathir.indexing.answer_index:AnswerIndex",
    "sparse_index.mathir.formulas": "mathir.indexing.formula_index:FormulaIndex",
    "sparse_index.mathir.facts": "mathir.indexing.fact_index:FactIndex",
    "dense_index.mathir.arqmath_answers": "mathir.indexing.dense_index:DenseAnswerIndex",
}
# the answer index's earlier format names: indexes written under them still open
EARLIER = {
    "sparse_index.mathir.answer_checking": "mathir.indexing.answer_index:AnswerIndex",
    "dense_index.mathir.answer_checking": "mathir.indexing.dense_index:DenseAnswerIndex",
    "sparse_index.mathir.answers": "mathir.indexing.answer_index:AnswerIndex",
    "dense_index.mathir.answers": "mathir.indexing.dense_index:DenseAnswerIndex",
}


@dataclass
class Kind:
    """How to build one kind of index, and a function its build calls once (to hold it)."""

    cls: type
    build: Any  # (path) -> index
    module: Any
    name: str  # module.name is called once per build
    method: bool = False  # module is a class and name one of its instance methods


def _answers(path):
    from mathir.samples import arqmath_sample
    return AnswerIndex.build(arqmath_sample().posts, path, quiet=True)


def _formulas(path):
    from mathir.samples import arqmath_sample
    return FormulaIndex.build(arqmath_sample().formulas, path, quiet=True)


def _facts(path):
    from mathir.samples import worldtree_sample
    return FactIndex.build(worldtree_sample().tables, path)


def _texts(path):
    from mathir.samples import arqmath_sample
    return AnswerTexts.build(arqmath_sample().posts, path, quiet=True)


def _few_answers(folder: Path) -> Path:
    """A Posts file of the embedded sample's first two threads (7 answers), written once
    in ``folder``. The dense index's tests are of the build protocol (reuse, locking,
    rebuilds, the artifact class), which a few answers exercise as the sample's 250 do;
    every build of it encodes each passage, which the whole sample made 15 s a build."""
    posts = folder / "Posts.xml"
    if not posts.exists():
        from mathir.samples import arqmath_sample

        lines = Path(arqmath_sample().posts).read_text(encoding="utf-8").splitlines(True)
        questions = [i for i, line in enumerate(lines) if 'PostTypeId="1"' in line]
        folder.mkdir(parents=True, exist_ok=True)
        posts.write_text("".join(lines[:questions[2]] + lines[-1:]), encoding="utf-8")
    return posts


def _dense_texts(folder: Path):
    """The answer texts the dense index is built from (:func:`_few_answers`)."""
    return AnswerTexts.build(_few_answers(folder), folder / "texts", quiet=True)


def _dense(path):
    pytest.importorskip("pyterrier_dr")
    from mathir.neural.bi_encoder import load_bi_encoder

    texts = _dense_texts(path.parent)
    assert len(texts) == 7
    return DenseAnswerIndex.build(texts, path, load_bi_encoder(), quiet=True)


KINDS = {
    "answers": Kind(AnswerIndex, _answers, answer_index.TfidfIndex, "build_from_pisa"),
    "formulas": Kind(FormulaIndex, _formulas, formula_build, "SeenIds"),
    "facts": Kind(FactIndex, _facts, fact_index, "read_tablestore"),
    "texts": Kind(AnswerTexts, _texts, text_store, "iter_answer_texts"),
    "dense": Kind(DenseAnswerIndex, _dense, dense_index.PassageSettings, "transformer", True),
}
ARTIFACTS = ["answers", "formulas", "facts", "dense"]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """Each kind of index, built once (lazily) in its own folder."""
    cache: dict[str, Any] = {}

    def get(kind: str):
        if kind not in cache:
            cache[kind] = KINDS[kind].build(tmp_path_factory.mktemp(kind) / "idx")
        return cache[kind]

    return get


def _listing(folder: Path) -> dict:
    return {str(p.relative_to(folder)): p.stat().st_mtime_ns for p in folder.rglob("*")}


@pytest.fixture
def mathir_entry_points(monkeypatch):
    """``pt.utils.entry_points`` as it answers once pyproject's entry points are installed."""
    real = pt.utils.entry_points

    def entry_points(group: str):
        found = real(group)
        if group != "pyterrier.artifact":
            return found
        ours = tuple(importlib.metadata.EntryPoint(name, value, group)
                     for name, value in ENTRY_POINTS.items())
        return ours + tuple(ep for ep in found if ep.name not in ENTRY_POINTS)

    monkeypatch.setattr(pt.utils, "entry_points", entry_points)


@pytest.mark.parametrize("kind", ARTIFACTS)
def test_artifact_load_opens_the_index_class(kind, built, mathir_entry_points):
    index = built(kind)
    meta = json.loads((index.path / "pt_meta.json").read_text())
    cls = KINDS[kind].cls
    assert meta == {"type": cls.ARTIFACT_TYPE, "format": cls.ARTIFACT_FORMAT,
                    "package_hint": "mathir"}
    loaded = pt.Artifact.load(str(index.path))
    assert type(loaded) is cls and loaded.path == index.path
    assert loaded.manifest == index.manifest
    assert pt.inspect.artifact_type_format(loaded) == (cls.ARTIFACT_TYPE, cls.ARTIFACT_FORMAT)


def test_artifact_load_with_installed_entry_points(built):
    installed = {ep.name: ep.value for ep in importlib.metadata.entry_points(
        group="pyterrier.artifact") if ep.value.startswith("mathir.")}
    if not installed:
        pytest.skip("mathir's pyterrier.artifact entry points are not installed: add them to "
                    "pyproject.toml and reinstall (pip install -e .)")
    assert installed == {**ENTRY_POINTS, **EARLIER}
    for kind in ("answers", "formulas", "facts"):
        index = built(kind)
        assert type(pt.Artifact.load(str(index.path))) is KINDS[kind].cls


def test_an_index_written_under_the_earlier_format_name_still_opens(built, tmp_path):
    """The answer index's format was ``mathir.answer_checking`` (after the rename of
    ``answers/``, nothing to do with checking answers) and ``mathir.answers`` before."""
    installed = {ep.name for ep in importlib.metadata.entry_points(group="pyterrier.artifact")}
    if not set(EARLIER) <= installed:
        pytest.skip("reinstall mathir (pip install -e .) for its pyterrier.artifact entry points")
    index = built("answers")
    assert index.ARTIFACT_FORMAT == "mathir.arqmath_answers"
    for earlier in ("mathir.answer_checking", "mathir.answers"):
        copy = tmp_path / earlier
        shutil.copytree(index.path, copy)
        meta = json.loads((copy / "pt_meta.json").read_text())
        (copy / "pt_meta.json").write_text(json.dumps({**meta, "format": earlier}))
        assert type(pt.Artifact.load(str(copy))) is AnswerIndex


def test_entry_point_names_match_the_classes():
    for name, value in ENTRY_POINTS.items():
        module, cls_name = value.split(":")
        cls = getattr(__import__(module, fromlist=[cls_name]), cls_name)
        assert issubclass(cls, pt.Artifact)
        assert name == f"{cls.ARTIFACT_TYPE}.{cls.ARTIFACT_FORMAT}"


def test_pisa_parts_stay_pisa_artifacts(built):
    index = built("answers")
    assert type(pt.Artifact.load(str(index.path / "pisa"))).__name__ == "PisaIndex"


@pytest.mark.parametrize("kind", list(KINDS))
def test_up_to_date_index_is_reused_without_creating_a_file(kind, built):
    index = built(kind)
    lock = index.path.parent / f".{index.path.name}.lock"
    lock.unlink(missing_ok=True)
    before = _listing(index.path.parent)
    again = KINDS[kind].build(index.path)
    assert again.manifest == index.manifest
    assert _listing(index.path.parent) == before


@pytest.mark.parametrize("kind", list(KINDS))
def test_concurrent_builder_waits_then_reuses(kind, tmp_path, monkeypatch):
    spec = KINDS[kind]
    if kind == "dense":
        _dense_texts(tmp_path)  # built first: it is the dense index's input
    original = getattr(spec.module, spec.name)
    started, go = threading.Event(), threading.Event()
    calls = []

    def held(*args, **kwargs):
        calls.append(threading.current_thread().name)
        if len(calls) == 1:
            started.set()
            assert go.wait(120)
        return original(*args, **kwargs)

    if spec.method:  # called on an instance: stays a method
        monkeypatch.setattr(spec.module, spec.name, lambda self, *a, **k: held(self, *a, **k))
    else:
        monkeypatch.setattr(spec.module, spec.name, held)
    results: dict[str, Any] = {}
    errors: list[BaseException] = []

    def build(name: str):
        try:
            results[name] = spec.build(tmp_path / "idx")
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)
            started.set()

    first = threading.Thread(target=build, args=("first",), name="first")
    first.start()
    assert started.wait(300)
    second = threading.Thread(target=build, args=("second",), name="second")
    second.start()
    second.join(1.0)
    waited = second.is_alive()
    go.set()
    first.join(600)
    second.join(600)
    assert errors == []
    assert calls == ["first"], "the second builder built the index too"
    assert waited
    assert results["second"].manifest == results["first"].manifest


def _ann(path):
    """An HNSW index (and its float16 copy) of a FlexIndex of 300 random vectors."""
    pytest.importorskip("faiss")
    pyterrier_dr = pytest.importorskip("pyterrier_dr")
    import numpy as np

    from mathir.indexing.ann_index import AnnIndex

    flex = path.parent / "flex"
    if not flex.exists():
        vecs = np.random.default_rng(0).standard_normal((300, 16)).astype("f4")
        pyterrier_dr.FlexIndex(str(flex), verbose=False).indexer(mode="overwrite").index(
            {"docno": f"d{i}", "doc_vec": v} for i, v in enumerate(vecs))
    return AnnIndex.build(flex, "hnsw", M=8, ef_construction=16, f16=1)


# The library each kind is written with whose upgrade the test simulates.
WRITERS = {"answers": "pyterrier-pisa", "formulas": "lxml", "facts": "pandas",
           "texts": "lxml", "dense": "pyterrier-dr", "ann": "faiss-cpu"}


# (the dense index is encoded three times)
@pytest.mark.parametrize("kind", [pytest.param(k, marks=pytest.mark.slow) if k == "dense" else k
                                  for k in [*KINDS, "ann"]])
def test_an_index_is_rebuilt_when_its_code_or_a_writing_library_changes(kind, tmp_path,
                                                                        monkeypatch):
    """Issue: an index's identity held no code or library versions: after a one-word change
    in latex_words.py (or a pyterrier-pisa / lxml upgrade) the runs were recomputed against
    the index the old code built."""
    build = _ann if kind == "ann" else KINDS[kind].build
    path = tmp_path / "idx"
    index = build(path)
    # (an approximate index lies beside its FlexIndex, with its float16 copy: numpy's)
    folders = [index.path] + ([tmp_path / "flex-f16"] if kind == "ann" else [])

    def rebuilt() -> list[bool]:
        """Which folders building again replaced (a marker left in each is gone)."""
        for folder in folders:
            (folder / "marker").touch()
        build(path)
        return [not (folder / "marker").exists() for folder in folders]

    assert not any(rebuilt())  # unchanged: reused

    real = importlib.metadata.version

    def upgraded(name: str) -> str:  # a valid version still (a local label added)
        version = real(name)
        if name != WRITERS[kind]:
            return version
        return version + (".upgraded" if "+" in version else "+upgraded")

    monkeypatch.setattr(importlib.metadata, "version", upgraded)
    assert rebuilt()[0], f"a {WRITERS[kind]} upgrade rebuilds the {kind} index"
    assert not any(rebuilt())
    manifest = json.loads((folders[0] / "manifest.json").read_text())
    assert manifest["writer"]["versions"][WRITERS[kind]].endswith("upgraded")

    from mathir.indexing import identity

    real_code = identity.code_digest
    monkeypatch.setattr(identity, "code_digest",
                        lambda module: {**real_code(module), "sha256": "0" * 64})
    assert all(rebuilt()), f"an edit of the code that builds it rebuilds the {kind} index"
    assert not any(rebuilt())


def test_index_without_pt_meta_opens_and_gets_it_without_rebuild(tmp_path, mathir_entry_points):
    index = _facts(tmp_path / "idx")
    (index.path / "pt_meta.json").unlink()  # as mathir built it before it was an artifact
    stamp = _listing(index.path)
    with pytest.raises(ValueError, match="No implementation found"):
        pt.Artifact.load(str(index.path))
    assert FactIndex(index.path).num_docs == index.num_docs  # the class opens it
    again = _facts(index.path)
    assert {k: v for k, v in _listing(index.path).items() if k != "pt_meta.json"} == stamp
    assert type(pt.Artifact.load(str(again.path))) is FactIndex


def test_read_only_index_without_pt_meta_is_reused_as_it_is(tmp_path):
    index = _facts(tmp_path / "ro" / "idx")
    (index.path / "pt_meta.json").unlink()
    (tmp_path / "ro" / ".idx.lock").unlink(missing_ok=True)
    prefix = []
    if os.geteuid() == 0:  # root writes into read-only folders: drop that capability
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root and setpriv (util-linux) is absent")
        prefix = [setpriv, "--bounding-set=-dac_override"]
    before = _listing(tmp_path / "ro")
    for d in (tmp_path / "ro", index.path):
        os.chmod(d, 0o555)
    try:
        code = ("from mathir.samples import worldtree_sample; "
                "from mathir.indexing.fact_index import FactIndex; "
                f"print(FactIndex.build(worldtree_sample().tables, {str(index.path)!r}).num_docs)")
        proc = subprocess.run([*prefix, sys.executable, "-c", code], capture_output=True,
                              text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300)
    finally:
        for d in (tmp_path / "ro", index.path):
            os.chmod(d, 0o755)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert int(proc.stdout) == index.num_docs
    assert _listing(tmp_path / "ro") == before


# --- packages: what build_package() / to_hf() ship ------------------------------------------


def _unpack(package: str, into: Path) -> list[str]:
    """Extract a ``.tar.lz4`` package as ``pt.Artifact.from_url`` does; its files."""
    import tarfile

    import lz4.frame

    with lz4.frame.open(package) as f, tarfile.open(fileobj=f, mode="r|") as tar:
        for member in tar:
            if member.isfile() or member.isdir():
                tar.extract(member, into, set_attrs=False)
    return sorted(p.relative_to(into).as_posix() for p in into.rglob("*") if p.is_file())


def _holding(folder: Path, texts: list[str]) -> list[str]:
    """The files under ``folder`` whose bytes contain one of ``texts``."""
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()
                  and any(t.encode() in p.read_bytes() for t in texts))


def test_a_package_holds_what_searching_needs_and_no_path_of_the_builder(tmp_path, sample,
                                                                         mathir_entry_points):
    # Before: the package held .pisa.lock, pisa.log (the build folder's path inside), the
    # forward index, every BM25 file a parameter scan compiled, and a manifest naming
    # the collection by its absolute path.
    from mathir.pipelines.lexical import bm25, tfidf
    from mathir.topics.arqmath import read_task1_topics

    index = _answers(tmp_path / "built" / "answers")
    topics = read_task1_topics(sample.task1_topics)
    before = bm25(index)(topics), tfidf(index)(topics)
    bm25(index, k1=0.9, b=0.4)(topics)  # a scan compiles more BM25 data, under a lock
    (index.path / ".pisa.lock").touch()  # a lock an interrupted compile may leave
    assert (index.path / "pisa.log").exists()
    assert (index.path / "pisa" / "bm25.k1-0.9.b-0.4.q0.bmw.64").exists()

    package = index.build_package(str(tmp_path / "answers.tar.lz4"), verbose=False)
    unpacked = tmp_path / "elsewhere" / "answers"
    files = _unpack(package, unpacked)
    assert files == ["manifest.json", "meta.tsv",
                     "pisa/bm25.k1-1.2.b-0.75.q0.bmw.64",
                     "pisa/bm25.k1-1.2.b-0.75.q0.bmw.64.block_simdbp",
                     "pisa/fwd.doclex", "pisa/fwd.documents", "pisa/fwd.termlex",
                     "pisa/fwd.terms", "pisa/inv.docs", "pisa/inv.freqs", "pisa/inv.sizes",
                     "pisa/pt_meta.json", "pt_meta.json",
                     "tfidf/docnos.txt", "tfidf/idf.npy", "tfidf/matrix.npz",
                     "tfidf/stemmer.txt", "tfidf/terms.txt"]
    paths = [str(tmp_path), str(tmp_path.resolve()), str(Path(sample.posts).resolve())]
    assert _holding(unpacked, paths) == []
    assert "manifest.json" in _holding(index.path, paths)  # (the index's own keeps them)

    opened = pt.Artifact.load(str(unpacked))
    assert type(opened) is AnswerIndex and opened.num_docs == index.num_docs
    collection = {k: v for k, v in index.manifest["collection"].items() if k != "path"}
    assert opened.manifest["collection"] == collection  # recorded, without the path
    for pipe, expected in zip((bm25(opened), tfidf(opened)), before, strict=True):
        got = pipe(topics)
        assert got[["qid", "docno", "rank"]].equals(expected[["qid", "docno", "rank"]])
        assert got["score"].tolist() == pytest.approx(expected["score"].tolist())
    assert len(bm25(opened, k1=0.9, b=0.4)(topics))  # compiled again where searched
    with pytest.raises(InputError, match="does not record its collection"):
        opened.text_loader()


@pytest.mark.parametrize("kind", ["formulas", "facts"])
def test_other_packages_ship_no_lock_log_or_path(kind, built, tmp_path):
    index = built(kind)
    (index.path.parent / f".{index.path.name}.lock").touch()
    (index.path / ".inside.lock").touch()
    files = _unpack(index.build_package(str(tmp_path / "p.tar.lz4"), verbose=False),
                    tmp_path / "p")
    assert not [f for f in files if f.endswith((".lock", ".log")) or "/." in f]
    source = index.manifest.get("source", index.manifest.get("tablestore"))["path"]
    assert _holding(tmp_path / "p", [str(index.path), source]) == []
    opened = KINDS[kind].cls(tmp_path / "p")
    assert opened.num_docs == index.num_docs
    if kind == "formulas":
        from mathir.pipelines.formula import formula_words

        query = pd.DataFrame({"qid": ["1"], "query": ["$x^x$"]})
        assert formula_words(opened, 3)(query)["docno"].tolist() == \
            formula_words(index, 3)(query)["docno"].tolist()
        assert [f for f in files if f.startswith("words/bm25")] == [
            "words/bm25.k1-1.2.b-0.75.q0.bmw.64", "words/bm25.k1-1.2.b-0.75.q0.bmw.64.block_simdbp"]
    else:
        with pytest.raises(InputError, match="does not record its tablestore"):
            _ = opened.tablestore
