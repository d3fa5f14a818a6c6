"""Tests of a family of differences: the two-sided bootstrap p-value of a resampled
difference, and Holm's step-down adjustment across a family (family-wise error rate, no
independence assumed)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


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
