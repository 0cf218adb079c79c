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
from scipy import stats
from statsmodels.stats.multitest import multipletests

from mathir.errors import InputError

TESTS = ("t", "wilcoxon")
#: statsmodels' multiple-testing corrections (``multipletests(method=...)``)
CORRECTIONS = ("bonferroni", "sidak", "holm-sidak", "holm", "simes-hochberg", "hommel",
               "fdr_bh", "fdr_by", "fdr_tsbh", "fdr_tsbky")


def _paired_p(a: np.ndarray, b: np.ndarray, test: str) -> float:
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


def _ci95(d: np.ndarray) -> tuple[float, float]:
    n = len(d)
    if n < 2 or np.allclose(d, d[0]):
        m = float(d.mean()) if n else 0.0
        return m, m
    half = stats.t.ppf(0.975, n - 1) * d.std(ddof=1) / np.sqrt(n)
    return float(d.mean() - half), float(d.mean() + half)


def _cohens_d(d: np.ndarray) -> float:
    sd = d.std(ddof=1) if len(d) > 1 else 0.0
    if sd == 0:
        return 0.0 if not np.any(d) else float(np.sign(d.mean()) * np.inf)
    return float(d.mean() / sd)


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
    qids = sorted(set().union(*(set(df["qid"]) for df in per_topic.values())))
    aligned = {n: df.set_index("qid").reindex(qids).fillna(0.0) for n, df in per_topic.items()}
    rows = []
    for m in measures:
        base = aligned[baseline][m].to_numpy(dtype=float)
        pvals = {}
        for n in names:
            if n == baseline:
                continue
            pvals[n] = _paired_p(aligned[n][m].to_numpy(dtype=float), base, test)
        corrected = {}
        if pvals:
            _, adj, _, _ = multipletests(list(pvals.values()), alpha=alpha, method=correction)
            corrected = dict(zip(pvals, (float(x) for x in adj), strict=True))
        for n in names:
            x = aligned[n][m].to_numpy(dtype=float)
            d = x - base
            lo, hi = _ci95(d)
            p = pvals.get(n, 1.0)
            padj = corrected.get(n, 1.0)
            rows.append({"system": n, "measure": m, "mean": float(x.mean()) if len(x) else 0.0,
                         "delta": float(d.mean()) if len(d) else 0.0, "ci_low": lo, "ci_high": hi,
                         "effect_size": _cohens_d(d) if n != baseline else 0.0, "p": p,
                         "p_corrected": padj, "significant": bool(n != baseline and padj < alpha),
                         "topics": len(qids)})
    return pd.DataFrame(rows).set_index(["system", "measure"])
