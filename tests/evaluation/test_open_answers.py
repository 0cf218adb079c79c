from pathlib import Path

import pandas as pd
import pytest

from mathir.errors import InputError
from mathir.evaluation import open_answers as oa
from mathir.evaluation.open_answer_references import (
    ablate,
    normalize_answer,
    task1_references,
    task3_references,
)
from mathir.evaluation.open_answers import (
    AnswerModel,
    automatic_measures,
    evaluate_open_answers,
    lexical_overlap,
    manual_measures,
    token_f1,
)
from mathir.qrels.arqmath import read_task3_qrels
from mathir.runs.arqmath_task3 import read_assignments, read_task3_run

ALPHA1 = "alpha-task3-run1-auto-both-extract-P"
ALPHA2 = "alpha-task3-run2-auto-both-extract-A"
BETA = "beta-task3-gen-auto-both-generate-P"
GAMMA = "gamma-task3-run1-manual-both-extract-P"


class WhitespaceModel(AnswerModel):
    """Tokens are whitespace-separated words: LO by hand without transformers."""

    def __init__(self):
        super().__init__("whitespace", 0)

    def tokenize(self, text):
        return frozenset(text.split())


@pytest.fixture(scope="module")
def judged(sample):
    runs = {p.stem: read_task3_run(p) for p in sorted(sample.task3_runs.glob("*.tsv"))}
    return runs, read_assignments(sample.task3_assignments), read_task3_qrels(sample.task3_qrels)


@pytest.fixture(scope="module")
def minilm():
    pytest.importorskip("bert_score")
    return AnswerModel.offline_default()


def test_normalize_answer_like_the_organisers():
    assert normalize_answer("a $x$ b") == "a [MATH] x [/MATH] b"
    assert normalize_answer("$$\\sum x$$ and \\$5") == " [MATH] \\sum x [/MATH] and \\$5"
    assert normalize_answer("merge $x$ $y$  here") == "merge [MATH] x y [/MATH] here"
    assert normalize_answer("ends with $z$") == "ends with [MATH] z"


def test_manual_measures_by_hand(judged):
    _, a, q = judged
    t = manual_measures(a, q)
    # alpha run 1: nine answers judged 3 and one 2; gamma: 3,1,3,0,3,5,1,0,6,3 (5, 6 -> 0)
    assert t.loc[ALPHA1].tolist() == [2.9, 1.0]
    assert t.loc[GAMMA].tolist() == pytest.approx([14 / 10, 4 / 10])


def test_manual_measures_average_over_answered_topics(judged):
    _, a, q = judged
    fewer = a[~((a.run == GAMMA) & (a.qid == "A.1"))]  # gamma's A.1 (judged 3) left out
    assert manual_measures(fewer, q, [GAMMA]).loc[GAMMA].tolist() == pytest.approx([11 / 9, 3 / 9])
    with pytest.raises(InputError, match="not in the assignment file"):
        manual_measures(a, q, ["nobody"])


def test_token_f1_and_lexical_overlap_by_hand():
    assert token_f1({"a", "b"}, {"c"}) == 0.0 and token_f1(set(), {"c"}) == 0.0
    answers = {"A.1": "the cat sat on the mat", "A.2": "x is two", "A.3": "no refs"}
    refs = {"A.1": ["a cat sat", "the dog ran"], "A.2": ["x is two"]}
    lo = lexical_overlap(answers, refs, WhitespaceModel())
    # A.1: {the,cat,sat,on,mat} vs {a,cat,sat}: P 2/5, R 2/3 -> F1 0.5; vs {the,dog,ran}: 0.25
    assert lo.to_dict() == pytest.approx({"A.1": 0.5, "A.2": 1.0})


def test_lexical_overlap_with_the_packaged_tokenizer_by_hand(minilm):
    answers = {"A.1": "the cat sat on the mat", "A.2": "x is two"}
    refs = {"A.1": ["a cat sat", "the dog ran"], "A.2": ["x is two"]}
    assert minilm.tokenize("The cat sat on the mat") == {"the", "cat", "sat", "on", "mat"}
    assert lexical_overlap(answers, refs, minilm).mean() == pytest.approx(0.75)


@pytest.fixture
def neutral_model_path():
    """The packaged model under a path bert-score reads as a BERT's: bert-score picks its
    model class by substrings of the name it is given ("t5" anywhere: a random T5), so a
    checkout under such a folder would give the direct call, not mathir, a wrong model."""
    import shutil
    import tempfile

    while True:
        folder = Path(tempfile.mkdtemp(prefix="ref", dir="/tmp"))
        if "t5" not in str(folder).lower():
            break
        folder.rmdir()
    (folder / "model").symlink_to(oa.default_model_path(), target_is_directory=True)
    yield str(folder / "model")
    shutil.rmtree(folder)


def test_contextual_similarity_equals_a_direct_bert_score_call(minilm, neutral_model_path):
    from bert_score import BERTScorer

    answers = {"A.1": "Use the chain rule on e to the x log x.", "A.2": "It diverges."}
    refs = {"A.1": ["Write x^x as exp(x ln x) and differentiate.", "Take logarithms first."],
            "A.2": ["The series diverges by the integral test."]}
    ours = oa.contextual_similarity(answers, refs, minilm)
    direct = BERTScorer(model_type=neutral_model_path, num_layers=6)
    _, _, f1 = direct.score(list(answers.values()), [refs["A.1"], refs["A.2"]])
    assert ours.tolist() == pytest.approx(f1.tolist(), abs=1e-6)
    single = [direct.score([answers["A.1"]], [r])[2].item() for r in refs["A.1"]]
    assert ours["A.1"] == pytest.approx(max(single), abs=1e-5)  # best reference counts
    # mathir builds the scorer without BERTScorer.__init__ (its model by the config, not
    # the name: tests/test_models.py): the same attributes, the same hash
    assert sorted(vars(minilm.scorer())) == sorted(vars(direct))
    assert minilm.scorer().hash == direct.hash.replace(neutral_model_path,
                                                       str(oa.default_model_path()))


