"""Detectors compared on one table, every property read from the registry: the long table
(one row per sample and detector), and its metrics with bootstrap intervals at each
threshold mode — threshold-free rules as they decide ("none"), thresholded scores at the
**oracle** threshold (an upper bound no audit has: max F1 for F1, max MCC for MCC are
different thresholds, so the oracle here is the MCC-optimal one and ``oracle_f1`` is
reported beside it), and at a threshold **calibrated** on known-clean samples at a fixed
false-positive rate (what an auditor can do) — beside flag-everything."""

from __future__ import annotations

import numpy as np
import pandas as pd

from srlib.detection.decide import (
    calibrated_threshold,
    contrasted,
    oracle_threshold,
    self_referential,
    threshold_decide,
)
from srlib.detection.registry import DETECTORS, detector
from srlib.stats.metrics import metric_table

_OWN_SR = {"SR gray": ("sr_gray", "sr_gray_margin"), "SR black": ("sr_black", "sr_black_margin")}


def long_table(
    table: pd.DataFrame,
    base: pd.DataFrame | None = None,
    unrelated: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Every registered detector that ``table`` (a ``detect`` table with ``leaked``) can
    feed, as rows: id, benchmark, leaked, detector, family, flag (threshold-free rules),
    score (oriented: higher = more likely leaked). ``base`` and ``unrelated`` are the
    reference models' tables on the same variants; without them, the rules that need them
    are left out."""
    refs = {
        "base": None if base is None else base.set_index("id"),
        "unrelated": None if unrelated is None else unrelated.set_index("id"),
    }
    rows = []
    for r in table.itertuples():
        for d in DETECTORS.values():
            if d.name == "flag everything":
                continue
            flag, score = decide(d, r, refs)
            if score is _MISSING:
                continue
            rows.append(
                {
                    "id": r.id,
                    "benchmark": r.benchmark,
                    "leaked": r.leaked,
                    "detector": d.name,
                    "family": d.family,
                    "flag": flag,
                    "score": score,
                }
            )
    return pd.DataFrame(rows)


_MISSING = object()


def decide(d, r, refs: dict) -> tuple:
    """(flag, score) of detector ``d`` on a ``detect`` table's row ``r`` (``refs``: reference
    kind → its table by id, or None); score ``_MISSING`` where it cannot run."""
    if d.name in _OWN_SR:
        flag, margin = _OWN_SR[d.name]
        return (getattr(r, flag), getattr(r, margin)) if hasattr(r, flag) else (None, _MISSING)
    if not d.threshold_free:
        return (None, getattr(r, d.score)) if hasattr(r, d.score) else (None, _MISSING)
    if not hasattr(r, d.score):
        return None, _MISSING
    own = getattr(r, d.score)
    if d.score.endswith("_margin"):  # a rule plug-in: its own margin, leaked above 0
        return (None if np.isnan(own) else bool(own > 0)), own
    if d.reference is None:
        v = self_referential(own[0], own[1:])
        return v.leaked, v.margin
    ref = refs[d.reference]
    if ref is None or d.score not in ref:
        return None, _MISSING
    v = contrasted(own, ref.at[r.id, d.score])
    return v.leaked, v.margin


def common_decided(long: pd.DataFrame, detectors=None) -> pd.DataFrame:
    """The rows of ``long`` on the samples every one of ``detectors`` (default: every
    detector in it) decides — a flag for threshold-free rules, a score for the others — so
    no detector is graded on samples another leaves out. Where a detector has no row for
    a sample, that sample is undecided for it."""
    names = list(dict.fromkeys(long.detector)) if detectors is None else list(detectors)
    rows = long[long.detector.isin(names)]
    free = rows.detector.map(lambda n: detector(n).threshold_free)
    value = rows.flag.astype(object).where(free, rows.score)
    decided = rows.assign(value=value).pivot(index="id", columns="detector", values="value")
    ids = decided.reindex(columns=names).dropna().index
    return long[long.id.isin(ids)]


def evaluate_detectors(
    long: pd.DataFrame,
    calibration: pd.DataFrame | None = None,
    fpr: float = 0.05,
    n_boot: int = 1000,
    groups: bool = True,
) -> pd.DataFrame:
    """Tidy metrics (metric, value, low, high) per detector, threshold mode and benchmark
    group ("all" and, with ``groups``, each benchmark): threshold-free rules as they decide
    ("none"), thresholded scores at the MCC-optimal oracle ("oracle") and the F1-optimal one
    ("oracle_f1"), every detector whose score the ``calibration`` long table (the same
    detectors on clean samples) holds at the threshold calibrated there ("calibrated"; for
    threshold-free rules, on their margin), and flag everything."""
    rows = []
    parts = [("all", long)]
    if groups:
        parts += [(b, g) for b, g in long.groupby("benchmark", sort=False)]
    clean = {} if calibration is None else dict(list(calibration.groupby("detector").score))
    for group, frame in parts:
        for name, d in frame.groupby("detector", sort=False):
            entry = detector(name)
            y, s = d.leaked.to_numpy(bool), d.score.to_numpy(float)
            modes = []
            if entry.threshold_free:
                modes.append(("none", list(d.flag)))
            else:
                for mode, objective in (("oracle", "mcc"), ("oracle_f1", "f1")):
                    t, _ = oracle_threshold(s, y, objective)
                    modes.append((mode, threshold_decide(s, t, inclusive=True)))
            if name in clean and clean[name].notna().any():
                t_cal = calibrated_threshold(clean[name], fpr)
                modes.append(("calibrated", threshold_decide(s, t_cal)))
            for mode, flags in modes:
                m = metric_table(y, flags, s, n_boot=n_boot)
                rows += [
                    {"group": group, "detector": name, "family": entry.family, "threshold": mode}
                    | rec
                    for rec in m.to_dict("records")
                ]
        y = frame.drop_duplicates("id").leaked.to_numpy(bool)
        m = metric_table(y, np.ones(len(y), bool), np.zeros(len(y)), n_boot=n_boot)
        rows += [
            {
                "group": group,
                "detector": "flag everything",
                "family": "trivial reference",
                "threshold": "none",
            }
            | rec
            for rec in m.to_dict("records")
        ]
    return pd.DataFrame(rows)


def as_decided(metrics: pd.DataFrame) -> pd.DataFrame:
    """Each detector at the threshold mode an auditor would use: threshold-free rules as
    they decide, thresholded scores at the calibrated threshold, and the trivial references
    (drops oracle thresholds and calibrated margins). Rules that need a reference model
    stay: ``deployable`` drops them."""
    free = metrics.detector.map(lambda n: detector(n).threshold_free)
    mode = metrics.threshold
    return metrics[(free & (mode == "none")) | (~free & mode.isin(["none", "calibrated"]))]


def deployable(metrics: pd.DataFrame) -> pd.DataFrame:
    """The rows an auditor can run: ``as_decided`` without the rules the registry marks
    undeployable (every rule that needs the pre-leak model or another reference)."""
    decided = as_decided(metrics)
    return decided[decided.detector.map(lambda n: detector(n).deployable)]


def wide(metrics: pd.DataFrame, which=("f1", "mcc", "roc_auc", "fpr")) -> pd.DataFrame:
    """One row per detector and threshold: each metric as ``value [low, high]`` text."""
    m = metrics[metrics.metric.isin(which)].copy()
    m["text"] = [
        f"{v:.2f} [{lo:.2f}, {hi:.2f}]" if np.isfinite(v) else "–"
        for v, lo, hi in zip(m.value, m.low, m.high, strict=True)
    ]
    index = [c for c in ("stage", "group", "detector", "threshold") if c in m]
    return m.pivot_table(index=index, columns="metric", values="text", aggfunc="first")[list(which)]
