"""Every index answers PyTerrier's ``pt.text.get_text(index, fields)`` (``text_loader``).

Before, none had a ``text_loader``: ``pt.text.get_text(index, "text")`` raised
"indexlike must provide a .text_loader() method".
"""

from __future__ import annotations

import json

import pandas as pd
import pyterrier as pt
import pytest

from mathir.errors import InputError
from mathir.indexing.dense_index import AnswerTexts, DenseAnswerIndex
from mathir.indexing.fact_index import FactIndex
from mathir.indexing.formula_index import FormulaIndex
from mathir.indexing.text_loader import TextLoader
from mathir.samples import worldtree_sample


def _results(docnos: list[str]) -> pd.DataFrame:
    """A result frame of one query over ``docnos`` (repeats allowed), as a retriever returns."""
    return pd.DataFrame({"qid": ["q1"] * len(docnos), "query": ["x"] * len(docnos),
                         "docno": docnos, "score": [float(-i) for i in range(len(docnos))],
                         "rank": list(range(len(docnos)))})


@pytest.fixture(scope="module")
def answer_texts(sample_index):
    return AnswerTexts.for_index(sample_index)


def test_answer_index_loads_title_and_text_by_docno(sample_index, answer_texts):
    assert isinstance(sample_index, pt.text.HasTextLoader)
    docnos = ["1003", "1002", "1003"]  # not in index order, one repeated
    out = pt.text.get_text(sample_index, "text")(_results(docnos))
    assert out.columns.tolist() == ["qid", "query", "docno", "score", "rank", "text"]
    assert out["docno"].tolist() == docnos
    assert out["text"].tolist() == [answer_texts.fetch([d])[d][1] for d in docnos]
    assert "$x^x=e^{x\\ln x}$" in out["text"][1]  # formulas as LaTeX, not as words
    both = pt.text.get_text(sample_index)(_results(["1002"]))  # "*": every field
    assert both[["title", "text"]].values.tolist() == [list(answer_texts.fetch(["1002"])["1002"])]
    assert both["title"][0].startswith("Derivative of $x^x$")


def test_a_loaded_column_replaces_the_old_one_and_an_empty_frame_gets_it(sample_index):
    frame = _results(["1002"]).assign(text=["stale"])
    out = pt.text.get_text(sample_index, ["text"])(frame)
    assert out.columns.tolist().count("text") == 1 and out["text"][0] != "stale"
    empty = pt.text.get_text(sample_index, "text")(_results([]))
    assert empty.empty and "text" in empty.columns


def test_unknown_fields_docnos_and_frames_are_input_errors(sample_index):
    with pytest.raises(InputError, match="no field 'body' here: the fields are title, text"):
        pt.text.get_text(sample_index, "body")
    with pytest.raises(InputError, match=r"no document 'nope' \(1 of 2 not found\)"):
        pt.text.get_text(sample_index, "text")(_results(["1002", "nope"]))
    with pytest.raises(InputError, match="reads the docno column"):
        pt.text.get_text(sample_index, "text")(pd.DataFrame({"qid": ["1"]}))


def test_a_rank_cutoff_before_the_loader_is_fused(sample_index):
    loader = pt.text.get_text(sample_index, "text")
    fused = loader.fuse_rank_cutoff(1)
    assert fused(_results(["1002", "1003"]))["docno"].tolist() == ["1002"]


def test_the_loader_reads_in_chunks():
    calls = []

    def lookup(docnos, fields):
        calls.append(list(docnos))
        return {d: (d.upper(),) for d in docnos}

    loader = TextLoader(lookup, ["text"], "text", chunk_size=2)
    assert loader(_results(["a", "b", "c", "a"]))["text"].tolist() == ["A", "B", "C", "A"]
    assert calls == [["a", "b"], ["c"]]


def test_fact_index_loads_text_and_table(tmp_path):
    index = FactIndex.build(worldtree_sample().tables, tmp_path / "facts")
    docnos = index.docnos()[:3][::-1]
    out = pt.text.get_text(index)(_results(docnos))
    texts = index.texts()
    tables = dict(zip(index.facts["docno"], index.facts["table"], strict=True))
    assert out["text"].tolist() == [texts[d] for d in docnos]
    assert out["table"].tolist() == [tables[d] for d in docnos]


def test_formula_index_loads_latex_and_ids(tmp_path, sample):
    index = FormulaIndex.build(sample.formulas, tmp_path / "formulas", quiet=True)
    meta = index.meta
    docnos = index.docnos()[:4][::-1]
    out = pt.text.get_text(index, ["text", "post_id", "visual_id"])(_results(docnos))
    assert out["post_id"].tolist() == meta.loc[docnos, "post_id"].tolist()
    assert out["visual_id"].tolist() == meta.loc[docnos, "visual_id"].tolist()
    assert out["text"].tolist()[-1] == "x^x"  # the title's formula of post 1001
    assert all(isinstance(t, str) and t for t in out["text"])
    # the ids come from the index alone: no pass over the source
    assert pt.text.get_text(index, "thread_id")(_results(docnos))["thread_id"].notna().all()


def _dense_manifest(folder, texts_collection: dict) -> DenseAnswerIndex:
    """A dense index's manifest written by hand (the vectors are not needed to load texts)."""
    folder.mkdir(exist_ok=True)
    (folder / "manifest.json").write_text(json.dumps({
        "kind": "dense-answers", "texts": texts_collection, "num_docs": 250}))
    return DenseAnswerIndex(folder)


def test_dense_index_loads_the_texts_its_passages_were_cut_from(tmp_path, sample):
    # where for_index puts them: <index>-texts beside <index>-dense-<model>
    texts = AnswerTexts.build(sample.posts, tmp_path / "answers-texts", quiet=True)
    index = _dense_manifest(tmp_path / "answers-dense-test", texts.manifest["collection"])
    assert index.texts().path == texts.path
    out = pt.text.get_text(index, "text")(_results(["1002"]))
    assert out["text"].tolist() == [texts.fetch(["1002"])["1002"][1]]
    # elsewhere: built beside it from the collection its manifest records
    apart = _dense_manifest(tmp_path / "apart", texts.manifest["collection"])
    assert apart.texts().path == tmp_path / "apart-texts"
    assert pt.text.get_text(apart)(_results(["1002"]))["text"].tolist() == out["text"].tolist()
    # texts of another collection are refused
    other = dict(texts.manifest["collection"], sha256="0" * 64)
    with pytest.raises(InputError, match="of another collection"):
        _dense_manifest(tmp_path / "answers-dense-test", other).text_loader()
