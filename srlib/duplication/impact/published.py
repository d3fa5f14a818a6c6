"""What the duplication study and SecretBench published, for side-by-side reading with what
is measured here, and the two no-training references read on a whole dataset.

Numbers here are the papers' (Soltaniani & Ghafari 2026, Tables I and IV–VI; SecretBench,
Basak et al. 2023), never measurements of this project."""

from __future__ import annotations

import numpy as np
import pandas as pd

from srlib.duplication.impact.features import Dataset, shape_rule
from srlib.stats.metrics import confusion_metrics


def paper_reference() -> pd.DataFrame:
    """The study's MCC per model and scenario (Tables IV–VI) and its relative drop Mixed →
    Unique, for side-by-side reading."""
    values = {
        "Random Forest": (0.89, 0.77, 0.65),
        "LSTM": (0.92, 0.82, 0.77),
        "GraphCodeBERT-MLP": (0.92, 0.81, 0.78),
        "GraphCodeBERT": (0.97, 0.92, 0.90),
    }
    table = pd.DataFrame(values, index=["mixed", "near-duplicate", "unique"]).T
    table["relative drop"] = (table["mixed"] - table["unique"]) / table["mixed"]
    return table


SECRETBENCH_PARTITION = {"C_unique": 21_484, "C_exact": 67_523, "C_near": 8_472}
"""The study's partition of SecretBench (its Table I): candidates per part."""


def beside_secretbench(table: pd.DataFrame, name: str = "here") -> pd.DataFrame:
    """The share of each part of a ``partition.partition_table`` beside SecretBench's."""
    theirs = pd.Series(SECRETBENCH_PARTITION, dtype=float)
    return pd.DataFrame(
        {name: table.loc[list(theirs.index), "share"], "SecretBench": theirs / theirs.sum()}
    )


def references_table(datasets: dict[str, Dataset]) -> pd.DataFrame:
    """Per dataset, on all its candidates: the share of true secrets and the precision,
    recall, F1 and MCC of flagging everything and of the shape rule — a dataset the shape
    rule separates tests the detectors' task, not what duplicates do to them."""
    rows = []
    for name, data in datasets.items():
        y = np.asarray(data.labels, dtype=bool)
        for reference, flags in (
            ("flag everything", np.ones(len(y), dtype=bool)),
            ("shape rule", shape_rule(data.numeric)),
        ):
            m = confusion_metrics(y, flags)
            row = {"data": name, "reference": reference, "candidates": len(y)}
            row["true share"] = float(y.mean())
            rows.append(row | {k: float(m[k]) for k in ("precision", "recall", "f1", "mcc")})
    return pd.DataFrame(rows).set_index(["data", "reference"])
