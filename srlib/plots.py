"""The figures the book shows (seaborn), each a function of a tidy table."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns


def length_distribution(lengths: pd.DataFrame, column: str = "solution_tokens") -> plt.Figure:
    """Distribution of a length column per benchmark (log-scaled histogram + ECDF)."""
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    sns.histplot(
        lengths,
        x=column,
        hue="benchmark",
        log_scale=True,
        element="step",
        stat="density",
        common_norm=False,
        ax=axes[0],
    )
    sns.ecdfplot(lengths, x=column, hue="benchmark", log_scale=True, ax=axes[1])
    label = column.replace("_", " ")
    axes[0].set(xlabel=label, title=f"{label} per sample")
    axes[1].set(xlabel=label, ylabel="share of samples ≤ x", title="cumulative")
    fig.tight_layout()
    return fig
