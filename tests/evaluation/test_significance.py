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


def _before(per_topic, measures, baseline=None, test="t", correction="holm", alpha=0.05):
    """significance_table as it was before it was vectorised (one measure and system at a
    time): the figures the vectorised one must give, bit for bit."""
    from statsmodels.stats.multitest import multipletests

    def paired_p(a, b):
        d = a - b
        if not np.any(d != 0):
            return 1.0
        if test == "t":
            if np.allclose(d, d[0]):
                return 0.0
            return float(stats.ttest_rel(a, b).pvalue)
        return float(stats.wilcoxon(a, b, zero_method="wilcox").pvalue)

    def ci95(d):
        n = len(d)
        if n < 2 or np.allclose(d, d[0]):
            m = float(d.mean()) if n else 0.0
            return m, m
        half = stats.t.ppf(0.975, n - 1) * d.std(ddof=1) / np.sqrt(n)
        return float(d.mean() - half), float(d.mean() + half)

    def cohens_d(d):
        sd = d.std(ddof=1) if len(d) > 1 else 0.0
        if sd == 0:
            return 0.0 if not np.any(d) else float(np.sign(d.mean()) * np.inf)
        return float(d.mean() / sd)

    names = list(per_topic)
    baseline = baseline or names[0]
    qids = sorted(set().union(*(set(df["qid"]) for df in per_topic.values())))
    aligned = {n: df.set_index("qid").reindex(qids).fillna(0.0) for n, df in per_topic.items()}
    rows = []
    for m in measures:
        base = aligned[baseline][m].to_numpy(dtype=float)
        pvals = {n: paired_p(aligned[n][m].to_numpy(dtype=float), base)
                 for n in names if n != baseline}
        _, adj, _, _ = multipletests(list(pvals.values()), alpha=alpha, method=correction)
        corrected = dict(zip(pvals, (float(x) for x in adj), strict=True))
        for n in names:
            x = aligned[n][m].to_numpy(dtype=float)
            d = x - base
            lo, hi = ci95(d)
            padj = corrected.get(n, 1.0)
            rows.append({"system": n, "measure": m, "mean": float(x.mean()) if len(x) else 0.0,
                         "delta": float(d.mean()) if len(d) else 0.0, "ci_low": lo, "ci_high": hi,
                         "effect_size": cohens_d(d) if n != baseline else 0.0,
                         "p": pvals.get(n, 1.0), "p_corrected": padj,
                         "significant": bool(n != baseline and padj < alpha),
                         "topics": len(qids)})
    return pd.DataFrame(rows).set_index(["system", "measure"])


@pytest.mark.parametrize("test", ["t", "wilcoxon"])
@pytest.mark.parametrize("seed", range(6))
def test_the_vectorised_table_is_the_one_measure_at_a_time_table_bit_for_bit(test, seed):
    rng = np.random.default_rng(seed)
    topics = int(rng.choice([1, 2, 5, 17, 60]))
    qids = [f"A.{i}" for i in range(topics)]
    measures = [f"m{j}" for j in range(int(rng.integers(1, 12)))]
    base = rng.random((topics, len(measures))).round(int(rng.integers(1, 4)))
    systems = {}
    for s in range(int(rng.integers(2, 6))):
        kind = s % 4
        values = {0: base, 1: base + rng.normal(0, 0.1, base.shape),  # ties / differences
                  2: base + 0.25,  # a constant difference
                  3: rng.random(base.shape).round(1)}[kind]
        values = values.copy()
        values[:, 0] = base[:, 0]  # a measure that ties everywhere
        frame_ = pd.DataFrame(values, columns=measures).assign(qid=qids)
        if s and topics > 2:
            frame_ = frame_.iloc[1:]  # a topic this system lacks: counts 0
        systems[f"s{s}"] = frame_.sample(frac=1, random_state=seed)  # rows in any order
    correction = ["holm", "bonferroni", "fdr_bh"][seed % 3]
    with np.errstate(all="ignore"):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = _before(systems, measures, "s0", test, correction)
            got = significance_table(systems, measures, "s0", test=test, correction=correction)
    pd.testing.assert_frame_equal(got, expected, check_exact=True)


def test_holm_for_every_measure_at_once_is_statsmodels_holm_bit_for_bit():
    from statsmodels.stats.multitest import multipletests  # without gc (conftest.py)

    from mathir.evaluation.significance import _holm

    rng = np.random.default_rng(1)
    for k in range(1, 9):
        p = rng.random((200, k)).round(int(rng.integers(1, 4)))  # ties
        p[::7] = 1.0
        p[::5, 0] = 0.0
        expected = np.array([multipletests(row.tolist(), method="holm")[1] for row in p])
        assert (_holm(p) == expected).all()
