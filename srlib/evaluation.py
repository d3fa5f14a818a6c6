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


def evaluate(
    labels: Sequence[bool],
    flags: Sequence[bool] | None = None,
    scores: Sequence[float] | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> pd.DataFrame:
    """A tidy table (metric, value, low, high) of every metric the inputs allow: decisions
    give P/R/F1/MCC, oriented scores give ROC-AUC and TPR at 1% / 5% FPR."""
    rows = []
    for values, table in ((flags, CLASSIFICATION), (scores, RANKING)):
        if values is None:
            continue
        for name, fn in table.items():
            value, lo, hi = bootstrap(fn, labels, values, n_boot, seed)
            rows.append({"metric": name, "value": value, "low": lo, "high": hi})
    return pd.DataFrame(rows)


def flag_rate(
    flags: Sequence[bool], n_variants: int, null_flags: Sequence[bool] | None = None
) -> dict:
    """An audit without labels: the flag rate, the nominal chance level 1/(n+1) (the rate if
    the original were exchangeable with its variants) with a binomial test against it, and,
    given flags from an empirical null (a model that never saw the benchmark, or control
    samples), that null's rate, the excess over it and Fisher's exact test. Exchangeability
    rarely holds — an original's own names tend to be the most natural — so the nominal level
    alone overstates leakage; the empirical null is the comparison to trust."""
    f = np.asarray(flags, dtype=bool)
    chance = 1 / (n_variants + 1)
    out = {
        "flagged": int(f.sum()),
        "samples": int(f.size),
        "rate": float(f.mean()) if f.size else float("nan"),
        "chance": chance,
        "p_vs_chance": float(stats.binomtest(int(f.sum()), int(f.size), chance, "greater").pvalue)
        if f.size
        else float("nan"),
    }
    if null_flags is not None:
        g = np.asarray(null_flags, dtype=bool)
        table = [[int(f.sum()), int(f.size - f.sum())], [int(g.sum()), int(g.size - g.sum())]]
        out.update(
            null_rate=float(g.mean()),
            excess=out["rate"] - float(g.mean()),
            p_vs_null=float(stats.fisher_exact(table, alternative="greater").pvalue),
        )
    return out
