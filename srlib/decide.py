"""Leakage decisions: self-referential (SrDetection) and threshold-based (the baselines).

Self-referential, gray-box: leaked ⇔ PPL(x0) < min_i PPL(x_i) (strict: a tie is not leaked).
Black-box: leaked ⇔ NGO(x0) > max_i NGO(x_i). The soft version is the rank p-value
(1 + #{i : x_i at least as extreme as x0}) / (n + 1), small when the original stands out,
and the margin between the original and its closest variant.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from sklearn.metrics import f1_score, roc_auc_score


@dataclass(frozen=True)
class SelfReferential:
    """The verdict on one sample: leaked?, rank p-value, margin (>0 when the original wins)."""

    leaked: bool
    p_value: float
    margin: float


def self_referential(
    original: float, variants: Sequence[float], lower_is_leak: bool
) -> SelfReferential:
    """Compare the original's raw score with its variants' (PPL: lower wins; NGO: higher)."""
    v = np.asarray(variants, dtype=float)
    if v.size == 0 or np.isnan(original) or np.isnan(v).any():
        return SelfReferential(False, float("nan"), float("nan"))
    if lower_is_leak:
        leaked, as_extreme, margin = original < v.min(), np.sum(v <= original), v.min() - original
    else:
        leaked, as_extreme, margin = original > v.max(), np.sum(v >= original), original - v.max()
    return SelfReferential(bool(leaked), float((1 + as_extreme) / (v.size + 1)), float(margin))


def oracle_threshold(scores: Sequence[float], labels: Sequence[bool]) -> tuple[float, float]:
    """The threshold (flag when score ≥ t) that maximises F1 on labelled data, and that F1:
    an upper bound for a threshold baseline, not a deployable decision."""
    s, y = np.asarray(scores, dtype=float), np.asarray(labels, dtype=bool)
    best = (float("inf"), 0.0)
    for t in np.unique(s[~np.isnan(s)]):
        f1 = f1_score(y, s >= t, zero_division=0)
        if f1 > best[1]:
            best = (float(t), float(f1))
    return best


def calibrated_threshold(clean_scores: Sequence[float], fpr: float = 0.05) -> float:
    """The threshold that flags a share ``fpr`` of known-clean calibration samples
    (flag when score > t): the deployable baseline."""
    s = np.asarray(clean_scores, dtype=float)
    s = s[~np.isnan(s)]
    if s.size == 0:
        raise ValueError("no clean calibration scores")
    return float(np.quantile(s, 1 - fpr, method="higher"))


def threshold_decide(
    scores: Sequence[float], threshold: float, inclusive: bool = False
) -> np.ndarray:
    """Flags for scores above the threshold (``inclusive``: at or above)."""
    s = np.asarray(scores, dtype=float)
    return (s >= threshold) if inclusive else (s > threshold)


def auc(scores: Sequence[float], labels: Sequence[bool]) -> float:
    """Threshold-free ROC-AUC of an oriented score (NaN when one class is missing)."""
    y = np.asarray(labels, dtype=bool)
    if y.all() or not y.any():
        return float("nan")
    return float(roc_auc_score(y, np.nan_to_num(np.asarray(scores, dtype=float), nan=-np.inf)))
