"""How much a model's MCC drops from one scenario to another, with a bootstrap interval.

The folds of a scenario test every one of its testable samples once, so a model's fold
predictions pooled give one prediction per sample and scenario. Two scenarios test different
samples (Mixed: all, Unique: the unique pool), so the interval resamples each scenario's
samples on its own — an unpaired bootstrap — and reads the drop, absolute and relative, on
every resample."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from srlib.detection.metrics import confusion_metrics


def fold_predictions(out_dir: str | Path) -> pd.DataFrame:
    """Every test prediction a study run wrote: model, scenario, fold, sample, predicted."""
    frames = []
    for file in sorted(Path(out_dir, "results").glob("*.json")):
        r = json.loads(file.read_text())
        if "test" not in r:
            raise ValueError(f"{file} holds no predictions (written by an older srlib): rerun")
        frames.append(
            pd.DataFrame(
                {
                    "model": r["model"],
                    "scenario": r["scenario"],
                    "fold": r["fold"],
                    "sample": r["test"],
                    "predicted": np.asarray(r["predicted"], dtype=bool),
                }
            )
        )
    columns = ["model", "scenario", "fold", "sample", "predicted"]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)


def mcc_drop_intervals(
    predictions: pd.DataFrame,
    labels: Sequence[bool],
    start: str = "mixed",
    end: str = "unique",
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """Per model: MCC in ``start`` and ``end`` (pooled over folds), the drop start − end and
    the relative drop, each with its percentile interval from resampling each scenario's
    samples on its own. The relative drop is left empty where the start MCC is not above 0,
    and its interval where a resample's is not (a share of nothing is no number)."""
    y_all = np.asarray(labels, dtype=bool)
    q = [(1 - level) / 2, (1 + level) / 2]
    rows = []
    for model, g in predictions.groupby("model", sort=False):
        parts = {s: g[g.scenario == s] for s in (start, end)}
        if any(p.empty for p in parts.values()):
            continue
        rng = np.random.default_rng(seed)
        point, boots = {}, {}
        for s, p in parts.items():
            y, f = y_all[p["sample"].to_numpy()], p.predicted.to_numpy(bool)
            idx = rng.integers(0, len(y), (n_boot, len(y)))
            point[s] = float(confusion_metrics(y, f)["mcc"])
            boots[s] = confusion_metrics(y[idx], f[idx])["mcc"]
        drop, boot_drop = point[start] - point[end], boots[start] - boots[end]
        lo, hi = np.quantile(boot_drop, q)
        rel = rel_lo = rel_hi = float("nan")  # a share of nothing: only above an MCC of 0
        if point[start] > 0:
            rel = drop / point[start]
        if (boots[start] > 0).all():
            rel_lo, rel_hi = np.quantile(boot_drop / boots[start], q)
        rows.append(
            {
                "model": model,
                start: point[start],
                end: point[end],
                "drop": drop,
                "drop low": float(lo),
                "drop high": float(hi),
                "relative drop": rel,
                "relative low": float(rel_lo),
                "relative high": float(rel_hi),
            }
        )
    return pd.DataFrame(rows).set_index("model") if rows else pd.DataFrame()
