"""Metrics with uncertainty: P/R/F1/MCC, ROC-AUC, TPR at low FPR, bootstrap intervals, and
flag rates against a nominal chance level and an empirical null."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd
from scipy import stats
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


def flag_rate(
    flags: Sequence[bool | None],
    n_variants: int | Sequence[int],
    null_flags: Sequence[bool | None] | None = None,
) -> dict:
    """An audit without labels: the flag rate among decided samples, the nominal chance level
    (the mean of each decided sample's own 1/(n_i + 1)) with an exact Poisson-binomial test
    against it, the number of undecided samples, and, given flags from an empirical null (a
    model that never saw the benchmark, or control samples), that null's rate, the excess
    over it with Newcombe's 95% interval, and Fisher's exact test. Exchangeability rarely
    holds — an original's own names tend to be the most natural — so the nominal level alone
    overstates leakage; the empirical null is the comparison to trust."""
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
    if null_flags is not None:
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
        )
    return out


BASELINES = ("ppl", "min_k", "min_k_pp", "zlib", "ref", "ngo")
SELF_REFERENTIAL = ("sr_gray", "sr_black")


def compare_detectors(
    table: pd.DataFrame, labels: Sequence[bool], n_boot: int = 200
) -> pd.DataFrame:
    """One row per detector of a ``detect`` table: F1 and MCC of its decisions and the
    threshold-free ROC-AUC of its oriented score. Baselines decide at the oracle threshold
    (max F1 on these very labels: an upper bound no audit can reach); SrDetection decides
    without one, and its margin (nats) is its score. The last row flags everything: the
    trivial reference every F1 must beat (its MCC is 0). MCC comes with its bootstrap 95%
    interval."""
    from srlib.decide import oracle_threshold, threshold_decide

    y = np.asarray(labels, dtype=bool)
    rows = []
    for name in BASELINES:
        if f"score_{name}" not in table:
            continue
        scores = table[f"score_{name}"].to_numpy(dtype=float)
        threshold, _ = oracle_threshold(scores, y)
        flags = threshold_decide(scores, threshold, inclusive=True)
        rows.append(_row(name, "threshold (oracle)", y, flags, scores, n_boot))
    for name in SELF_REFERENTIAL:
        if name in table:
            margins = table[f"{name}_margin"].to_numpy(dtype=float)
            rows.append(_row(name, "nothing", y, table[name], margins, n_boot))
    everything = np.ones(len(y), dtype=bool)
    rows.append(_row("flag everything", "nothing", y, everything, np.zeros(len(y)), n_boot))
    return pd.DataFrame(rows)


def _row(name: str, needs: str, y, flags, scores, n_boot: int) -> dict:
    from srlib.fastmetrics import metric_table  # the vectorised twin of ``evaluate``

    m = metric_table(y, flags, scores, n_boot=n_boot).set_index("metric")
    return {
        "detector": name,
        "needs": needs,
        "F1": m.value["f1"],
        "MCC": m.value["mcc"],
        "MCC low": m.low["mcc"],
        "MCC high": m.high["mcc"],
        "ROC-AUC": m.value["roc_auc"],
        "undecided": int(m.undecided["f1"]),
    }
