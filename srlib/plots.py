"""The figures the book shows (seaborn), each a function of a tidy table."""

from __future__ import annotations

from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

if TYPE_CHECKING:
    from srlib.models.base import TokenScores


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


def variant_yield(yields: pd.DataFrame) -> plt.Figure:
    """Share of samples reaching at least n valid variants, per benchmark (from yield_table)."""
    cols = [c for c in yields.columns if c.startswith("n ≥")]
    long = yields[cols].reset_index().melt("benchmark", var_name="n", value_name="share")
    fig, ax = plt.subplots(figsize=(6, 3.4))
    sns.barplot(long, x="n", y="share", hue="benchmark", ax=ax)
    ax.set(
        ylim=(0, 1.05),
        ylabel="share of samples",
        xlabel="valid variants per sample",
        title="Variant yield",
    )
    fig.tight_layout()
    return fig


def tokens_changed_by_kind(table: pd.DataFrame) -> plt.Figure:
    """Distribution of changed tokens per variant, by transformation kind and benchmark."""
    fig, ax = plt.subplots(figsize=(7, 3.4))
    sns.boxplot(table, x="kinds", y="tokens changed", hue="benchmark", ax=ax, showfliers=False)
    ax.set(
        xlabel="transformation",
        ylabel="tokens changed in the scored text",
        title="How much each kind changes",
    )
    fig.tight_layout()
    return fig


def token_logprobs(traces: dict[str, TokenScores], window: int = 5) -> plt.Figure:
    """Per-token log-probs (rolling mean over ``window`` tokens) of an original and its
    variants, with each text's perplexity in the legend."""
    from srlib.scoring import perplexity

    fig, ax = plt.subplots(figsize=(9, 3.6))
    for i, (label, scores) in enumerate(traces.items()):
        lp = pd.Series(scores.logprobs).rolling(window, min_periods=1).mean()
        ppl = perplexity(scores).raw
        ax.plot(
            lp.values,
            lw=2.2 if i == 0 else 1,
            color="black" if i == 0 else None,
            label=f"{label} (PPL {ppl:.1f})",
            alpha=1 if i == 0 else 0.7,
        )
    ax.set(
        xlabel="token position",
        ylabel=f"log p (rolling mean of {window})",
        title="Per-token log-probabilities",
    )
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    return fig


def loss_curve(losses: list[float]) -> plt.Figure:
    """Training loss per step."""
    fig, ax = plt.subplots(figsize=(6, 3))
    ax.plot(losses)
    ax.set(xlabel="step", ylabel="loss", title="Training loss")
    fig.tight_layout()
    return fig


def cluster_sizes(parts: pd.DataFrame) -> plt.Figure:
    """How many exact-duplicate groups and near-duplicate clusters have each size (log-log)."""
    rows = []
    for kind, col in (("exact groups", "exact_group"), ("near-duplicate clusters", "near_cluster")):
        sizes = parts[parts[col] >= 0][col].value_counts().value_counts().sort_index()
        rows += [{"members": m, "clusters": c, "kind": kind} for m, c in sizes.items()]
    fig, ax = plt.subplots(figsize=(6.5, 3.4))
    sns.scatterplot(pd.DataFrame(rows), x="members", y="clusters", hue="kind", ax=ax)
    ax.set(xscale="log", yscale="log", title="Cluster sizes")
    fig.tight_layout()
    return fig
