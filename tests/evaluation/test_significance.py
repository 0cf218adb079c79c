import numpy as np
import pandas as pd
import pytest
from scipy import stats

from mathir.evaluation.significance import significance_table


def frame(values, qids=None):
    qids = qids or [str(i) for i in range(len(values))]
    return pd.DataFrame({"qid": qids, "m": values})


def test_ties_everywhere_are_never_significant_and_never_nan():
    base = frame([0.1, 0.5, 0.9])
    t = significance_table({"b": base, "same": base.copy(), "other": frame([0.2, 0.6, 1.0])}, ["m"],
                           baseline="b")
    same = t.loc[("same", "m")]
    assert same["p"] == 1.0 and same["p_corrected"] == 1.0 and not same["significant"]
    assert not t.isna().any().any()
    # a constant non-zero improvement is as significant as it gets for a t-test
    assert t.loc[("other", "m"), "p"] == 0.0 and t.loc[("other", "m"), "significant"]


@pytest.mark.parametrize("test", ["t", "wilcoxon"])
def test_p_values_and_holm_match_scipy_and_hand_computation(test):
    rng = np.random.default_rng(0)
    base = rng.random(30)
    systems = {"base": frame(base), "a": frame(base + rng.normal(0.05, 0.1, 30)),
               "b": frame(base + rng.normal(0.0, 0.1, 30))}
    t = significance_table(systems, ["m"], baseline="base", test=test)
    fn = stats.ttest_rel if test == "t" else stats.wilcoxon
    p = {n: fn(systems[n].m, base).pvalue for n in ("a", "b")}
    assert t.loc[("a", "m"), "p"] == pytest.approx(p["a"])
    # Holm with two tests: the smaller p is doubled, the larger kept at least as large.
    lo, hi = sorted(p.values())
    expected = {n: (min(1, 2 * lo) if p[n] == lo else min(1, max(2 * lo, hi))) for n in p}
    for n in p:
        assert t.loc[(n, "m"), "p_corrected"] == pytest.approx(expected[n])


def test_ci_and_effect_size():
    base = frame([0.0, 0.0, 0.0, 0.0])
    new = frame([0.1, 0.3, 0.2, 0.4])
    row = significance_table({"base": base, "new": new}, ["m"]).loc[("new", "m")]
    d = np.array([0.1, 0.3, 0.2, 0.4])
    half = stats.t.ppf(0.975, 3) * d.std(ddof=1) / 2
    assert row["ci_low"] == pytest.approx(0.25 - half) and row["ci_high"] == pytest.approx(0.25 + half)
    assert row["effect_size"] == pytest.approx(0.25 / d.std(ddof=1))


def test_missing_topics_count_zero():
    t = significance_table({"base": frame([1.0, 1.0], ["1", "2"]), "new": frame([1.0], ["1"])}, ["m"])
    assert t.loc[("new", "m"), "mean"] == 0.5 and t.loc[("new", "m"), "topics"] == 2


def test_unknown_baseline_or_test():
    with pytest.raises(ValueError, match="baseline"):
        significance_table({"a": frame([1.0])}, ["m"], baseline="zzz")
    with pytest.raises(ValueError, match="unknown test"):
        significance_table({"a": frame([1.0])}, ["m"], test="anova")
