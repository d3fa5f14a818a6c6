"""The metrics of ``srlib.evaluation`` with bootstrap intervals, vectorised over resamples:
the fast path behind the testbed's large tables. ``evaluation.evaluate`` (scikit-learn, one
resample at a time) is the slow reference; a test checks that both give the same numbers."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from srlib.evaluation import decided


def _confusion(y: np.ndarray, f: np.ndarray) -> dict[str, np.ndarray]:
    """Precision, recall, F1, MCC and FPR along the last axis (0 where undefined, as
    scikit-learn's ``zero_division=0``)."""
    tp = (y & f).sum(-1).astype(float)
    fp = (~y & f).sum(-1).astype(float)
    fn = (y & ~f).sum(-1).astype(float)
    tn = (~y & ~f).sum(-1).astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = np.where(tp + fp > 0, tp / (tp + fp), 0.0)
        recall = np.where(tp + fn > 0, tp / (tp + fn), 0.0)
        f1 = np.where(2 * tp + fp + fn > 0, 2 * tp / (2 * tp + fp + fn), 0.0)
        denom = np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
        mcc = np.where(denom > 0, (tp * tn - fp * fn) / denom, 0.0)
        fpr = np.where(fp + tn > 0, fp / (fp + tn), 0.0)
    return {"precision": precision, "recall": recall, "f1": f1, "mcc": mcc, "fpr": fpr}


def _auc(y: np.ndarray, s: np.ndarray) -> np.ndarray:
    """ROC-AUC of each row by the rank-sum (Mann-Whitney) formula, ties counted half."""
    n1, n0 = y.sum(-1), (~y).sum(-1)
    ranks = rankdata(s, axis=-1)
    return (np.where(y, ranks, 0.0).sum(-1) - n1 * (n1 + 1) / 2) / (n1 * n0)


def _tpr_at(y: np.ndarray, s: np.ndarray, fpr: float) -> np.ndarray:
    """Per row, the highest TPR of a threshold (flag when s ≥ t) whose FPR is at most
    ``fpr``: flag what lies above the (k+1)-th highest negative, k = ⌊fpr · negatives⌋."""
    n0 = (~y).sum(-1)
    allowed = np.floor(fpr * n0 + 1e-9).astype(int)
    negatives = -np.sort(-np.where(y, -np.inf, s), axis=-1)  # descending, positives last
    at = np.minimum(allowed, s.shape[-1] - 1)[..., None]
    threshold = np.take_along_axis(negatives, at, axis=-1)
    tpr = (y & (s > threshold)).sum(-1) / y.sum(-1)
    return np.where(allowed >= n0, 1.0, tpr)


RANKING = {
    "roc_auc": _auc,
    "tpr@1%fpr": lambda y, s: _tpr_at(y, s, 0.01),
    "tpr@5%fpr": lambda y, s: _tpr_at(y, s, 0.05),
}
"""Threshold-free metrics of oriented scores, each over the last axis (one row per resample)."""


def metric_table(
    labels: Sequence[bool],
    flags: Sequence[bool | None] | None = None,
    scores: Sequence[float] | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """Like ``evaluation.evaluate`` (metric, value, low, high, n, undecided; undecided
    samples left out and counted), plus the false-positive rate of the flags."""
    y_all = np.asarray(labels, dtype=bool)
    rows = []
    q = [(1 - level) / 2, (1 + level) / 2]
    if flags is not None:
        keep = decided(flags)
        y = y_all[keep]
        f = np.asarray([bool(v) for v, k in zip(flags, keep, strict=True) if k], dtype=bool)
        point = _confusion(y, f)
        idx = _resamples(y, n_boot, seed)
        boots = _confusion(y[idx], f[idx]) if len(idx) else {}
        for name, value in point.items():
            low, high = np.quantile(boots[name], q) if len(idx) else (np.nan, np.nan)
            rows.append(_row(name, value, low, high, y, keep))
    if scores is not None:
        s_all = np.asarray(scores, dtype=float)
        keep = ~np.isnan(s_all)
        y, s = y_all[keep], s_all[keep]
        idx = _resamples(y, n_boot, seed)
        for name, fn in RANKING.items():
            if y.all() or not y.any():
                rows.append(_row(name, np.nan, np.nan, np.nan, y, keep))
                continue
            boots = fn(y[idx], s[idx]) if len(idx) else np.array([])
            low, high = np.quantile(boots, q) if boots.size else (np.nan, np.nan)
            rows.append(_row(name, fn(y, s), low, high, y, keep))
    return pd.DataFrame(rows)


def _resamples(y: np.ndarray, n_boot: int, seed: int) -> np.ndarray:
    """Bootstrap index rows (drawn as ``evaluation.bootstrap`` draws them), without the
    resamples that hold a single class."""
    rng = np.random.default_rng(seed)
    if len(y) == 0 or n_boot == 0:
        return np.zeros((0, len(y)), dtype=int)
    idx = np.stack([rng.integers(0, len(y), len(y)) for _ in range(n_boot)])
    both = y[idx].any(axis=1) & ~y[idx].all(axis=1)
    return idx[both]


def _row(name: str, value, low, high, y: np.ndarray, keep: np.ndarray) -> dict:
    return {
        "metric": name,
        "value": float(value),
        "low": float(low),
        "high": float(high),
        "n": int(len(y)),
        "undecided": int((~keep).sum()),
    }
