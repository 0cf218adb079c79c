import json

import pytest

from mathir.errors import InputError
from mathir.indexing.answer_index import AnswerCollection
from mathir.indexing.dense_index import (
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
    stamp = (path / "texts.jsonl").stat().st_mtime_ns
    AnswerTexts.build(sample.posts, path, quiet=True)
    assert (path / "texts.jsonl").stat().st_mtime_ns == stamp
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
    assert sibling(sample_index, "texts") == sample_index.path.parent / "answers-texts"
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
