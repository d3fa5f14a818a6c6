"""Tests of a family of differences: the two-sided bootstrap p-value of a resampled
difference, and Holm's step-down adjustment across a family (family-wise error rate, no
independence assumed)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

NO_VERDICT = "no verdict"
"""The family verdict of a contrast that ``testable`` refuses: said as such in the answer boxes,
never as "better", "worse", "equivalent" or "inconclusive"."""


def collapsed(se):
    """Whether every resample gave the same difference (a standard error of exactly 0);
    elementwise for an array. ``testable`` refuses these, and so does a row's sentence."""
    return np.asarray(se) == 0


def testable(se: float) -> bool:
    """Whether a difference can be tested at all: its estimate must vary under resampling
    (``se`` > 0 and finite). A collapsed bootstrap — every resample giving the same difference,
    as with a handful of problems that all agree, or two identical rules — gives an interval of
    one point and a p of 0 for a nonzero difference ("equivalent" for a zero one), which would
    decide on nothing; ``srlib.detection.contrasts`` gives such a row of a family or of the
    paper's gain ``NO_VERDICT`` and no detectable difference, its sentence says so, and the
    exploratory rankings leave it out."""
    return bool(np.isfinite(se) and se > 0 and not collapsed(se))


def bootstrap_p(differences: np.ndarray) -> float:
    """Two-sided bootstrap p-value of a difference from its resampled values: twice the
    smaller share at or beyond zero on either side (below 0.05 where the 95% percentile
    interval excludes zero)."""
    d = np.asarray(differences, dtype=float).reshape(-1)
    return float(min(1.0, 2 * min(np.mean(d <= 0), np.mean(d >= 0))))


def holm(p_values: Sequence[float]) -> np.ndarray:
    """Holm's step-down adjustment of a family of p-values (controls the family-wise error
    rate without assuming the tests independent)."""
    p = np.asarray(p_values, dtype=float)
    order = np.argsort(p)
    m = len(p)
    adjusted = np.maximum.accumulate((m - np.arange(m)) * p[order]).clip(max=1.0)
    out = np.empty(m)
    out[order] = adjusted
    return out


def equivalence_p(differences: np.ndarray, margin: float) -> float:
    """Bootstrap p-value of two one-sided tests that a difference lies within ±``margin``
    (TOST): the larger share of resampled differences at or beyond either bound. Below 0.05
    where the 90% percentile interval lies inside the margin: "equivalent within it"."""
    d = np.asarray(differences, dtype=float).reshape(-1)
    return float(max(np.mean(d >= margin), np.mean(d <= -margin)))


def detectable(se: float, family: int = 1, alpha: float = 0.05, power: float = 0.8) -> float:
    """The smallest true difference a two-sided test at ``alpha``, Bonferroni-split across a
    ``family`` of tests (what Holm spends on its first step: conservative), finds with
    probability ``power``, for an estimate with standard error ``se`` (normal approximation):
    (z(1 − α/2m) + z(power))·se."""
    from scipy.stats import norm

    return float((norm.ppf(1 - alpha / (2 * family)) + norm.ppf(power)) * se)
