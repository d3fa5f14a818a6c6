"""Thresholds the leak cannot touch: calibrated on a benchmark of which the model saw nothing.

The detection chapter's cross-benchmark thresholds come from a calibration split or a held-out
half that shares a prompt template with the leaked samples the model saw. Here every model of
the audit's zoo is read on one benchmark with every threshold set on the *other* benchmark,
which that model never saw: for a model planted on benchmark X, calibrate on Y and grade on
X's leaked and held-out halves (``clean_shift_parts``, read by ``contrasts.contrast_table``);
for models that saw neither (the clean base, the null control) or only Y, every flag on X is
a false positive and each threshold should flag about its nominal share (``clean_fpr``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

import pandas as pd

from srlib.detection import registry
from srlib.detection.contrasts import contrast_table
from srlib.detection.declared import declared_contrasts
from srlib.testbed import experiment as ex
from srlib.testbed.experiment import planted_on
from srlib.testbed.report import flag_rate, stage_detectors
from srlib.testbed.testbed import Testbed


def model_long(tb: Testbed, label: str, path: Path) -> pd.DataFrame:
    """The long detector table (gray-box) of one zoo model on the testbed's samples, labelled
    for that model: leaked only where it saw the sample (its planted benchmark's leaked half)."""
    key = ("zoo long", label, str(path))  # read by both tables of the chapter: built once
    if key not in tb.memo:
        long = stage_detectors(tb, ex.Stage(label, 1, Path(path)))
        tb.memo[key] = long.assign(leaked=long.leaked & long.benchmark.eq(planted_on(label)))
    return tb.memo[key]


def clean_shift_parts(
    tb: Testbed, models: Mapping[str, Path]
) -> dict[str, tuple[pd.DataFrame, pd.DataFrame]]:
    """Per planted model: its planted benchmark's samples (leaked and held-out halves) as the
    evaluated long table, and the other benchmark's samples — all unseen by it — as the
    calibration long table: the parts ``contrasts.contrast_table`` reads."""
    parts = {}
    for label, path in models.items():
        target = planted_on(label)
        if target is None:
            continue
        long = model_long(tb, label, path)
        for other in long.benchmark.unique():
            if other != target:
                name = f"{label}, calibrated on {other}"
                parts[name] = (long[long.benchmark == target], long[long.benchmark == other])
    return parts


def clean_shift(tb: Testbed, models: Mapping[str, Path]) -> pd.DataFrame:
    """The deployable gray-box contrasts (SR gray against each threshold baseline matched to
    its flag rate on the calibration problems) on each planted model's benchmark, with the
    other benchmark, which the model never saw, as the calibration problems: each part alone
    (a model and its calibration benchmark), paired intervals with the calibration set
    resampled too; the four are one family (``deployable``), Holm-adjusted within each part.
    (The detection chapter's two families need a null control or a known held-out half of
    the judged model's own split, which a planted model's audit does not use.)"""
    contrasts = [
        replace(c, name=c.name.split(" (")[0], role="deployable")
        for c in declared_contrasts(black=())
        if c.b.threshold == "matched"
    ]
    parts = clean_shift_parts(tb, models)
    c = tb.config
    return contrast_table(parts, contrasts, c.fpr, c.n_boot, seed=c.seed, pooled=False)


def clean_fpr(tb: Testbed, models: Mapping[str, Path]) -> pd.DataFrame:
    """For every model that never saw benchmark X (the clean base, the null control, models
    planted elsewhere), X's samples flagged by each threshold baseline at the threshold that
    flags ``fpr`` of the other benchmark, and by each self-referential rule as it decides:
    the rate with its exact interval and, for thresholds, whether it is consistent with the
    nominal ``fpr`` (a self-referential rule's level is its chance level, not ``fpr``)."""
    fpr, rows = tb.config.fpr, []
    for label, path in models.items():
        long = model_long(tb, label, path)
        for target in long.benchmark.unique():
            if target == planted_on(label):
                continue
            own, other = long[long.benchmark == target], long[long.benchmark != target]
            for detector, d in own.groupby("detector", sort=False):
                entry = registry.detector(detector)
                if entry.family not in ("self-referential", "threshold baseline"):
                    continue  # trivial references and rules that read another model
                clean = other[other.detector == detector].score
                rate = flag_rate(d, clean, fpr, f"{detector} on {label}")
                if rate is None:
                    continue
                if rate["threshold"] == "calibrated":
                    rate["threshold"] = "calibrated on the other benchmark"
                rows.append(
                    {
                        "model": label,
                        "benchmark": target,
                        "detector": detector,
                        "family": entry.family,
                    }
                    | rate
                )
    return pd.DataFrame(rows)
