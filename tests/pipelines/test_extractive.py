import pandas as pd
import pytest

from mathir.errors import InputError
from mathir.pipelines.extractive import (
    ExtractiveAnswer,
    cut_answer,
    extractive,
    index_collection_texts,
)
from mathir.pipelines.lexical import bm25, tfidf
from mathir.runs.arqmath_task3 import validate_task3_run


def test_cut_at_the_last_sentence_boundary_outside_formulas():
    text = "First part. Then $a. b$ ends here. Last sentence is long."
    assert cut_answer(text, 34) == "First part. Then $a. b$ ends here."
    # The only period before the limit is inside a formula: cut at the sentence before.
    assert cut_answer(text, 25) == "First part."
    assert cut_answer(text, 1000) == text


def test_cut_keeps_formulas_whole_without_sentence_boundary():
    text = "see $x + y = z$ and more words here"
    cut = cut_answer(text, 12)
    assert cut == "see"
    assert cut_answer("$" + "x" * 50 + "$", 20) == "$" + "x" * 19  # nothing else possible


def test_cut_answers_are_within_the_limit_for_every_limit():
    text = "Let $a^2+b^2=c^2$ hold. Then $c>a$! Why? Because $b\\neq 0$. Done."
    for n in range(1, len(text) + 2):
        assert len(cut_answer(text, n)) <= n


def test_extractive_answer_takes_the_best_scored_answer():
    res = pd.DataFrame({"qid": ["A.1", "A.1", "A.2"], "docno": ["7", "8", "9"],
                        "score": [1.0, 3.0, 0.5]})
    out = ExtractiveAnswer({"7": "a.", "8": "b.", "9": "c."})(res)
    assert out[["qid", "docno", "answer", "sources"]].values.tolist() == [
        ["A.1", "8", "b.", "8"], ["A.2", "9", "c.", "9"]]
    with pytest.raises(InputError, match="no text for answer 9"):
        ExtractiveAnswer({"8": "b."})(res)


@pytest.mark.parametrize("retrieval", [bm25, tfidf])
def test_extractive_system_on_the_sample(sample_index, sample, retrieval):
    from mathir.topics.arqmath import read_task1_topics

    topics = read_task1_topics(sample.task1_topics)
    system = extractive(retrieval(sample_index), index_collection_texts(sample_index), 300)
    out = system(topics)
    assert sorted(out.qid) == sorted(topics.qid)
    assert (out.answer.str.len() <= 300).all()
    validate_task3_run(out, topics.qid, max_chars=300)  # writable as a Task 3 run
    assert "ExtractiveAnswer(max_chars=300)" in repr(system)
