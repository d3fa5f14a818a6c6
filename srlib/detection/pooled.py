"""Benchmark-level leakage tests: one p-value that a model saw a *set* of samples.

Per-sample signals are weak after few exposures; pooled over a benchmark they add up. Each
sample contributes its oriented scores (higher = more likely leaked, see ``decide``) of the
original and of its variants, under the audited model and under a reference model that never
saw the data. The per-sample statistic is the target's mean preference for the original beyond
the reference's,

    d = mean_i [(t_0 − t_i) − (r_0 − r_i)]   (nats; Δ(x_i) = log PPL(x_i) − log PPL(x_0)),

and the null hypothesis is that the audited model prefers originals no more than the reference
does: d is symmetric around 0. Two tests of it, one-sided (leaked: d > 0):

- ``wilcoxon``: the Wilcoxon signed-rank test (scipy);
- ``permutation``: a sign-flip permutation test of mean d (scipy's ``permutation_test``).

That null is only as good as the reference: a reference trained on other data prefers the
originals' names less (or more) than the target does even when neither saw the set. The
**empirical null** (``control_test``) needs no matched reference: it compares the set's d with
d on *control* samples of the same format that the target cannot have seen (a clean split,
problems written after its cutoff), one-sided, Mann-Whitney or a permutation test.

Without a reference, ``fisher`` combines the per-sample rank p-values of the plain
self-referential rule with Fisher's method. Under H0 those p-values are uniform only if the
original is exchangeable with its variants, which a clean model already violates (it prefers
the original's names): expect ``fisher`` to reject on clean models, and see the book.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from srlib.detection.decide import contrast_gaps, self_referential

METHODS = ("wilcoxon", "permutation", "fisher")


@dataclass(frozen=True)
class PooledTest:
    """One set's verdict: the p-value that the model saw it, the mean statistic (nats for
    the contrasted tests), and how many samples were usable."""

    method: str
    p_value: float
    effect: float
    n: int


def contrasts(
    target: Sequence[Sequence[float]], reference: Sequence[Sequence[float]] | None = None
) -> np.ndarray:
    """Per sample, d = mean_i [(t_0 − t_i) − (r_0 − r_i)] from oriented score lists
    ``[original, variant_1, ...]`` under the target and the reference (without one, r = 0:
    the target's own mean preference for the original); NaN when a sample has no variants,
    a NaN score, or lists of different lengths."""
    if reference is None:
        reference = [np.zeros(len(t)) for t in target]
    out = np.full(len(target), np.nan)
    for k, (t, r) in enumerate(zip(target, reference, strict=True)):
        if len(t) > 1 and len(t) == len(r):
            out[k] = float(np.mean(contrast_gaps(t, r)))
    return out


def pooled_test(
    target: Sequence[Sequence[float]],
    reference: Sequence[Sequence[float]] | None = None,
    method: str = "wilcoxon",
    resamples: int = 9999,
    seed: int = 0,
) -> PooledTest:
    """Test whether the target model saw this set of samples (see the module docstring);
    samples without a usable statistic are left out and not counted in ``n``."""
    if method not in METHODS:
        raise ValueError(f"unknown pooled test {method!r}; choose from {METHODS}")
    if method == "fisher":
        ps = np.array([self_referential(s[0], s[1:]).p_value for s in target if len(s) > 1])
        ps = ps[np.isfinite(ps)]
        if ps.size == 0:
            return PooledTest(method, float("nan"), float("nan"), 0)
        result = stats.combine_pvalues(ps, method="fisher")
        return PooledTest(method, float(result.pvalue), float(np.mean(ps)), int(ps.size))
    if reference is None:
        raise ValueError(f"the {method} test contrasts with a reference model: pass reference")
    d = contrasts(target, reference)
    return contrast_test(d[np.isfinite(d)], method, resamples, seed)


def contrast_test(
    d: np.ndarray, method: str = "wilcoxon", resamples: int = 9999, seed: int = 0
) -> PooledTest:
    """The one-sided test that per-sample contrasts ``d`` lie above 0 (symmetric under H0)."""
    d = np.asarray(d, dtype=float)
    if d.size == 0:
        return PooledTest(method, float("nan"), float("nan"), 0)
    if method == "wilcoxon":
        p = stats.wilcoxon(d, alternative="greater").pvalue if np.any(d != 0) else 1.0
    elif method == "permutation":
        p = stats.permutation_test(
            (d,),
            np.mean,
            permutation_type="samples",
            alternative="greater",
            n_resamples=resamples,
            rng=np.random.default_rng(seed),
        ).pvalue
    else:
        raise ValueError(f"unknown contrast test {method!r}; choose wilcoxon or permutation")
    return PooledTest(method, float(p), float(d.mean()), int(d.size))


def control_test(
    d: np.ndarray,
    control: np.ndarray,
    method: str = "mannwhitney",
    resamples: int = 9999,
    seed: int = 0,
) -> PooledTest:
    """The empirical-null test: one-sided, do the set's contrasts ``d`` lie above those of
    ``control`` samples the model cannot have seen (same format, same target and reference)?
    It needs no matched reference — a reference that prefers originals less than the target
    does shifts set and control alike — only that set and control be exchangeable under H0.
    ``mannwhitney`` (rank test) or ``permutation`` (difference of means); the effect is the
    difference of means (nats)."""
    d, control = np.asarray(d, dtype=float), np.asarray(control, dtype=float)
    if d.size == 0 or control.size == 0:
        return PooledTest(method, float("nan"), float("nan"), 0)
    if method == "mannwhitney":
        p = stats.mannwhitneyu(d, control, alternative="greater").pvalue
    elif method == "permutation":
        p = stats.permutation_test(
            (d, control),
            lambda x, y, axis=-1: np.mean(x, axis=axis) - np.mean(y, axis=axis),
            permutation_type="independent",
            alternative="greater",
            n_resamples=resamples,
            vectorized=True,
            rng=np.random.default_rng(seed),
        ).pvalue
    else:
        raise ValueError(f"unknown control test {method!r}; choose mannwhitney or permutation")
    return PooledTest(method, float(p), float(d.mean() - control.mean()), int(d.size))


def rejection_rate(
    d: np.ndarray,
    sizes: Sequence[int],
    draws: int = 200,
    alpha: float = 0.01,
    method: str = "wilcoxon",
    seed: int = 0,
    control: np.ndarray | None = None,
) -> pd.DataFrame:
    """How often the test rejects at ``alpha`` on random subsets of ``size`` samples (without
    replacement) of the per-sample contrasts ``d``: power on leaked samples, the
    false-positive rate on clean ones. With ``control``, each subset is tested against those
    clean contrasts (``control_test``, Mann-Whitney) instead of against 0. One row per size."""
    d = np.asarray(d, dtype=float)
    d = d[np.isfinite(d)]
    if control is not None:
        control = np.asarray(control, dtype=float)
        control = control[np.isfinite(control)]
    rng = np.random.default_rng(seed)
    rows = []
    for size in sizes:
        if size > d.size:
            continue
        p = []
        for _ in range(draws):
            subset = rng.choice(d, size, replace=False)
            if control is None:
                p.append(contrast_test(subset, method, 999, seed).p_value)
            else:
                p.append(control_test(subset, control).p_value)
        rejected = int(np.sum(np.asarray(p) < alpha))
        low, high = stats.binomtest(rejected, draws).proportion_ci(0.95, method="wilson")
        rows.append(
            {
                "samples": size,
                "rejected": rejected,
                "draws": draws,
                "rejection rate": rejected / draws,
                "low": low,
                "high": high,
            }
        )
    return pd.DataFrame(rows)
