import json
import multiprocessing
import pickle
import sqlite3
import stat
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd
import pyterrier as pt
import pytest

from mathir.errors import InputError
from mathir.indexing import text_store
from mathir.indexing.answer_collection import AnswerCollection
from mathir.indexing.dense_index import (
    TEXTS_FORMAT,
    AnswerTexts,
    DenseAnswerIndex,
    PassageSettings,
    collection_of,
    iter_answer_texts,
    sibling,
)


def test_answer_texts_keep_latex_and_titles(sample, tmp_path):
    texts = AnswerTexts.build(sample.posts, tmp_path / "t", quiet=True)
    docs = list(iter_answer_texts(AnswerCollection.at(sample.posts)))
    assert len(texts) == len(docs) == 250
    first = docs[0]
    assert texts[first["docno"]] == f"{first['title']} {first['text']}"
    assert any("$" in texts[d] and "\\" in texts[d] for d in texts)  # LaTeX, not words
    frame = texts.frame()
    assert list(frame.columns) == ["docno", "title", "text"] and frame["docno"].map(type).eq(str).all()


def test_answer_texts_reused_and_rebuilt(sample, tmp_path):
    path = tmp_path / "t"
    AnswerTexts.build(sample.posts, path, quiet=True)
    stamp = (path / "texts.sqlite").stat().st_mtime_ns
    AnswerTexts.build(sample.posts, path, quiet=True)
    assert (path / "texts.sqlite").stat().st_mtime_ns == stamp
    AnswerTexts.build(sample.posts, path, overwrite=True, quiet=True)
    assert json.loads((path / "manifest.json").read_text())["num_docs"] == 250


def test_not_a_texts_directory(tmp_path):
    with pytest.raises(InputError, match="not a mathir answer-texts"):
        AnswerTexts(tmp_path)
    with pytest.raises(InputError, match="not a mathir dense answer index"):
        DenseAnswerIndex(tmp_path)


def test_passages_repeat_the_title_and_cover_long_answers():
    import pandas as pd

    docs = pd.DataFrame({"docno": ["long", "short"], "title": ["T", ""],
                         "text": [" ".join(f"w{i}" for i in range(25)), "just this"]})
    out = PassageSettings(length=10, stride=5).transformer()(docs)
    long = out[out.docno.str.startswith("long%p")]
    assert len(long) == 4  # windows at 0, 5, 10, 15 (the last reaching the end)
    assert all(t.startswith("T w") for t in long.text)
    assert long.text.iloc[-1].endswith("w24")
    assert out[out.docno == "short%p0"].text.tolist() == ["just this"]
    assert "title" not in out.columns


def test_sibling_and_collection_of(sample_index, sample):
    assert sibling(sample_index, "texts") == sample_index.path.parent / "sample-answers-texts"
    assert collection_of(sample_index).path == sample.posts.resolve()


def test_dense_index_holds_every_passage(sample_index):
    pytest.importorskip("pyterrier_dr")
    from mathir.pipelines.neural import load_bi_encoder

    dense = DenseAnswerIndex.for_index(sample_index, load_bi_encoder())
    texts = AnswerTexts.for_index(sample_index)
    passages = PassageSettings().transformer()(texts.frame())
    assert dense.manifest["num_passages"] == len(passages) >= len(texts)
    docnos, vectors, _ = dense.flex().payload()
    assert vectors.shape == (len(passages), 384)
    assert [docnos.fwd[i] for i in range(3)] == passages.docno.tolist()[:3]
    assert dense.model_path.endswith("model")


# Answers no real collection spells so awkwardly: the store must give them back exactly.
ODD = [
    {"docno": "10", "title": "Ünïcödé — ∑ title", "text": "$\\frac{a}{b}$ and $$x^{2}$$ 😀"},
    {"docno": "2", "title": "", "text": "no title:\ttab,\nnewline,\r\nCRLF, 'quotes' \"and\" \\"},
    {"docno": "x 1", "title": "  spaces  ", "text": ""},
    {"docno": "3", "title": "T", "text": "NUL-free but \u2028line separator\u2029 and \x7f"},
] + [{"docno": f"d{i}", "title": f"t{i % 3}" if i % 3 else "", "text": f"answer {i} $x_{i}$"}
     for i in range(40)]


