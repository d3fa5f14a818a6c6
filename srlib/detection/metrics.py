"""Metrics with uncertainty: P/R/F1/MCC, ROC-AUC, TPR at low FPR, bootstrap intervals, and
flag rates against a nominal chance level and an empirical null."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd
from scipy import stats
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
RANKING: dict[str, Callable] = {
    "roc_auc": lambda y, s: roc_auc_score(y, np.nan_to_num(s, nan=-np.inf)),
    "tpr@1%fpr": lambda y, s: tpr_at_fpr(y, s, 0.01),
    "tpr@5%fpr": lambda y, s: tpr_at_fpr(y, s, 0.05),
}


def bootstrap(
    metric: Callable,
    labels: Sequence[bool],
    values: Sequence,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[float, float, float]:
    """(point estimate, lower, upper) of ``metric(labels, values)`` by resampling samples;
    resamples with a single class are skipped for ranking metrics."""
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
    for values, table in ((flags, CLASSIFICATION), (scores, RANKING)):
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


def chance_levels(n_variants: int | Sequence[int], size: int) -> np.ndarray:
    """Each sample's nominal chance of being flagged, 1/(n_i + 1) for its own number of
    variants n_i (the rate if the original were exchangeable with its variants)."""
    n = np.broadcast_to(np.asarray(n_variants, dtype=float), (size,))
    if (n < 1).any():
        raise ValueError("chance levels need at least one variant per decided sample")
    return 1.0 / (n + 1.0)


def difference_interval(
    k1: int, n1: int, k2: int, n2: int, level: float = 0.95
) -> tuple[float, float]:
    """Newcombe's hybrid score interval for the difference of two proportions k1/n1 − k2/n2
    (from each one's Wilson interval): well-behaved at rates near 0 or 1 and small n."""
    if n1 == 0 or n2 == 0:
        return (float("nan"), float("nan"))
    p1, p2 = k1 / n1, k2 / n2
    l1, u1 = stats.binomtest(k1, n1).proportion_ci(level, method="wilson")
    l2, u2 = stats.binomtest(k2, n2).proportion_ci(level, method="wilson")
    d = p1 - p2
    return (float(d - np.hypot(p1 - l1, u2 - p2)), float(d + np.hypot(u1 - p1, p2 - l2)))


def paired_difference_interval(
    both: int, only_first: int, only_second: int, neither: int, level: float = 0.95
) -> tuple[float, float]:
    """Newcombe's method 10 for the difference of two paired proportions (the same samples
    under two models): p1 − p2 = (only_first − only_second) / n, from each proportion's
    Wilson interval and the correlation of the pairs. For the audit's excess over a null
    model scored on the same samples, where an unpaired interval ignores the pairing."""
    n = both + only_first + only_second + neither
    if n == 0:
        return (float("nan"), float("nan"))
    k1, k2 = both + only_first, both + only_second
    p1, p2 = k1 / n, k2 / n
    l1, u1 = stats.binomtest(k1, n).proportion_ci(level, method="wilson")
    l2, u2 = stats.binomtest(k2, n).proportion_ci(level, method="wilson")
    margins = [(both + only_first), (only_second + neither), (both + only_second)]
    margins.append(only_first + neither)
    den = float(np.sqrt(np.prod(np.asarray(margins, dtype=float))))
    phi = (both * neither - only_first * only_second) / den if den else 0.0
    d = p1 - p2
    low = d - np.sqrt(max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
    high = d + np.sqrt(max(0.0, (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2))
    return float(low), float(high)


def flag_rate(
    flags: Sequence[bool | None],
    n_variants: int | Sequence[int],
    null_flags: Sequence[bool | None] | None = None,
    paired: bool = False,
) -> dict:
    """An audit without labels: the flag rate among decided samples, the nominal chance level
    (the mean of each decided sample's own 1/(n_i + 1)) with an exact Poisson-binomial test
    against it, the number of undecided samples, and, given flags from an empirical null,
    that null's rate and the excess over it. ``paired``: the null flags are a null model's on
    the same samples, in the same order — the excess is read on the samples both decide,
    with Newcombe's paired interval and McNemar's exact test (one-sided: more flags than the
    null); otherwise (control samples) Newcombe's interval for independent proportions and
    Fisher's exact test. Exchangeability rarely holds — an original's own names tend to be
    the most natural — so the nominal level alone overstates leakage; the empirical null is
    the comparison to trust."""
    values = list(flags)
    keep = decided(values)
    f = np.asarray([bool(v) for v, k in zip(values, keep, strict=True) if k], dtype=bool)
    if np.ndim(n_variants):
        n = np.asarray(n_variants)
        if len(n) != len(values):
            raise ValueError(f"{len(n)} variant counts for {len(values)} flags")
        n = n[keep]
    else:
        n = n_variants
    chances = chance_levels(n, int(f.size))
    out = {
        "flagged": int(f.sum()),
        "samples": len(values),
        "decided": int(f.size),
        "undecided": int((~keep).sum()),
        "rate": float(f.mean()) if f.size else float("nan"),
        "chance": float(chances.mean()) if f.size else float("nan"),
        "p_vs_chance": float(stats.poisson_binom(chances).sf(int(f.sum()) - 1))
        if f.size
        else float("nan"),
    }
    if null_flags is not None and paired:
        out.update(_paired_null(values, list(null_flags)))
    elif null_flags is not None:
        null = list(null_flags)
        g = np.asarray([bool(v) for v, k in zip(null, decided(null), strict=True) if k])
        table = [[int(f.sum()), int(f.size - f.sum())], [int(g.sum()), int(g.size - g.sum())]]
        low, high = difference_interval(int(f.sum()), int(f.size), int(g.sum()), int(g.size))
        out.update(
            null_rate=float(g.mean()) if g.size else float("nan"),
            null_undecided=int(len(null) - g.size),
            excess=out["rate"] - float(g.mean()) if g.size else float("nan"),
            excess_low=low,
            excess_high=high,
            p_vs_null=float(stats.fisher_exact(table, alternative="greater").pvalue),
            null_test="Fisher (independent samples)",
        )
    return out


def _paired_null(values: list, null: list) -> dict:
    """The excess over a null model on the same samples: McNemar and the paired interval."""
    if len(null) != len(values):
        raise ValueError(f"{len(null)} null flags for {len(values)} flags: pairs need both")
    keep = decided(values) & decided(null)
    f = np.asarray([bool(v) for v, k in zip(values, keep, strict=True) if k], dtype=bool)
    g = np.asarray([bool(v) for v, k in zip(null, keep, strict=True) if k], dtype=bool)
    cells = [int(np.sum(f & g)), int(np.sum(f & ~g)), int(np.sum(~f & g)), int(np.sum(~f & ~g))]
    low, high = paired_difference_interval(*cells)
    discordant = cells[1] + cells[2]
    p = stats.binomtest(cells[1], discordant, 0.5, "greater").pvalue if discordant else 1.0
    return {
        "null_rate": float(g.mean()) if g.size else float("nan"),
        "null_undecided": int(len(null) - int(decided(null).sum())),
        "paired": int(f.size),
        "excess": float(f.mean() - g.mean()) if f.size else float("nan"),
        "excess_low": low,
        "excess_high": high,
        "p_vs_null": float(p),
        "null_test": "McNemar (paired)",
    }


# --- the same metrics vectorised over bootstrap resamples: the fast path behind the
# testbed's large tables; ``evaluate`` (scikit-learn, one resample at a time) is the slow
# reference, and a test checks that both give the same numbers.


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
        for name, fn in RANKING.items():
            if y.all() or not y.any():
                rows.append(_metric_row(name, np.nan, np.nan, np.nan, y, keep))
                continue
            boots = fn(y[idx], s[idx]) if len(idx) else np.array([])
            low, high = np.quantile(boots, q) if boots.size else (np.nan, np.nan)
            rows.append(_metric_row(name, fn(y, s), low, high, y, keep))
    return pd.DataFrame(rows)


def _resamples(y: np.ndarray, n_boot: int, seed: int) -> np.ndarray:
    """Bootstrap index rows (drawn as ``bootstrap`` draws them), without the
    resamples that hold a single class."""
    rng = np.random.default_rng(seed)
    if len(y) == 0 or n_boot == 0:
        return np.zeros((0, len(y)), dtype=int)
    idx = np.stack([rng.integers(0, len(y), len(y)) for _ in range(n_boot)])
    both = y[idx].any(axis=1) & ~y[idx].all(axis=1)
    return idx[both]


def _metric_row(name: str, value, low, high, y: np.ndarray, keep: np.ndarray) -> dict:
    return {
        "metric": name,
        "value": float(value),
        "low": float(low),
        "high": float(high),
        "n": int(len(y)),
        "undecided": int((~keep).sum()),
    }


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
