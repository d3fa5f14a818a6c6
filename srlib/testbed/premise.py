"""SR's premise checked blind on the testbed (``detection.blind.premise_scores``): per
benchmark and over all, how well a classifier that never queries a model tells each evaluated
problem's original from the variants the detection chapter scores, and how often SR's rule
applied to that classifier's scores flags a problem, beside the share of the held-out half
(problems the leaked model never saw) that SR gray flags there."""

from __future__ import annotations

import pandas as pd

from srlib.detection.blind import premise_scores, premise_summary
from srlib.testbed.testbed import Testbed

ALL = "all"
"""The row over every benchmark's problems."""


def premise_table(tb: Testbed, metrics: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per benchmark and one over all: problems, the blind classifier's AUC
    (original against variant, folds grouped by problem; the row over all pools each
    benchmark's own classifier's scores), its rule's flag rate, chance and p-value,
    and, given the main table's ``metrics``, SR gray's false-positive rate on the held-out
    half at the main run's last checkpoint (unfiltered). The variants are the first ``n`` of
    each problem, those the main table scores."""
    n, frames, rows = tb.config.n, [], []
    benchmarks = sorted({s.benchmark for s in tb.samples})
    for bench in benchmarks:
        idx = [i for i, s in enumerate(tb.samples) if s.benchmark == bench]
        scores = premise_scores(
            [tb.samples[i].text for i in idx],
            [[v.text for v in tb.variants[i][:n]] for i in idx],
            seed=tb.config.seed,
        )
        frames.append(scores.assign(problem=scores.problem.map(lambda k, b=bench: f"{b}/{k}")))
        rows.append({"benchmark": bench, **premise_summary(scores)})
    rows.append({"benchmark": ALL, **premise_summary(pd.concat(frames, ignore_index=True))})
    table = pd.DataFrame(rows).set_index("benchmark")
    table["problems"] = table.problems.astype(int)
    if metrics is not None:
        last = metrics[
            (metrics.run == tb.main)
            & (metrics.epoch == tb.config.epochs)
            & (metrics.view == "unfiltered")
            & (metrics.detector == "SR gray")
            & (metrics.threshold == "none")
            & (metrics.metric == "fpr")
        ]
        column = f"SR gray held-out flag rate (seed {tb.config.seed})"
        table[column] = last.set_index("group").value.reindex(table.index)
    return table
