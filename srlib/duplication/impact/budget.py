"""Training budgets that cannot decide a comparison between scenarios: every neural detector
trains the same number of optimiser steps in every scenario — the steps its configured epochs
take on the largest training fold of any scenario — and keeps its best validation point, so a
scenario with fewer training samples (Near-duplicate drops every exact copy) is not also
trained for less. ``budget_table`` says what each model was given."""

from __future__ import annotations

import math

import pandas as pd

NEURAL = ("LSTM", "Encoder + MLP (frozen)", "Encoder (fine-tuned)")


def largest_training_fold(folds: pd.DataFrame) -> int:
    """Training rows of the largest training fold over every scenario and fold."""
    train = folds[folds.role == "train"]
    return int(train.groupby(["scenario", "fold"]).size().max())


def equal_steps(detector, rows: int) -> int | None:
    """The optimiser steps ``detector`` gets in every scenario: its epochs over ``rows``
    training samples (bounded by its own ``max_train``, if any), in its batch size; None for
    a detector without a training loop."""
    if not hasattr(detector, "steps"):
        return None
    bound = getattr(detector, "max_train", None)
    used = min(rows, bound) if bound else rows
    return detector.epochs * math.ceil(used / detector.batch_size)


def budget_table(detectors: dict, rows: int) -> pd.DataFrame:
    """Per model: what it trains for (steps and batch size, or its search's fits), so every
    result can be read beside its budget."""
    out = []
    for name, d in detectors.items():
        steps = equal_steps(d, rows)
        if steps is not None:
            plural = "" if steps == 1 else "s"
            text = f"{steps:,} step{plural} of {d.batch_size} (best validation F1 kept)"
        elif hasattr(d, "maxiter"):
            fits = (d.maxiter + 1) * d.popsize * 5
            text = f"{fits} forest fits in the search, ≤ {d.max_trees} trees"
        elif name == "context only":
            text = "one logistic regression (no tuning)"
        else:
            text = "none (no training)"
        out.append({"model": name, "training": text})
    return pd.DataFrame(out).set_index("model")
