import json

import pytest

from mathir.pipelines.word_problems import (
    ProblemRetriever,
    WordProblemIndex,
    mask_numbers,
    template_retrieval,
    trained_template_retrieval,
)
from mathir.samples import word_problems_sample
from mathir.topics.word_problems import problems_file, read_problem_topics


@pytest.fixture(scope="module")
def index():
    s = word_problems_sample()
    return WordProblemIndex.build(s.problems, train=s.split("train"))


def test_index_holds_train_only(index):
    assert index.num_docs == 9 and "9101" not in index.docnos()


def test_problems_file_naming(tmp_path):
    assert problems_file(tmp_path / "kushman-fold-3.txt").name == "kushman.json"
    assert problems_file(tmp_path / "dolphin-t2-fold-new-0.txt").name == "dolphin_t2_final.json"
    assert problems_file(tmp_path / "draw-test.txt").name == "draw.json"


def test_retriever_masks_numbers(index):
    assert mask_numbers("costs 7 dollars or twice that") == "costs NUM dollars or NUM that"
    topics = read_problem_topics(word_problems_sample().split("test"))
    res = ProblemRetriever(index, 3).transform(topics.iloc[[1]])
    assert list(res["rank"]) == [0, 1, 2]
    assert res["docno"].iloc[0] in {"9002", "9007"}  # the other sum/difference problems


def test_solver_pipeline_on_sample(index):
    s = word_problems_sample()
    topics = read_problem_topics(s.split("test"))
    res = template_retrieval(index).transform(topics)
    assert list(res["qid"]) == list(topics["qid"])
    sols = {q: sorted(json.loads(x)) for q, x in zip(res["qid"], res["solution"], strict=True)}
    assert sols["9102"] == [11.0, 19.0] and sols["9103"] == [8.0, 19.0]
    eqs = json.loads(res.set_index("qid").loc["9101", "equations"])
    assert len(eqs) == 2


def _decoded(res):
    return res.assign(**{c: res[c].map(json.loads)
                         for c in ("solution", "template", "alignment", "equations")})


def test_both_solvers_scored_on_the_sample_test_split(index):
    """The solvers' figures on DRAW-1K's 200 test problems (docs/word_problems.md) are
    checked by ``benchmarks/word_problem_solver.py``; here the same path (index, hand and
    trained weights, :func:`compare`) on the sample's 5 test problems."""
    from mathir.evaluation.word_problems import compare
    from mathir.qrels.word_problems import read_gold

    s = word_problems_sample()
    topics = read_problem_topics(s.split("test"))
    table = compare({"hand": _decoded(template_retrieval(index).transform(topics)),
                     "trained": _decoded(trained_template_retrieval(index).transform(topics))},
                    read_gold(s.split("test")))
    accuracies = ["solution_acc", "equation_acc", "derivation_acc"]
    # one of the 5 is solved right by equations other than the annotated ones
    assert table.loc["hand", accuracies].tolist() == pytest.approx([1.0, 0.8, 1.0])
    assert table.loc["trained", accuracies].tolist() == pytest.approx([1.0, 0.8, 1.0])
