"""The answer index in shards of BM25 impacts: built side by side, searched side by side,
the same run files for any number of shards; its TF-IDF is the whole collection's."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from mathir.errors import InputError
from mathir.indexing.answer_index import AnswerIndex, usable_cpus
from mathir.pipelines.lexical import PisaBM25, bm25, tfidf
from mathir.runs.trec import write_run


def assert_same_pisa_files(index_dir, expected_dir) -> None:
    """The PISA postings and forward files of two answer indexes are byte for byte equal."""
    for name in ("inv.docs", "inv.freqs", "inv.sizes", "fwd.terms", "fwd.documents"):
        assert (index_dir / "pisa" / name).read_bytes() == \
            (expected_dir / "pisa" / name).read_bytes(), name


@pytest.fixture(scope="module")
def shard_indexes(tmp_path_factory):
    from mathir.samples import arqmath_sample

    root = tmp_path_factory.mktemp("answers")
    return {n: AnswerIndex.build(arqmath_sample().posts, root / f"shards{n}", quiet=True,
                                 scoring="bm25-impacts", shards=n) for n in (1, 3)}


@pytest.fixture(scope="module")
def topics(sample):
    from mathir.topics.arqmath import read_task1_topics

    return read_task1_topics(sample.task1_topics)


@pytest.mark.parametrize("retrieve", [bm25, tfidf])
@pytest.mark.parametrize("k", [4, 1000])
def test_three_shards_write_the_run_of_one(shard_indexes, topics, retrieve, k, tmp_path):
    runs = []
    for n in (1, 3):
        path = tmp_path / f"shards{n}.tsv"
        write_run(retrieve(shard_indexes[n], k).transform(topics), path, name="run")
        runs.append(path.read_bytes())
    assert runs[0] == runs[1]
    assert len(runs[0].splitlines()) >= len(topics) * min(k, 10)


def test_shards_hold_every_answer_once_in_order(shard_indexes, sample_index):
    three = shard_indexes[3]
    assert three.impacts["shard_docs"] == [83, 83, 84]
    assert three.docnos() == sample_index.docnos()
    assert three.num_docs == sample_index.num_docs == 250


def test_the_tfidf_of_shards_is_the_whole_collections(shard_indexes, sample_index, topics, tmp_path):
    runs = []
    for index in (shard_indexes[3], sample_index):
        path = tmp_path / "tfidf.tsv"
        write_run(tfidf(index, 50).transform(topics), path, name="run")
        runs.append(path.read_bytes())
    assert runs[0] == runs[1]


def test_an_opened_impact_index_is_not_rebuilt_as_bm25(shard_indexes, sample):
    again = AnswerIndex.build(sample.posts, shard_indexes[3].path, quiet=True)
    assert again.scoring == "bm25-impacts" and len(again.impacts["shard_docs"]) == 3
    manifest = json.loads((again.path / "manifest.json").read_text())
    assert manifest["params"]["shards"] == 3


def test_impacts_refuse_other_bm25_parameters(shard_indexes, topics):
    from mathir.pipelines.lexical import MathWordsQuery

    with pytest.raises(InputError, match="k1=1.2"):
        PisaBM25(shard_indexes[3], k1=0.9).transform(MathWordsQuery().transform(topics))
    with pytest.raises(InputError, match="impact_shards"):
        _ = shard_indexes[3].pisa


@pytest.mark.parametrize("kwargs,msg", [
    ({"shards": 2}, "scoring='bm25-impacts'"),
    ({"shards": 0, "scoring": "bm25-impacts"}, "at least 1"),
    ({"scoring": "bm26"}, "unknown answer index scoring"),
    ({"shards": 251, "scoring": "bm25-impacts"}, "cannot make 251 shards"),
])
def test_bad_shard_options_are_refused(sample, tmp_path, kwargs, msg):
    with pytest.raises(InputError, match=msg):
        AnswerIndex.build(sample.posts, tmp_path / "i", quiet=True, **kwargs)


@pytest.mark.skipif(usable_cpus() == 1, reason="confined to one CPU, PISA parses one batch "
                    "(mathir.indexing.answer_index._pisa_batch_size)")
def test_pisa_batch_size_does_not_change_the_index(sample, sample_index, topics, monkeypatch,
                                                   tmp_path):
    """Batches of 16 answers (the sample's 250 in 16 batches, parsed and inverted apart)
    give the same PISA files and the same BM25 run as the default one batch."""
    from mathir.indexing import answer_index

    monkeypatch.setattr(answer_index, "PISA_BATCH_SIZE", 16)
    small = AnswerIndex.build(sample.posts, tmp_path / "batches16", quiet=True)
    assert "[Batch 15]" in (small.path / "pisa.log").read_text()  # the batches were small
    assert_same_pisa_files(small.path, sample_index.path)
    runs = [bm25(index, 1000).transform(topics) for index in (small, sample_index)]
    assert len(runs[0]) > 0
    columns = ["qid", "docno", "score", "rank"]
    assert runs[0][columns].equals(runs[1][columns])


_ONE_CPU_BUILD = """
import os, sys
os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
from mathir.indexing import answer_index
answer_index.PISA_BATCH_SIZE = 16
answer_index.AnswerIndex.build(sys.argv[1], sys.argv[2], quiet=True)
"""


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs Linux CPU affinity")
def test_a_build_confined_to_one_cpu_finishes(sample, sample_index, tmp_path):
    """Under taskset, Slurm or a container cpuset of one CPU, TBB gives PISA's parser no
    worker thread, and it blocked for ever from the fifth batch on (the sample's answers
    in batches of 16). The build must finish, and make the same index."""
    out = tmp_path / "one-cpu"
    try:
        subprocess.run([sys.executable, "-c", _ONE_CPU_BUILD, str(sample.posts), str(out)],
                       check=True, timeout=240, capture_output=True)
    except subprocess.TimeoutExpired:
        pytest.fail("an answer index build confined to one CPU did not finish in 240 s")
    assert_same_pisa_files(out, sample_index.path)


@pytest.mark.parametrize("rows", [(0, None), (0, 3), (2, 5), (83, 166), (166, None), (249, 400)])
def test_a_slice_of_answers_is_the_islice_of_all(sample, rows):
    from itertools import islice

    from mathir.indexing.answer_collection import AnswerCollection

    answers = AnswerCollection.at(sample.posts)
    assert (list(answers.iter_answers(True, math_words=True, rows=rows))
            == list(islice(answers.iter_answers(True, math_words=True), *rows)))


def test_a_late_slice_makes_no_text_of_the_answers_before_it(sample, monkeypatch):
    from mathir.indexing.answer_collection import AnswerCollection
    from mathir.readers import mse_posts

    made = []
    text = mse_posts.Post.text
    monkeypatch.setattr(mse_posts.Post, "text",
                        lambda self, math_words=False: made.append(self.post_id) or
                        text(self, math_words))
    docs = list(AnswerCollection.at(sample.posts).iter_answers(rows=(200, 210)))
    assert len(docs) == 10 and made == [d["docno"] for d in docs]
    with pytest.raises(ValueError, match="0 <= start <= stop"):
        next(AnswerCollection.at(sample.posts).iter_answers(rows=(5, 2)))


def _hits(index, word: str) -> int:
    import pandas as pd

    return len(bm25(index, 10).transform(pd.DataFrame({"qid": ["1"], "query": [word]})))


def _keep_size_and_mtime_while(path, old: bytes, new: bytes) -> None:
    """Replace ``old`` by ``new`` (same length) in place, then set the mtime back, as a
    ``cp -p`` or ``rsync -a`` delivery of the edited file does."""
    st = path.stat()
    data = path.read_bytes()
    assert len(old) == len(new) and data.count(old) == 1
    with open(path, "r+b") as f:
        f.write(data.replace(old, new))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (st.st_size, st.st_mtime_ns)


THREAD = ('<!DOCTYPE html><html><head><title>T</title></head><body>'
          '<div class="row" id="question-title"><h1>Question {q}</h1></div>'
          '<div id="question" question_id="{q}"><p>Why is it so, {q}?</p></div>'
          '<div id="tags"><span> series </span></div>'
          '<div id="answer" answer_id="{a}"><p>Because of the {word} lemma.</p></div>'
          '</body></html>')


@pytest.mark.parametrize("kind", ["posts", "threads"])
def test_an_edit_that_keeps_size_and_mtime_rebuilds_the_index(tmp_path, monkeypatch, kind):
    """Issue 30 (7): a Posts file was fingerprinted by its first and last MiB, a thread
    folder by names, sizes and mtimes; an edit that kept them reused the stale index."""
    monkeypatch.setenv("MATHIR_CACHE_DIR", str(tmp_path / "cache"))
    if kind == "posts":
        pad = "<!-- " + "x" * (3 << 19) + " -->\n"
        collection = edited = tmp_path / "Posts.V1.3.xml"
        collection.write_text(
            '<?xml version="1.0" encoding="utf-8"?>\n<posts>\n' + pad
            + '  <row Id="1" PostTypeId="1" Title="Why so" Body="&lt;p&gt;why&lt;/p&gt;" />\n'
            + '  <row Id="2" PostTypeId="2" ParentId="1" Body="&lt;p&gt;the wombat lemma'
            + '&lt;/p&gt;" />\n'
            + '  <row Id="3" PostTypeId="2" ParentId="1" Body="&lt;p&gt;another&lt;/p&gt;" />\n'
            + pad + "</posts>\n")
    else:
        collection = tmp_path / "threads"
        collection.mkdir()
        for q, a, word in ((1, 2, "wombat"), (3, 4, "another")):
            (collection / f"{q}_{a}.html").write_text(THREAD.format(q=q, a=a, word=word))
        edited = collection / "1_2.html"
    index = AnswerIndex.build(collection, tmp_path / "idx", quiet=True)
    assert (_hits(index, "wombat"), _hits(index, "quokka")) == (1, 0)
    _keep_size_and_mtime_while(edited, b"wombat", b"quokka")
    index = AnswerIndex.build(collection, tmp_path / "idx", quiet=True)
    assert (_hits(index, "wombat"), _hits(index, "quokka")) == (0, 1)


def test_repr_names_the_folder_and_the_answers(sample_index):
    # Before: <mathir.indexing.answer_index.AnswerIndex object at 0x...>
    assert repr(sample_index) == f"AnswerIndex({str(sample_index.path)!r}, 250 answers)"


def test_a_searched_index_pickles_and_searches_again(sample_index, topics):
    import pickle

    before = bm25(sample_index)(topics)  # opens PISA (a class made at run time)
    again = pickle.loads(pickle.dumps(sample_index))
    assert again.path == sample_index.path
    assert bm25(again)(topics)[["qid", "docno"]].equals(before[["qid", "docno"]])


def test_a_one_word_edit_of_latex_words_rebuilds_the_index(sample, tmp_path, monkeypatch):
    """Issue: an index's identity held no code: after a one-word change in latex_words.py
    the runs were recomputed ("mathir's source files changed") against the index the old
    code built (TF-IDF nDCG' 0.9303 where a fresh index gives 0.9344). The edit is made in
    a copy of mathir's source, which the index identity is pointed at."""
    import shutil

    from mathir.indexing import identity

    source = tmp_path / "src" / "mathir"
    shutil.copytree(identity.PACKAGE_DIR, source, ignore=shutil.ignore_patterns("__pycache__"))

    def fresh_identity():
        identity.module_sources.cache_clear()
        identity.code_digest.cache_clear()

    monkeypatch.setattr(identity, "PACKAGE_DIR", source)
    fresh_identity()
    try:
        assert source / "readers" / "latex_words.py" in identity.module_sources(
            "mathir.indexing.answer_index")
        index = AnswerIndex.build(sample.posts, tmp_path / "idx", quiet=True)
        built = index.manifest["writer"]["code"]
        (index.path / "marker").touch()
        AnswerIndex.build(sample.posts, tmp_path / "idx", quiet=True)
        assert (index.path / "marker").exists()  # unchanged code: reused

        words = source / "readers" / "latex_words.py"
        words.write_text(words.read_text().replace('"%": "percent"', '"%": "percentage"'))
        fresh_identity()
        index = AnswerIndex.build(sample.posts, tmp_path / "idx", quiet=True)
        assert not (index.path / "marker").exists()  # rebuilt
        assert index.manifest["writer"]["code"]["sha256"] != built["sha256"]
    finally:
        monkeypatch.undo()
        fresh_identity()


def test_the_code_an_index_identity_hashes_is_what_its_builder_imports():
    from mathir.indexing.identity import module_sources

    def names(module):
        return {p.relative_to(p.parents[1]).as_posix() if p.parent.name in ("indexing", "readers")
                else p.name for p in module_sources(module)}

    answers = names("mathir.indexing.answer_index")
    # the readers, the tokenizers and the writers, also those imported inside functions
    assert {"readers/latex_words.py", "readers/html_text.py", "readers/mse_posts.py",
            "readers/thread_html.py", "readers/safe_xml.py", "indexing/tfidf.py",
            "indexing/answer_collection.py", "indexing/pisa_bm25.py",
            "indexing/text_store.py", "indexing/pisa_impacts.py",
            "indexing/text_loader.py", "indexes.py", "files.py"} <= answers
    assert {"indexing/slt.py", "indexing/formula_build.py", "indexing/formula_source.py",
            "indexing/answer_collection.py", "indexing/pisa_bm25.py"} <= \
        names("mathir.indexing.formula_index")
    assert {"bi_encoder.py", "export.py", "runtime.py", "calibration.py"} <= \
        names("mathir.indexing.dense_index")
    # not the rest of mathir: editing a report or a measure rebuilds no index
    assert not answers & {"report.py", "running.py", "commands.py", "identity.py"}
