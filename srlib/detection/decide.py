"""Leakage decisions: self-referential (SrDetection) and threshold-based (the baselines).

**One orientation.** Every decision here reads *oriented* scores, ``Score.score`` of
``srlib.detection.scoring``: higher means more likely leaked, in log units —

- gray-box: mean token log-probability, ``−log PPL``;
- black-box: the add-one-smoothed log n-gram overlap, ``log((hits + 1) / (n-grams + 1))``.

Nothing downstream flips a sign. Self-referential: leaked ⇔ score(x0) > max_i score(x_i)
(strict: a tie is not leaked), i.e. PPL(x0) < min_i PPL(x_i) gray-box and NGO(x0) >
max_i NGO(x_i) black-box. The soft versions are the rank p-value
(1 + #{i : score(x_i) ≥ score(x0)}) / (n + 1), small when the original stands out, and the
margin score(x0) − max_i score(x_i): in nats for both settings (gray-box it is
log PPL(closest variant) − log PPL(x0)).

**Undecided.** A sample with no variants, or a NaN score, gets no verdict (``leaked`` is
None), never a silent "not leaked": metrics and flag rates leave it out and count it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class SelfReferential:
    """The verdict on one sample: leaked? (None: undecided), rank p-value, margin (nats,
    > 0 when the original wins)."""

    leaked: bool | None
    p_value: float
    margin: float

    @property
    def decided(self) -> bool:
        """Whether there was anything to compare (variants and finite scores)."""
        return self.leaked is not None


UNDECIDED = SelfReferential(None, float("nan"), float("nan"))


def self_referential(original: float, variants: Sequence[float]) -> SelfReferential:
    """Compare the original's oriented score with its variants' (higher = more likely leaked)."""
    original = np.nan if original is None else float(original)  # None: undecided, stored
    v = np.asarray([np.nan if x is None else x for x in variants], dtype=float)
    if v.size == 0 or np.isnan(original) or np.isnan(v).any():
        return UNDECIDED
    best = float(v.max())
    as_extreme = int(np.sum(v >= original))
    return SelfReferential(bool(original > best), (1 + as_extreme) / (v.size + 1), original - best)


def oracle_threshold(
    scores: Sequence[float], labels: Sequence[bool], objective: str = "f1"
) -> tuple[float, float]:
    """The threshold (flag when score ≥ t) that maximises ``objective`` ("f1" or "mcc") on
    labelled data, and that value: an upper bound for a threshold baseline, not a deployable
    decision (compare MCCs with the MCC-optimal one: the F1-optimal threshold flags too much
    for MCC). Every distinct score is tried at once (counts by binary search); ties go to the
    lowest threshold, and a NaN score is never flagged but its label counts."""
    if objective not in ("f1", "mcc"):
        raise ValueError(f"objective must be 'f1' or 'mcc', got {objective!r}")
    s, y = np.asarray(scores, dtype=float), np.asarray(labels, dtype=bool)
    valid = ~np.isnan(s)
    thresholds = np.unique(s[valid])
    if thresholds.size == 0:
        return (float("inf"), 0.0)
    positives, negatives = np.sort(s[valid & y]), np.sort(s[valid & ~y])
    tp = positives.size - np.searchsorted(positives, thresholds, side="left")
    fp = negatives.size - np.searchsorted(negatives, thresholds, side="left")
    fn = int(y.sum()) - tp
    tn = int((~y).sum()) - fp
    with np.errstate(divide="ignore", invalid="ignore"):
        if objective == "f1":
            value = np.where(tp > 0, 2 * tp / (2 * tp + fp + fn), 0.0)
        else:
            tp, fp, fn, tn = (np.asarray(a, dtype=float) for a in (tp, fp, fn, tn))
            denominator = np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
            value = np.where(denominator > 0, (tp * tn - fp * fn) / denominator, 0.0)
    k = int(np.argmax(value))
    return (float(thresholds[k]), float(value[k])) if value[k] > 0 else (float("inf"), 0.0)


def calibrated_threshold(clean_scores: Sequence[float], fpr: float = 0.05) -> float:
    """The threshold that flags a share ``fpr`` of known-clean calibration samples
    (flag when score > t): the deployable baseline."""
    s = np.asarray(clean_scores, dtype=float)
    s = s[~np.isnan(s)]
    if s.size == 0:
        raise ValueError("no clean calibration scores")
    k = int(np.ceil((1 - fpr) * (s.size - 1)))  # np.quantile(s, 1 - fpr, method="higher"),
    return float(np.partition(s, k)[k])  # without its overhead (a test checks they agree)


def matched_threshold(scores: Sequence[float], rate: float) -> float:
    """The threshold that flags exactly ``round(rate · n)`` of ``scores`` (flag when score >
    t; their n non-NaN values, ties already broken): where a baseline is matched to a rule's
    flag rate on the same problems, it flags as many as the rule does. ``calibrated_threshold``
    rounds the other way (at most ``fpr``), as a deployable false-positive budget must; matched
    there, a baseline flagged one problem fewer than the rule on every half."""
    s = np.sort(np.asarray(scores, dtype=float))
    s = s[~np.isnan(s)]
    if s.size == 0:
        raise ValueError("no scores to match a rate on")
    keep = s.size - int(round(rate * s.size))  # the values left unflagged
    return float(s[keep - 1]) if keep > 0 else float("-inf")


def threshold_decide(
    scores: Sequence[float], threshold: float | np.ndarray, inclusive: bool = False
) -> pd.arrays.BooleanArray:
    """Flags for scores above the threshold (``inclusive``: at or above; an array gives each
    score its own threshold, e.g. cross-fitted ones); a NaN score is undecided (``pd.NA``)."""
    s = np.asarray(scores, dtype=float)
    flags = pd.array((s >= threshold) if inclusive else (s > threshold), dtype="boolean")
    flags[np.isnan(s)] = pd.NA
    return flags


def contrast_gaps(target: Sequence[float], reference: Sequence[float]) -> np.ndarray:
    """d_i = Δ_target(x_i) − Δ_ref(x_i) = (t_0 − t_i) − (r_0 − r_i) for each variant i, from
    oriented scores ``[original, variant_1, ...]`` under the target and a reference model:
    how much more the target prefers the original over that variant (nats)."""
    t, r = np.asarray(target, dtype=float), np.asarray(reference, dtype=float)
    if t.shape != r.shape:
        raise ValueError(f"{t.size} target scores but {r.size} reference scores")
    return (t[0] - t[1:]) - (r[0] - r[1:]) if t.size else t


def contrasted(target: Sequence[float], reference: Sequence[float]) -> SelfReferential:
    """Reference-contrasted SR, threshold-free. ``target`` and ``reference`` hold the oriented
    scores (−log PPL) of the original and then of the same variants under the model audited
    and under a reference model that never saw the data. With Δ(x_i) = log PPL(x_i) −
    log PPL(x0) = score(x0) − score(x_i), the target's preference for the original beyond
    the reference's is d_i = Δ_target(x_i) − Δ_ref(x_i); leaked ⇔ min_i d_i > 0, the margin is
    min_i d_i (nats), and the rank p-value (1 + #{i : d_i ≤ 0}) / (n + 1). The reference
    absorbs how natural the original's own names are to any model."""
    d = contrast_gaps(target, reference)
    if d.size == 0 or np.isnan(d).any():
        return UNDECIDED
    return SelfReferential(
        bool(d.min() > 0), (1 + int(np.sum(d <= 0))) / (d.size + 1), float(d.min())
    )
