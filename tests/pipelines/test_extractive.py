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


def test_cut_answers_for_every_limit():
    # Spaces and sentence ends inside $...$ are no place to cut.
    sentences = ["Let $a^2 + b^2 = c^2$ hold.", "Then $c>a$!", "Why?", "Because $b. x ! y$ is.",
                 "Done."]
    text = " ".join(sentences)
    whole = [" ".join(sentences[:k]) for k in range(1, len(sentences) + 1)]
    for n in range(1, len(text) + 2):
        fitting = [p for p in whole if len(p) <= n]
        if fitting:  # the most whole sentences that fit
            want = fitting[-1]
        elif n >= len("Let $a^2 + b^2 = c^2$"):  # else up to the last space outside formulas
            want = "Let $a^2 + b^2 = c^2$"
        elif n >= len("Let"):
            want = "Let"
        else:  # else a hard cut
            want = text[:n]
        assert cut_answer(text, n) == want, n


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
    texts = index_collection_texts(sample_index)
    system = extractive(retrieval(sample_index), texts, 300)
    out = system(topics)
    assert sorted(out.qid) == sorted(topics.qid)
    # Each topic's answer is the retriever's top answer, cut to 300 characters.
    ranked = retrieval(sample_index)(topics)
    top = ranked[ranked["rank"] == 0].set_index("qid")["docno"]
    assert out.set_index("qid")["docno"].to_dict() == top.to_dict()
    full = texts(top.tolist())
    assert out["answer"].tolist() == [cut_answer(full[d], 300) for d in out["docno"]]
    assert out["sources"].tolist() == out["docno"].tolist()
    validate_task3_run(out, topics.qid, max_chars=300)  # writable as a Task 3 run
    assert "ExtractiveAnswer(max_chars=300)" in repr(system)
