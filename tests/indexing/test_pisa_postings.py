"""The numpy PISA writer: the same files as pyterrier-pisa's own toks indexer, any run size."""

from __future__ import annotations

import random

import pytest

from mathir.indexing import pisa_postings
from mathir.indexing.pisa_postings import (
    PisaLexicon,
    PostingsWriter,
    document_frequencies,
    write_pisa_index,
)

FILES = ["inv.docs", "inv.freqs", "inv.sizes", "fwd.documents", "fwd.terms", "fwd.doclex",
         "fwd.termlex"]


def _docs(n: int, seed: int = 0) -> list[tuple[str, dict[str, int]]]:
    rng = random.Random(seed)
    vocab = [f"t{i}" for i in range(300)] + ["zz", "a", "b0", "ab"]
    docs = []
    for i in range(n):
        k = rng.randint(1, 12)
        toks = {rng.choice(vocab): rng.randint(1, 5) for _ in range(k)}
        docs.append((f"d{i}", toks))
    return docs


def _pyterrier_pisa(path, docs):
    from pyterrier_pisa import PisaIndex

    PisaIndex(str(path), stemmer="none", threads=1).toks_indexer(scale=1.0, batch_size=97) \
        .index({"docno": d, "toks": t} for d, t in docs)


# Runs of one posting merged one at a time write a file per posting: 150 documents
# (about 1,000 postings, so 1,000 run files merged) exercise that as 700 would, 5x sooner.
@pytest.mark.parametrize("run_postings,merge_postings,num_docs", [
    (1 << 24, 1 << 24, 700), (50, 40, 700), pytest.param(1, 1, 150, marks=pytest.mark.slow)])
def test_same_files_as_pyterrier_pisa(tmp_path, monkeypatch, run_postings, merge_postings,
                                      num_docs):
    docs = _docs(num_docs)
    _pyterrier_pisa(tmp_path / "theirs", docs)
    monkeypatch.setattr(pisa_postings, "_MERGE_POSTINGS", merge_postings)
    writer = PostingsWriter(tmp_path / "ours", run_postings=run_postings)
    for docno, toks in docs:
        writer.add(docno, writer.encode(toks))
    counts = writer.close()
    assert counts["num_docs"] == num_docs
    for name in FILES:
        assert (tmp_path / "ours" / name).read_bytes() == \
            (tmp_path / "theirs" / name).read_bytes(), name
    assert sorted(p.name for p in (tmp_path / "ours").iterdir()) == sorted(FILES + ["pt_meta.json"])


def test_searches_as_pisa_index(tmp_path):
    import pandas as pd
    from pyterrier_pisa import PisaIndex

    docs = _docs(200, seed=3)
    write_pisa_index(tmp_path / "ours", docs)
    _pyterrier_pisa(tmp_path / "theirs", docs)
    q = pd.DataFrame({"qid": ["1", "2"], "query_toks": [{"t1": 1.0, "t7": 2.0}, {"zz": 1.0}]})
    ours = PisaIndex(str(tmp_path / "ours"), stemmer="none", threads=1).bm25(
        num_results=50, toks_scale=1.0)(q)
    theirs = PisaIndex(str(tmp_path / "theirs"), stemmer="none", threads=1).bm25(
        num_results=50, toks_scale=1.0)(q)
    assert len(ours) > 10
    pd.testing.assert_frame_equal(ours, theirs)


def test_non_positive_counts_and_bad_docnos(tmp_path):
    writer = PostingsWriter(tmp_path / "p")
    doc = writer.encode({"a": 0, "b": 1.9, "c": -1})
    assert doc.tolist() == [0, 1]  # only b, counted 1 (truncated as pyterrier-pisa does)
    with pytest.raises(ValueError, match="docno"):
        writer.add("two words", doc)


def test_parts_of_consecutive_slices_make_the_same_index(tmp_path, monkeypatch):
    from mathir.indexing.pisa_postings import write_index

    docs = _docs(500, seed=7)
    write_pisa_index(tmp_path / "whole", docs)
    monkeypatch.setattr(pisa_postings, "_MERGE_POSTINGS", 64)
    parts = []
    for i, (lo, hi) in enumerate([(0, 120), (120, 121), (121, 500)]):
        writer = PostingsWriter(tmp_path / f"part{i}", run_postings=200)
        for docno, toks in docs[lo:hi]:
            writer.add(docno, writer.encode(toks))
        parts.append(writer.flush())
    counts = write_index(tmp_path / "merged", parts)
    assert counts["num_docs"] == 500
    for name in FILES:
        assert (tmp_path / "merged" / name).read_bytes() == \
            (tmp_path / "whole" / name).read_bytes(), name
    assert all(not any(p.iterdir()) for p in parts)  # the parts' files are consumed


def test_lexicon_finds_every_term_and_no_other(tmp_path):
    # Non-ASCII terms too: the lexicon is sorted by code point, UTF-8 bytes keep that order.
    terms = ["a", "b", "z", "é", "ß", "α", "x2", "x10", "ab"]
    docs = [(f"d{i}", {t: i + 1, "a": 1}) for i, t in enumerate(terms)]
    write_pisa_index(tmp_path / "p", docs)
    lexicon = PisaLexicon(tmp_path / "p")
    listed = (tmp_path / "p" / "fwd.terms").read_text(encoding="utf-8").splitlines()
    assert len(lexicon) == len(listed) == len(terms)
    assert lexicon.ids(listed).tolist() == list(range(len(listed)))
    assert lexicon.ids(["", "aa", "c", "zz", "ω", "x1"]).tolist() == [-1] * 6
    df = document_frequencies(tmp_path / "p")
    assert df[lexicon.ids(["a", "b"])].tolist() == [len(terms), 1]
