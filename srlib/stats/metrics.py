"""Metrics of decisions and scores with bootstrap intervals (resampling rows): precision,
recall, F1, MCC and FPR from confusion counts, ROC-AUC and TPR at a fixed FPR. Two paths
compute each: ``evaluate`` (scikit-learn, one resample at a time) is the slow reference, and
``metric_table`` (vectorised over resamples) the fast path the tables use; a test checks that
they agree. Within the fast path, a resample's AUC and TPRs are counted from how often it draws
each row (``ranking_resampled``), equal bit for bit to sorting each resample (``RANKING``).
Every interval is a percentile interval; a resample holding one class only is left out."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd
from scipy.stats import rankdata
from sklearn.metrics import (
    f1_score,
    matthews_corrcoef,
    precision_score,
    recall_score,
    roc_auc_score,
    roc_curve,
)


def tpr_at_fpr(labels: Sequence[bool], scores: Sequence[float], fpr: float) -> float:
    """The highest true-positive rate whose false-positive rate is at most ``fpr``."""
    f, t, _ = roc_curve(np.asarray(labels, dtype=bool), np.nan_to_num(scores, nan=-np.inf))
    ok = f <= fpr
    return float(t[ok].max()) if ok.any() else 0.0


CLASSIFICATION: dict[str, Callable] = {
    "precision": lambda y, p: precision_score(y, p, zero_division=0),
    "recall": lambda y, p: recall_score(y, p, zero_division=0),
    "f1": lambda y, p: f1_score(y, p, zero_division=0),
    "mcc": lambda y, p: matthews_corrcoef(y, p) if len(set(y)) > 1 else 0.0,
}
"""Metrics of decisions by scikit-learn (``evaluate``: the slow reference of
``confusion_metrics``)."""


RANKING_REFERENCE: dict[str, Callable] = {
    "roc_auc": lambda y, s: roc_auc_score(y, np.nan_to_num(s, nan=-np.inf)),
    "tpr@1%fpr": lambda y, s: tpr_at_fpr(y, s, 0.01),
    "tpr@5%fpr": lambda y, s: tpr_at_fpr(y, s, 0.05),
}
"""Threshold-free metrics by scikit-learn, one resample at a time (``evaluate``: the slow
reference of ``RANKING``)."""


def bootstrap(
    metric: Callable,
    labels: Sequence[bool],
    values: Sequence,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[float, float, float]:
    """(point estimate, lower, upper) of ``metric(labels, values)`` by resampling samples;
    resamples with a single class are skipped."""
    y, v = np.asarray(labels, dtype=bool), np.asarray(values)
    point = float(metric(y, v))
    rng = np.random.default_rng(seed)
    boots = []
    for _ in range(n_boot):
        idx = rng.integers(0, len(y), len(y))
        if y[idx].all() or not y[idx].any():
            continue
        boots.append(metric(y[idx], v[idx]))
    if not boots:
        return point, float("nan"), float("nan")
    lo, hi = np.quantile(boots, [(1 - level) / 2, (1 + level) / 2])
    return point, float(lo), float(hi)


def decided(values: Sequence) -> np.ndarray:
    """Which entries carry a verdict or a score: not None, ``pd.NA`` or NaN."""
    return ~pd.isna(pd.Series(list(values), dtype=object)).to_numpy()


def evaluate(
    labels: Sequence[bool],
    flags: Sequence[bool | None] | None = None,
    scores: Sequence[float] | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> pd.DataFrame:
    """A tidy table (metric, value, low, high, n, undecided) of every metric the inputs
    allow: decisions give P/R/F1/MCC, oriented scores give ROC-AUC and TPR at 1% / 5% FPR.
    Undecided samples (a ``None``/``NA`` flag, a NaN score) are left out of that metric and
    counted in ``undecided``, never scored as negatives."""
    y = np.asarray(labels, dtype=bool)
    rows = []
    for values, table in ((flags, CLASSIFICATION), (scores, RANKING_REFERENCE)):
        if values is None:
            continue
        if len(values) != len(y):
            raise ValueError(f"{len(values)} values for {len(y)} labels")
        keep = decided(values)
        kept = np.asarray([v for v, k in zip(values, keep, strict=True) if k])
        kept = kept.astype(bool if table is CLASSIFICATION else float)
        for name, fn in table.items():
            if keep.sum() and len(set(y[keep])) > 1:
                value, lo, hi = bootstrap(fn, y[keep], kept, n_boot, seed)
            else:
                value = lo = hi = float("nan")
            rows.append(
                {
                    "metric": name,
                    "value": value,
                    "low": lo,
                    "high": hi,
                    "n": int(keep.sum()),
                    "undecided": int((~keep).sum()),
                }
            )
    return pd.DataFrame(rows)


def confusion_metrics(y: np.ndarray, f: np.ndarray) -> dict[str, np.ndarray]:
    """Precision, recall, F1, MCC and FPR along the last axis (0 where undefined, as
    scikit-learn's ``zero_division=0``)."""
    tp = (y & f).sum(-1).astype(float)
    fp = (~y & f).sum(-1).astype(float)
    fn = (y & ~f).sum(-1).astype(float)
    tn = (~y & ~f).sum(-1).astype(float)
    return counts_metrics(tp, fp, fn, tn)


def counts_metrics(tp, fp, fn, tn) -> dict[str, np.ndarray]:
    """Precision, recall, F1, MCC and FPR from confusion counts (arrays of any shape; weighted
    counts too, as a cluster bootstrap gives them), 0 where undefined."""
    tp, fp, fn, tn = (np.asarray(c, dtype=float) for c in (tp, fp, fn, tn))
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = np.where(tp + fp > 0, tp / (tp + fp), 0.0)
        recall = np.where(tp + fn > 0, tp / (tp + fn), 0.0)
        f1 = np.where(2 * tp + fp + fn > 0, 2 * tp / (2 * tp + fp + fn), 0.0)
        denom = np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
        mcc = np.where(denom > 0, (tp * tn - fp * fn) / denom, 0.0)
        fpr = np.where(fp + tn > 0, fp / (fp + tn), 0.0)
    return {"precision": precision, "recall": recall, "f1": f1, "mcc": mcc, "fpr": fpr}


def count_metric(name: str, tp: float, fp: float, fn: float, tn: float) -> float:
    """One of ``counts_metrics``' metrics ("precision", "recall", "f1", "mcc", "fpr") from
    scalar counts, without arrays: the fast path of a bootstrap's inner loop (a test checks
    that it equals ``counts_metrics``)."""
    if name == "precision":
        return tp / (tp + fp) if tp + fp > 0 else 0.0
    if name == "recall":
        return tp / (tp + fn) if tp + fn > 0 else 0.0
    if name == "f1":
        return 2 * tp / (2 * tp + fp + fn) if 2 * tp + fp + fn > 0 else 0.0
    if name == "fpr":
        return fp / (fp + tn) if fp + tn > 0 else 0.0
    if name != "mcc":
        raise ValueError(f"unknown metric {name!r}")
    denom = ((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)) ** 0.5
    return (tp * tn - fp * fn) / denom if denom > 0 else 0.0


def average_ranks(s: np.ndarray) -> np.ndarray:
    """Ranks from 1 over the last axis, ties given their mean rank: the numbers of
    ``scipy.stats.rankdata(s, axis=-1)`` (the slow reference a test compares it with), without
    its per-call overhead, which dominated the AUC of the many short rows the book's power
    simulations rank. A NaN goes to ``rankdata``."""
    s = np.asarray(s, dtype=float)
    if s.shape[-1] == 0 or np.isnan(s).any():
        return rankdata(s, axis=-1)
    order = np.argsort(s, axis=-1, kind="stable")
    ordered = np.take_along_axis(s, order, axis=-1)
    n = s.shape[-1]
    at = np.broadcast_to(np.arange(n), s.shape)
    first_of_tie = np.ones(s.shape, dtype=bool)
    first_of_tie[..., 1:] = ordered[..., 1:] != ordered[..., :-1]
    last_of_tie = np.ones(s.shape, dtype=bool)
    last_of_tie[..., :-1] = first_of_tie[..., 1:]
    first = np.maximum.accumulate(np.where(first_of_tie, at, 0), axis=-1)
    last = np.flip(np.minimum.accumulate(np.flip(np.where(last_of_tie, at, n), -1), axis=-1), -1)
    ranks = np.empty(s.shape)
    np.put_along_axis(ranks, order, (first + last) / 2 + 1, axis=-1)
    return ranks


def _auc(y: np.ndarray, s: np.ndarray) -> np.ndarray:
    """ROC-AUC of each row by the rank-sum (Mann-Whitney) formula, ties counted half. One row
    without NaN (the contrasts' every resample) is counted, not ranked: the negatives sorted
    once, each positive's count of negatives below it and of those tied with it found by
    bisection. Twice U is then an integer, and U the same half-integer the rank sum minus
    n₁(n₁ + 1)/2 gives exactly, divided the same way: the same AUC bit for bit
    (``tests/test_scoring.py`` checks it on tied, untied and infinite scores), without the
    ranking that dominated the book's design simulations."""
    y, s = np.asarray(y, dtype=bool), np.asarray(s, dtype=float)
    if s.ndim == 1 and not np.isnan(s).any():
        negatives, positives = np.sort(s[~y]), s[y]
        below = np.searchsorted(negatives, positives, "left")
        twice_u = (below + np.searchsorted(negatives, positives, "right")).sum()
        return (twice_u / 2) / (positives.size * negatives.size)
    n1, n0 = y.sum(-1), (~y).sum(-1)
    ranks = average_ranks(s)
    return (np.where(y, ranks, 0.0).sum(-1) - n1 * (n1 + 1) / 2) / (n1 * n0)


def _tpr_at(y: np.ndarray, s: np.ndarray, fpr: float) -> np.ndarray:
    """Per row, the highest TPR of a threshold (flag when s > t) whose FPR is at most
    ``fpr``: flag what lies above the (k+1)-th highest negative, k = ⌊fpr · negatives⌋."""
    n0 = (~y).sum(-1)
    allowed = np.floor(fpr * n0 + 1e-9).astype(int)
    negatives = -np.sort(-np.where(y, -np.inf, s), axis=-1)  # descending, positives last
    at = np.minimum(allowed, s.shape[-1] - 1)[..., None]
    threshold = np.take_along_axis(negatives, at, axis=-1)
    tpr = (y & (s > threshold)).sum(-1) / y.sum(-1)
    return np.where(allowed >= n0, 1.0, tpr)


TPR_AT = {"tpr@1%fpr": 0.01, "tpr@5%fpr": 0.05}
"""The TPR-at-FPR metrics and their false-positive rates."""

RANKING = {"roc_auc": _auc} | {
    name: functools.partial(_tpr_at, fpr=f) for name, f in TPR_AT.items()
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
    """Like ``evaluate`` (metric, value, low, high, n, undecided; undecided
    samples left out and counted), plus the false-positive rate of the flags."""
    y_all = np.asarray(labels, dtype=bool)
    rows = []
    q = [(1 - level) / 2, (1 + level) / 2]
    if flags is not None:
        keep = decided(flags)
        y = y_all[keep]
        f = np.asarray([bool(v) for v, k in zip(flags, keep, strict=True) if k], dtype=bool)
        point = confusion_metrics(y, f)
        idx = _resamples(y, n_boot, seed)
        boots = confusion_metrics(y[idx], f[idx]) if len(idx) else {}
        for name, value in point.items():
            low, high = np.quantile(boots[name], q) if len(idx) else (np.nan, np.nan)
            rows.append(_metric_row(name, value, low, high, y, keep))
    if scores is not None:
        s_all = np.asarray(scores, dtype=float)
        keep = ~np.isnan(s_all)
        y, s = y_all[keep], s_all[keep]
        idx = _resamples(y, n_boot, seed)
        resampled = ranking_resampled(y, s, idx) if len(idx) else {}
        for name, fn in RANKING.items():
            if y.all() or not y.any():
                rows.append(_metric_row(name, np.nan, np.nan, np.nan, y, keep))
                continue
            boots = resampled.get(name, np.array([]))
            low, high = np.quantile(boots, q) if boots.size else (np.nan, np.nan)
            rows.append(_metric_row(name, fn(y, s), low, high, y, keep))
    return pd.DataFrame(rows)


def _resamples(y: np.ndarray, n_boot: int, seed: int) -> np.ndarray:
    """Bootstrap index rows (drawn as ``bootstrap`` draws them), without the
    resamples that hold a single class."""
    if len(y) == 0 or n_boot == 0:
        return np.zeros((0, len(y)), dtype=int)
    idx = _draws(len(y), n_boot, seed)
    drawn = y[idx]
    return idx[drawn.any(axis=1) & ~drawn.all(axis=1)]


@functools.lru_cache(maxsize=8)
def _draws(n: int, n_boot: int, seed: int) -> np.ndarray:
    """The ``n_boot`` index rows of ``n`` rows that ``seed`` draws, drawn once per size (a
    chapter's tables draw them for every detector, run and view alike); read-only."""
    rng = np.random.default_rng(seed)
    idx = np.stack([rng.integers(0, n, n) for _ in range(n_boot)])
    idx.flags.writeable = False
    return idx


def ranking_resampled(y: np.ndarray, s: np.ndarray, idx: np.ndarray) -> dict[str, np.ndarray]:
    """``RANKING``'s metrics on every resample at once, ``fn(y[idx], s[idx])`` bit for bit, from
    how often each row is drawn: rows sorted once and ties grouped, so a resample costs sums,
    not a sort. Both classes must be in every row of ``idx`` (``_resamples`` keeps those) and
    no score NaN (``metric_table`` leaves those out first). The AUC's rank sum minus
    n₁(n₁ + 1)/2 is the Mann-Whitney count U (ties half) exactly, and a TPR is a count of
    positives over n₁ either way: both are the same integers divided the same way
    (``tests/test_testbed.py`` checks equality on tied, untied and infinite scores)."""
    boots, n = idx.shape
    counts = np.bincount((idx + n * np.arange(boots)[:, None]).ravel(), minlength=boots * n)
    order = np.argsort(s, kind="stable")
    ranked, drawn = s[order], counts.reshape(boots, n)[:, order]
    starts = np.flatnonzero(np.r_[True, ranked[1:] != ranked[:-1]])  # one group per value
    pos = np.add.reduceat(drawn * y[order], starts, axis=1)  # ascending score groups
    neg = np.add.reduceat(drawn * ~y[order], starts, axis=1)
    n1, n0 = pos.sum(axis=1), neg.sum(axis=1)
    twice_u = (pos * (2 * (np.cumsum(neg, axis=1) - neg) + neg)).sum(axis=1)
    out = {"roc_auc": (twice_u / 2) / (n1 * n0)}
    neg_down, pos_down = neg[:, ::-1], pos[:, ::-1]  # descending: the thresholds' side
    above = np.cumsum(pos_down, axis=1) - pos_down  # positives strictly above each group
    for name, fpr in TPR_AT.items():
        allowed = np.floor(fpr * n0 + 1e-9).astype(int)
        at = (np.cumsum(neg_down, axis=1) > allowed[:, None]).argmax(axis=1)
        tpr = np.take_along_axis(above, at[:, None], axis=1)[:, 0] / n1
        out[name] = np.where(allowed >= n0, 1.0, tpr)
    return out


def _metric_row(name: str, value, low, high, y: np.ndarray, keep: np.ndarray) -> dict:
    return {
        "metric": name,
        "value": float(value),
        "low": float(low),
        "high": float(high),
        "n": int(len(y)),
        "undecided": int((~keep).sum()),
    }
