"""Comparing systems against a baseline: paired tests, multiple-testing correction,
effect sizes and confidence intervals over per-topic scores.

PyTerrier's ``pt.Experiment`` runs the same tests, but only over measures that
ir_measures computes and over the topics a run answers; mathir's tasks have their own
per-topic scores (prime measures averaged over all qrels topics, WorldTree MAP, answer
accuracy), so the statistics are applied here to any per-topic table, with SciPy's
tests and statsmodels' corrections (``multipletests``), as pt.Experiment does.

A measure on which two systems tie on every topic has no test to run: its p-value is
reported as 1.0 (never NaN, never significant), and its effect size as 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from mathir.errors import InputError

TESTS = ("t", "wilcoxon")
#: statsmodels' multiple-testing corrections (``multipletests(method=...)``)
CORRECTIONS = ("bonferroni", "sidak", "holm-sidak", "holm", "simes-hochberg", "hommel",
               "fdr_bh", "fdr_by", "fdr_tsbh", "fdr_tsbky")


def _paired_p(a: np.ndarray, b: np.ndarray, test: str) -> float:
    from scipy import stats

    d = a - b
    if not np.any(d != 0):
        return 1.0
    if test == "t":
        if np.allclose(d, d[0]):  # constant non-zero difference: t is infinite
            return 0.0
        return float(stats.ttest_rel(a, b).pvalue)
    if test == "wilcoxon":
        return float(stats.wilcoxon(a, b, zero_method="wilcox").pvalue)
    raise ValueError(f"unknown test {test!r}; expected one of {TESTS}")


def check_test(test: str, correction: str) -> None:
    """InputError unless ``test`` and ``correction`` are known (checked before any work).

    >>> check_test("t", "bonferoni")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    mathir.errors.InputError: unknown correction 'bonferoni'; expected one of ...
    """
    if test not in TESTS:
        raise InputError(f"unknown test {test!r}; expected one of {', '.join(TESTS)}")
    if correction not in CORRECTIONS:
        raise InputError(f"unknown correction {correction!r}; expected one of "
                         f"{', '.join(CORRECTIONS)}")


def significance_table(per_topic: Mapping[str, pd.DataFrame], measures: Sequence[str],
                       baseline: str | None = None, test: str = "t",
                       correction: str = "holm", alpha: float = 0.05) -> pd.DataFrame:
    """One row per (system, measure): mean, difference to the baseline, p, corrected p.

    ``per_topic[name]`` has a ``qid`` column and one column per measure; topics are
    aligned by ``qid`` (a topic missing from a system counts 0, as in the averages).
    Corrections run per measure over the systems compared with the baseline.

    >>> a = pd.DataFrame({"qid": ["1", "2", "3"], "m": [0.2, 0.4, 0.6]})
    >>> b = pd.DataFrame({"qid": ["1", "2", "3"], "m": [0.3, 0.6, 0.7]})
    >>> t = significance_table({"base": a, "new": b}, ["m"], baseline="base")
    >>> round(float(t.loc[("new", "m"), "delta"]), 3), bool(t.loc[("base", "m"), "significant"])
    (0.133, False)
    """
    check_test(test, correction)
    names = list(per_topic)
    baseline = baseline or names[0]
    if baseline not in per_topic:
        raise ValueError(f"baseline {baseline!r} is not one of the systems {names}")
    measures = list(measures)
    qids = sorted(set().union(*(set(df["qid"]) for df in per_topic.values())))
    n = len(qids)
    # systems x measures x topics (C order: each row of topics reduced as a 1-D array is)
    x = np.stack([np.ascontiguousarray(
        df.set_index("qid").reindex(qids)[measures].fillna(0.0).to_numpy(dtype=float).T)
        for df in per_topic.values()]) if measures else np.zeros((len(names), 0, n))
    b = names.index(baseline)
    d = x - x[b]
    others = [i for i in range(len(names)) if i != b]
    # SciPy and statsmodels are imported where they are needed, not with the module: every
    # command that scores imports it for check_test, and a table of one system needs
    # neither (their import took a second of each `mathir experiment` or `evaluate`)
    p = np.ones(x.shape[:2])
    if others:
        p[others] = _paired_ps(x[others], x[b], d[others], test)
    corrected = np.ones_like(p)
    if others and correction == "holm":
        corrected[others] = _holm(p[others].T).T
    elif others:
        from statsmodels.stats.multitest import multipletests

        for j in range(len(measures)):
            _, adj, _, _ = multipletests(p[others, j].tolist(), alpha=alpha, method=correction)
            corrected[others, j] = adj
    mean = x.mean(axis=-1) if n else np.zeros(x.shape[:2])
    delta = d.mean(axis=-1) if n else np.zeros(x.shape[:2])
    constant = np.all(np.isclose(d, d[..., :1]), axis=-1) if n else np.ones(x.shape[:2], bool)
    lo, hi = delta.copy(), delta.copy()
    with np.errstate(divide="ignore", invalid="ignore"):  # both sides of np.where
        infinite = np.where(np.any(d != 0, axis=-1), np.sign(delta) * np.inf, 0.0)
        if n >= 2:
            sd = d.std(ddof=1, axis=-1)
            if not constant.all():  # an interval to compute (a constant one is its delta)
                from scipy import stats

                half = stats.t.ppf(0.975, n - 1) * sd / np.sqrt(n)
                lo = np.where(constant, delta, delta - half)
                hi = np.where(constant, delta, delta + half)
            effect = np.where(sd == 0, infinite, delta / sd)
        else:  # one topic: no spread, an effect size only where the systems differ
            effect = infinite
    effect[b] = 0.0
    significant = corrected < alpha
    significant[b] = False
    rows_s, rows_m = np.meshgrid(np.arange(len(names)), np.arange(len(measures)))
    rows_s, rows_m = rows_s.ravel(), rows_m.ravel()  # measure by measure, systems within
    index = pd.MultiIndex.from_arrays([[names[i] for i in rows_s],
                                       [measures[j] for j in rows_m]],
                                      names=["system", "measure"])
    columns = {"mean": mean, "delta": delta, "ci_low": lo, "ci_high": hi,
               "effect_size": effect, "p": p, "p_corrected": corrected,
               "significant": significant}
    out = pd.DataFrame({k: v[rows_s, rows_m] for k, v in columns.items()}, index=index)
    out["topics"] = n
    return out


def _paired_ps(a: np.ndarray, base: np.ndarray, d: np.ndarray, test: str) -> np.ndarray:
    """The p-values of :func:`_paired_p` for every (system, measure) row of ``a`` (systems
    x measures x topics) against ``base`` (measures x topics): the t-tests in one call."""
    from scipy import stats

    p = np.ones(a.shape[:2])
    differ = np.any(d != 0, axis=-1)
    if test == "t":
        constant = np.all(np.isclose(d, d[..., :1]), axis=-1)
        p[differ & constant] = 0.0  # a constant non-zero difference: t is infinite
        todo = differ & ~constant
        if todo.any():
            pairs = np.nonzero(todo)
            p[pairs] = stats.ttest_rel(a[pairs], base[pairs[1]], axis=-1).pvalue
        return p
    for i, j in zip(*np.nonzero(differ), strict=True):  # scipy decides exact / asymptotic
        p[i, j] = _paired_p(a[i, j], base[j], test)  # on all rows at once: one by one
    return p


def _holm(p: np.ndarray) -> np.ndarray:
    """Holm's corrected p-values of each row of ``p`` (measures x systems), computed as
    statsmodels' ``multipletests(method="holm")`` computes them (sorted, times k, k-1,
    ..., a running maximum, capped at 1), for every measure at once and without the full
    garbage collection statsmodels runs on every call (0.1 s in a large process).

    >>> _holm(np.array([[0.01, 0.04, 0.03]])).round(2).tolist()
    [[0.03, 0.06, 0.06]]
    """
    order = np.argsort(p, axis=-1)
    ranked = np.take_along_axis(p, order, axis=-1)
    adjusted = np.maximum.accumulate(ranked * np.arange(p.shape[-1], 0, -1), axis=-1)
    adjusted[adjusted > 1] = 1
    out = np.empty_like(adjusted)
    np.put_along_axis(out, order, adjusted, axis=-1)
    return out