def _joined(doc):
    return f"{doc['title']} {doc['text']}" if doc["title"] else doc["text"]


@pytest.fixture
def odd_texts(sample, tmp_path, monkeypatch):
    """AnswerTexts holding ODD (the build reads the sample's fingerprint, ODD's answers)."""
    monkeypatch.setattr(text_store, "iter_answer_texts", lambda collection: iter(ODD))
    return AnswerTexts.build(sample.posts, tmp_path / "t", quiet=True)


def test_texts_round_trip_exactly(odd_texts):
    assert len(odd_texts) == len(ODD)
    assert list(odd_texts) == [d["docno"] for d in ODD]  # collection order, not sorted
    for doc in ODD:
        assert odd_texts[doc["docno"]] == _joined(doc)
    assert odd_texts.frame().to_dict("records") == ODD
    assert list(odd_texts.items()) == [(d["docno"], _joined(d)) for d in ODD]
    assert list(odd_texts.values()) == [_joined(d) for d in ODD]
    assert ("2", _joined(ODD[1])) in odd_texts.items() and "d0" in odd_texts.keys()
    assert dict(odd_texts) == {d["docno"]: _joined(d) for d in ODD}


def test_batch_lookup_keeps_order_and_repeats(odd_texts):
    want = ["d7", "10", "2", "d7", "x 1"]
    got = odd_texts.lookup(want)
    by_docno = {d["docno"]: d for d in ODD}
    assert got.to_dict("records") == [by_docno[d] for d in want]
    assert odd_texts.lookup([]).columns.tolist() == ["docno", "title", "text"]
    # More docnos than one query takes (900): all found, in order.
    many = [f"d{i % 40}" for i in range(2000, 0, -1)]
    assert odd_texts.lookup(many)["docno"].tolist() == many
    assert odd_texts.subset(["2", "nope", "d1"]) == {"2": _joined(by_docno["2"]),
                                                    "d1": _joined(by_docno["d1"])}


def test_missing_docnos_raise_key_error(odd_texts):
    with pytest.raises(KeyError, match="nope"):
        odd_texts.lookup(["10", "nope", "2"])
    with pytest.raises(KeyError):
        odd_texts["nope"]
    with pytest.raises(KeyError):
        odd_texts[10]  # "10" is stored; SQLite alone would match the number 10 to it
    assert "nope" not in odd_texts and 10 not in odd_texts and "10" in odd_texts
    assert odd_texts.get("nope", "default") == "default"
    assert set(odd_texts.fetch(["nope", "10", "10"])) == {"10"}


