import numpy as np
import pytest

from mathir.answer_checking.solver import FEATURES, TemplateSolver
from mathir.readers.word_problems import iter_derivation_problems, read_split, textual_numbers
from mathir.samples import word_problems_sample

SUM_DIFF = "The sum of two numbers is 30 and their difference is 8 . Find the numbers ."


@pytest.fixture(scope="module")
def solver():
    s = word_problems_sample()
    train = set(read_split(s.split("train")))
    return TemplateSolver([p for p in iter_derivation_problems(s.problems) if p.id in train])


def test_usage_prefers_leaving_number_words_unused(solver):
    # In the training sample "two" (of "two numbers") is never aligned, digits always are.
    cands, feats = solver.featurize(SUM_DIFF, [("9002", 1.0)])
    two = textual_numbers(SUM_DIFF)[0]
    usage = feats[:, FEATURES.index("usage")]
    uses_two = np.array([two in c.derivation.alignment.values() for c in cands])
    assert uses_two.any() and (~uses_two).any()
    assert usage[~uses_two].min() > usage[uses_two].max()


def test_usage_leaves_own_counts_out(solver):
    full = solver._usage_logp(["two", "#"], None)
    loo = solver._usage_logp(["two", "#"], "9002")  # 9002 has "two" unused
    assert full[0, 0] > loo[0, 0]  # less evidence that "two" stays unused
    assert np.allclose(np.exp(full).sum(axis=1), 1.0)


def test_zero_and_vote_features(solver):
    cands, feats = solver.featurize(SUM_DIFF, [("9002", 1.0), ("9007", 0.5)])
    zero = feats[:, FEATURES.index("zero")]
    assert np.array_equal(zero, [float((np.abs(c.solution) < 1e-9).any()) for c in cands])
    vote = feats[:, FEATURES.index("vote")]
    assert ((vote >= 0) & (vote <= 1)).all()
    # both neighbours have the same template and context, so their best alignments agree
    # and the solution (19, 11) gets every vote
    agreed = [v for c, v in zip(cands, vote, strict=True)
              if sorted(c.solution.round(6).tolist()) == [11.0, 19.0]]
    assert agreed and max(agreed) == pytest.approx(1.0)
    assert sorted(set(vote.round(6).tolist()))[0] == 0.0