def test_references_and_same_team_ablation(judged):
    runs, a, q = judged
    refs = task3_references(runs, a, q)
    # Every relevant (2-3) distinct answer once, with the runs that gave it.
    assert len(refs) == 19
    a8 = refs[refs.qid == "A.8"]
    assert a8.runs.tolist() == [frozenset({ALPHA1, ALPHA2, BETA})]
    kept = ablate(refs, {ALPHA1, ALPHA2})
    dropped = refs.merge(kept, how="left", indicator=True).query("_merge == 'left_only'")
    assert all(r <= {ALPHA1, ALPHA2} for r in dropped.runs)
    assert all(not r <= {ALPHA1, ALPHA2} for r in kept.runs)
    # alpha-only references: A.1 (run 2), A.2, A.4 x2, A.6, A.7, A.9 x2
    assert sorted(dropped.qid) == ["A.1", "A.2", "A.4", "A.4", "A.6", "A.7", "A.9", "A.9"]


def test_ablation_removes_a_teams_own_answers(judged):
    runs, a, q = judged
    refs = task3_references(runs, a, q)
    model = WhitespaceModel()
    alpha = {ALPHA1: runs[ALPHA1]}
    # alpha run 1's answers are all relevant: without ablation each matches itself.
    assert automatic_measures(alpha, refs, model, ["LO"], ablation=False).loc[ALPHA1, "LO"] == 1.0
    ablated = automatic_measures(alpha, refs, model, ["LO"]).loc[ALPHA1, "LO"]
    assert ablated == pytest.approx(0.696739, abs=1e-6)
    # Declaring alpha run 2 another team keeps the A.6 answer both alpha runs gave.
    other = automatic_measures(alpha, refs, model, ["LO"], teams={ALPHA2: "other"})
    assert other.loc[ALPHA1, "LO"] == pytest.approx(0.791844, abs=1e-6)
    # gamma shares all its relevant answers with alpha: its ablation drops nothing.
    assert len(ablate(refs, {GAMMA})) == len(refs)
    plain = automatic_measures({GAMMA: runs[GAMMA]}, refs, model, ["LO"], ablation=False)
    same = automatic_measures({GAMMA: runs[GAMMA]}, refs, model, ["LO"])
    assert plain.loc[GAMMA, "LO"] == same.loc[GAMMA, "LO"]


def test_task1_references_length_and_contributors():
    q = pd.DataFrame({"qid": ["A.1"] * 3, "docno": ["7", "8", "9"], "label": [3, 2, 1]})
    texts = {"7": "Short $x$.", "8": "y" * 1201, "9": "Not relevant."}
    refs = task1_references(texts, q)
    assert refs.text.tolist() == ["Short [MATH] x [/MATH] ."] and refs.runs.tolist() == [frozenset()]
    run = pd.DataFrame({"qid": ["A.1", "A.1"], "docno": ["7", "9"]})
    refs = task1_references(texts, q, {"team-task1-a": run, "other-task1-b": run.iloc[1:]})
    assert refs.runs.tolist() == [frozenset({"team-task1-a"})]
    assert task1_references(texts, q, {"x": run.iloc[1:]}).empty  # 7 was never retrieved


def test_evaluate_without_runs_needs_assignments(judged):
    _, a, q = judged
    with pytest.raises(InputError, match="nothing to evaluate"):
        evaluate_open_answers({}, q)
    assert list(evaluate_open_answers({}, q, a).columns) == ["AR", "P@1"]


def test_missing_neural_extra_skips_lo_and_cs(judged, monkeypatch):
    runs, a, q = judged
    monkeypatch.setattr(oa, "neural_available", lambda: False)
    with pytest.warns(UserWarning, match=r"pip install 'mathir\[neural\]'"):
        t = evaluate_open_answers(runs, q, a)
    assert list(t.columns) == ["AR", "P@1"]


def test_evaluate_open_answers_says_numbers_are_not_official(judged, minilm):
    runs, a, q = judged
    with pytest.warns(UserWarning, match="not comparable"):
        t = evaluate_open_answers({GAMMA: runs[GAMMA]}, q, a, pool=runs, model=minilm)
    assert list(t.columns) == ["AR", "P@1", "LO", "CS"]
    assert "witiko/mathberta" in t.attrs["note"]
    # LO: token-set F1 over MiniLM's word pieces (exact); CS: its BERTScore (float noise).
    assert t.loc[GAMMA, "LO"] == pytest.approx(0.596287, abs=1e-6)
    assert t.loc[GAMMA, "CS"] == pytest.approx(0.6935, abs=1e-4)


def test_source_measures_score_extractive_runs_by_their_source_post():
    run = pd.DataFrame({"qid": ["A.1", "A.2", "A.3"], "sources": ["7", "8", "9"]})
    q = pd.DataFrame({"qid": ["A.1", "A.2"], "docno": ["7", "5"], "label": [3, 2]})
    # A.1 judged 3; A.2's source unjudged (0); A.3 not a qrels topic (ignored)
    assert oa.source_measures({"r": run}, q).loc["r"].tolist() == [1.5, 0.5]
