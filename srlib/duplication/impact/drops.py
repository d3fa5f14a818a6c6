"""How much a model's MCC drops from one scenario to another, with a bootstrap interval.

The folds of a scenario test every one of its testable samples once, so a model's fold
predictions pooled give one prediction per sample and scenario. Two scenarios test different
samples (Mixed: all, Unique: the unique pool), so the interval resamples each scenario's
samples on its own — an unpaired bootstrap — and reads the drop, absolute and relative, on
every resample. Two models within a scenario test the same samples, so the same resamples
serve both and the difference of their drops is paired (``drop_differences``)."""

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


def _pooled(predictions: pd.DataFrame, scenario: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per model: the samples ``scenario`` tested (sorted) and their predictions; every model
    must have been tested on the same samples (the study's folds are shared)."""
    out = {}
    for model, g in predictions[predictions.scenario == scenario].groupby("model", sort=False):
        g = g.sort_values("sample", kind="stable")
        out[model] = (g["sample"].to_numpy(), g.predicted.to_numpy(bool))
    tested = {tuple(s) for s, _ in out.values()}
    if len(tested) > 1:
        raise ValueError(
            f"the models were tested on different samples in scenario {scenario!r} "
            "(an unfinished run?): finish it before comparing models"
        )
    return out


def bootstrap_mcc(
    predictions: pd.DataFrame,
    labels: Sequence[bool],
    scenarios: Sequence[str],
    n_boot: int = 1000,
    seed: int = 0,
) -> dict[tuple[str, str], tuple[float, np.ndarray]]:
    """(model, scenario) → (MCC pooled over folds, its ``n_boot`` resampled values). Each
    scenario's samples are resampled on their own (scenarios test different samples) and the
    same resamples serve every model (models within a scenario test the same samples), so a
    difference between two models' values is paired."""
    y_all = np.asarray(labels, dtype=bool)
    rng = np.random.default_rng(seed)
    out = {}
    for scenario in scenarios:
        pooled = _pooled(predictions, scenario)
        if not pooled:
            continue
        samples = next(iter(pooled.values()))[0]
        y = y_all[samples]
        idx = rng.integers(0, len(y), (n_boot, len(y)))
        for model, (_, f) in pooled.items():
            point = float(confusion_metrics(y, f)["mcc"])
            out[model, scenario] = (point, confusion_metrics(y[idx], f[idx])["mcc"])
    return out


def _quantiles(values: np.ndarray, q: list[float]) -> tuple[float, float]:
    """The ``q`` quantiles of resampled values; NaN where any resample is undefined."""
    if np.isnan(values).any():
        return float("nan"), float("nan")
    lo, hi = np.quantile(values, q)
    return float(lo), float(hi)


def _relative(drop: np.ndarray, start: np.ndarray) -> np.ndarray:
    """The drop as a share of the start MCC; NaN where that MCC is not above 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(start > 0, drop / np.where(start > 0, start, 1), np.nan)


def _drop(boots: dict, model: str, start: str, end: str) -> tuple[float, np.ndarray]:
    """A model's relative drop start → end and its resamples (NaN where a resample's start
    MCC is not above 0)."""
    (a, boot_a), (b, boot_b) = boots[model, start], boots[model, end]
    return float(_relative(np.array(a - b), np.array(a))), _relative(boot_a - boot_b, boot_a)


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
    boots = bootstrap_mcc(predictions, labels, (start, end), n_boot, seed)
    q = [(1 - level) / 2, (1 + level) / 2]
    rows = []
    for model in predictions.model.unique():
        if (model, start) not in boots or (model, end) not in boots:
            continue
        (a, boot_a), (b, boot_b) = boots[model, start], boots[model, end]
        lo, hi = np.quantile(boot_a - boot_b, q)
        rel, rel_boots = _drop(boots, model, start, end)
        rel_lo, rel_hi = _quantiles(rel_boots, q)
        rows.append(
            {
                "model": model,
                start: a,
                end: b,
                "drop": a - b,
                "drop low": float(lo),
                "drop high": float(hi),
                "relative drop": rel,
                "relative low": rel_lo,
                "relative high": rel_hi,
            }
        )
    return pd.DataFrame(rows).set_index("model") if rows else pd.DataFrame()


def drop_differences(
    predictions: pd.DataFrame,
    labels: Sequence[bool],
    model: str,
    others: Sequence[str] | None = None,
    start: str = "mixed",
    end: str = "unique",
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """``model``'s relative MCC drop ``start`` → ``end`` minus each other model's, with a paired
    interval (both read on the same resampled samples). Empty where either relative drop is
    undefined on some resample (a start MCC not above 0: the trivial references)."""
    boots = bootstrap_mcc(predictions, labels, (start, end), n_boot, seed)
    q = [(1 - level) / 2, (1 + level) / 2]

    if (model, start) not in boots or (model, end) not in boots:
        raise ValueError(f"no {start} and {end} results for {model!r} in these predictions")
    mine, mine_boot = _drop(boots, model, start, end)
    names = others if others is not None else [m for m in predictions.model.unique() if m != model]
    rows = []
    for other in names:
        theirs, theirs_boot = _drop(boots, other, start, end)
        lo, hi = _quantiles(mine_boot - theirs_boot, q)
        rows.append(
            {
                "other": other,
                "relative drop": mine,
                "other's": theirs,
                "difference": mine - theirs,
                "low": float(lo),
                "high": float(hi),
            }
        )
    return pd.DataFrame(rows).set_index("other")


def against_reference(
    predictions: pd.DataFrame,
    labels: Sequence[bool],
    reference: str = "shape rule",
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """Per model and scenario: its pooled MCC minus ``reference``'s, with a paired interval
    (the same resampled samples for both): does a trained detector beat a rule that learns
    nothing?"""
    scenarios = list(dict.fromkeys(predictions.scenario))
    boots = bootstrap_mcc(predictions, labels, scenarios, n_boot, seed)
    q = [(1 - level) / 2, (1 + level) / 2]
    rows = []
    for (model, scenario), (mcc, boot) in boots.items():
        if model == reference or (reference, scenario) not in boots:
            continue
        ref, ref_boot = boots[reference, scenario]
        lo, hi = np.quantile(boot - ref_boot, q)
        rows.append(
            {
                "model": model,
                "scenario": scenario,
                "mcc": mcc,
                reference: ref,
                "difference": mcc - ref,
                "low": float(lo),
                "high": float(hi),
            }
        )
    return pd.DataFrame(rows).set_index(["model", "scenario"])