@pytest.mark.parametrize("chunk_size", [1, 7, 44, 1000])
def test_streaming_covers_every_answer_once_in_order(odd_texts, chunk_size):
    chunks = list(odd_texts.iter_frames(chunk_size))
    assert all(0 < len(c) <= chunk_size for c in chunks)
    assert len(chunks) == -(-len(ODD) // chunk_size)
    assert pd.concat(chunks, ignore_index=True).to_dict("records") == ODD


def test_streaming_rejects_a_bad_chunk_size(odd_texts):
    with pytest.raises(ValueError, match="chunk_size"):
        next(odd_texts.iter_frames(0))


def test_texts_are_read_on_demand(odd_texts):
    """Opening reads nothing (no frame, no dict); a lookup reads just its answers."""
    reopened = AnswerTexts(odd_texts.path)

    def loaded():
        return [k for k, v in vars(reopened).items()
                if isinstance(v, (dict, pd.DataFrame)) and k != "manifest"]

    assert loaded() == []
    assert reopened["d3"] == "answer 3 $x_3$" and "d4" in reopened
    assert reopened.lookup(["d5"])["text"].tolist() == ["answer 5 $x_5$"]
    assert loaded() == []  # nothing kept beside the file


def _listing(folder):
    return {str(p.relative_to(folder)): p.stat().st_mtime_ns for p in folder.rglob("*")}


def test_read_only_texts_open_and_serve(sample, tmp_path):
    texts = AnswerTexts.build(sample.posts, tmp_path / "ro" / "t", quiet=True)
    docnos = list(texts)[:5]
    want = [texts[d] for d in docnos]
    folder = tmp_path / "ro"
    modes = {p: p.stat().st_mode for p in [folder, *folder.rglob("*")]}
    before = _listing(folder)
    for p in sorted(modes, key=lambda p: -len(p.parts)):
        p.chmod(stat.S_IMODE(modes[p]) & ~0o222)
    try:
        again = AnswerTexts.build(sample.posts, tmp_path / "ro" / "t", quiet=True)  # reused
        assert [again[d] for d in docnos] == want
        assert again.lookup(docnos[::-1])["docno"].tolist() == docnos[::-1]
        assert sum(len(c) for c in again.iter_frames(100)) == len(texts)
        from mathir.pipelines.neural import AddAnswerText

        res = pd.DataFrame({"qid": ["1"] * 5, "docno": docnos})
        out = AddAnswerText(again)(res)
        assert [f"{t} {x}" if t else x for t, x in zip(out.title, out.text, strict=True)] == want
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            again._db().execute("CREATE TABLE t (x)")  # opened read-only even as root
        assert _listing(folder) == before  # no journal, lock or -shm file beside it
    finally:
        for p, mode in modes.items():
            p.chmod(stat.S_IMODE(mode))


def test_old_format_directory_is_rebuilt(sample, tmp_path):
    path = tmp_path / "t"
    AnswerTexts.build(sample.posts, path, quiet=True)
    manifest = json.loads((path / "manifest.json").read_text())
    # What mathir wrote before texts.sqlite: texts.jsonl, format 1.
    (path / "texts.sqlite").unlink()
    (path / "texts.jsonl").write_text('{"docno": "1", "title": "", "text": "old"}\n')
    (path / "manifest.json").write_text(json.dumps({**manifest, "format": 1, "num_docs": 1}))
    with pytest.raises(InputError, match="older format"):
        AnswerTexts(path)
    texts = AnswerTexts.build(sample.posts, path, quiet=True)
    assert texts.manifest["format"] == TEXTS_FORMAT == 2 and len(texts) == 250
    assert (path / "texts.sqlite").is_file() and not (path / "texts.jsonl").exists()


def _read_in_child(texts, docnos, queue):
    queue.put([texts[d] for d in docnos])


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_texts_serve_threads_and_worker_processes(odd_texts, method):
    docnos = [d["docno"] for d in ODD]
    want = [_joined(d) for d in ODD]
    assert odd_texts[docnos[0]] == want[0]  # the parent's connection is open
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda i: odd_texts.lookup(docnos[i:] + docnos[:i])["docno"].tolist(),
                            range(40)))
    assert got == [docnos[i:] + docnos[:i] for i in range(40)]
    clone = pickle.loads(pickle.dumps(odd_texts))
    assert clone.path == odd_texts.path and clone[docnos[1]] == want[1]
    ctx = multiprocessing.get_context(method)
    queue = ctx.Queue()
    child = ctx.Process(target=_read_in_child, args=(odd_texts, docnos, queue))
    child.start()
    assert queue.get(timeout=120) == want
    child.join(60)
    assert child.exitcode == 0
    assert odd_texts[docnos[2]] == want[2]  # the parent's connection still works


class _FakeDocEncoder(pt.Transformer):
    """A 4-dimensional 'embedding' of each passage: its length and three fixed numbers."""

    def transform(self, inp):
        vecs = [np.array([len(t), 1, 2, 3], dtype=np.float32) for t in inp["text"]]
        return inp.assign(doc_vec=vecs)


class _FakeEncoder:
    model_path = "fake-model"

    class st:  # noqa: N801 - stands for sentence-transformers' BiEncoder attribute
        @staticmethod
        def doc_encoder(verbose=False, batch_size=32):
            return _FakeDocEncoder()


def test_dense_build_streams_the_texts(sample, tmp_path, monkeypatch):
    """DenseAnswerIndex.build reads the answers chunk by chunk, never as one frame."""
    pytest.importorskip("pyterrier_dr")
    texts = AnswerTexts.build(sample.posts, tmp_path / "t", quiet=True)
    passages = PassageSettings().transformer()(texts.frame())
    chunks = []
    real = AnswerTexts.iter_frames

    def iter_frames(self, chunk_size=10_000):
        for c in real(self, 100):  # small chunks, so the sample spans several
            chunks.append(len(c))
            yield c

    def frame(self):
        raise AssertionError("the whole collection was loaded")

    monkeypatch.setattr(AnswerTexts, "iter_frames", iter_frames)
    monkeypatch.setattr(AnswerTexts, "frame", frame)
    dense = DenseAnswerIndex.build(texts, tmp_path / "d", _FakeEncoder(), quiet=True)
    assert chunks == [100, 100, 50]
    assert dense.manifest["num_passages"] == len(passages)
    docnos, vectors, _ = dense.flex().payload()
    assert [docnos.fwd[i] for i in range(len(passages))] == passages.docno.tolist()
    assert vectors[:, 0].tolist() == [len(t) for t in passages.text]


def test_add_answer_text_fetches_a_batch(odd_texts, monkeypatch):
    from mathir.pipelines.neural import AddAnswerText

    res = pd.DataFrame({"qid": ["1", "1", "2"], "docno": ["d1", "10", "d1"]})
    calls = []
    monkeypatch.setattr(AnswerTexts, "__getitem__", lambda self, d: calls.append(d))
    monkeypatch.setattr(AnswerTexts, "frame", lambda self: calls.append("frame"))
    out = AddAnswerText(odd_texts)(res)
    by_docno = {d["docno"]: d for d in ODD}
    assert out.title.tolist() == [by_docno[d]["title"] for d in res.docno]
    assert out.text.tolist() == [by_docno[d]["text"] for d in res.docno]
    assert calls == []  # one batch, no lookup per docno
    with pytest.raises(InputError, match="no text for document 'nope' \\(1 missing\\)"):
        AddAnswerText(odd_texts)(pd.DataFrame({"qid": ["1"], "docno": ["nope"]}))


def test_training_pairs_from_stored_texts_match_a_dict(odd_texts, monkeypatch):
    from mathir.pipelines.reranker_training import pairs_from_qrels

    topics = pd.DataFrame({"qid": ["1", "2"], "query": ["q1", "q2"]})
    qrels = pd.DataFrame({"qid": ["1", "1", "1", "2", "2"],
                          "docno": ["d1", "d2", "nope", "10", "d5"], "label": [2, 0, 0, 3, 1]})
    bm = pd.DataFrame({"qid": ["1"] * 4 + ["2"] * 3,
                       "docno": ["d9", "gone", "d1", "d8", "2", "d5", "d6"], "rank": [0, 1, 2, 3, 0, 1, 2]})
    want = pairs_from_qrels(topics, qrels, dict(odd_texts.items()), bm, rel=2)
    monkeypatch.setattr(AnswerTexts, "__getitem__", lambda self, d: 1 / 0)
    monkeypatch.setattr(AnswerTexts, "__contains__", lambda self, d: 1 / 0)
    got = pairs_from_qrels(topics, qrels, odd_texts, bm, rel=2)
    assert len(want) == 8 and got.equals(want)  # 1 positive and 3 negatives per topic
