"""The figures the book shows (seaborn), each a function of a tidy table."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from srlib.detection.verdicts import CONFIRMATORY, WITHOUT_TUNING, pooled_rows

if TYPE_CHECKING:
    from srlib.models.base import TokenScores

THEME = {"style": "whitegrid", "context": "notebook", "palette": "colorblind"}
"""The book's one look; importing this module applies it (every chapter draws through it)."""
sns.set_theme(**THEME)


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
    from srlib.detection.scoring import perplexity

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
        ylabel=f"log p (nats; rolling mean of {window})",
        title="Per-token log-probabilities",
    )
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    return fig


def loss_curve(losses: list[float] | dict[str, list[float]], smooth: int = 1) -> plt.Figure:
    """Training loss per step, of one run or of several named runs (rolling mean over
    ``smooth`` steps)."""
    curves = losses if isinstance(losses, dict) else {"": losses}
    fig, ax = plt.subplots(figsize=(7, 3.2))
    for name, values in curves.items():
        ax.plot(pd.Series(values).rolling(smooth, min_periods=1).mean().values, label=name)
    ax.set(xlabel="optimiser step", ylabel="loss (nats per token)", title="Training loss")
    if len(curves) > 1:
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def cluster_sizes(parts: pd.DataFrame) -> plt.Figure:
    """How many exact-duplicate groups and near-duplicate clusters have each size (log-log); a
    near cluster counts its ``C_near`` members, so a context near an exact group only is a
    cluster of one."""
    rows = []
    for kind, col in (("exact groups", "exact_group"), ("near-duplicate clusters", "near_cluster")):
        sizes = parts[parts[col] >= 0][col].value_counts().value_counts().sort_index()
        rows += [{"members": m, "clusters": c, "kind": kind} for m, c in sizes.items()]
    fig, ax = plt.subplots(figsize=(6.5, 3.4))
    sns.scatterplot(pd.DataFrame(rows), x="members", y="clusters", hue="kind", ax=ax)
    ax.set(
        xscale="log",
        yscale="log",
        xlabel="secrets per cluster",
        ylabel="clusters of that size",
        title="Cluster sizes",
    )
    fig.tight_layout()
    return fig


def memorisation(table: pd.DataFrame) -> plt.Figure:
    """Leaked against held-out perplexity per checkpoint of each run (from
    ``testbed.report.memorisation_table``)."""
    long = table.melt(
        id_vars=["run", "epoch"], value_vars=["leaked PPL", "held-out PPL"], var_name="samples"
    )
    fig, ax = plt.subplots(figsize=(7, 3.4))
    sns.lineplot(long, x="epoch", y="value", hue="run", style="samples", marker="o", ax=ax)
    ax.set(
        xlabel="epoch of continued pre-training",
        ylabel="perplexity (per token)",
        yscale="log",
        title="Leaked and held-out perplexity",
    )
    ax.xaxis.get_major_locator().set_params(integer=True)
    fig.tight_layout()
    return fig


def detector_intervals(metrics: pd.DataFrame, metric: str = "mcc") -> plt.Figure:
    """One metric with its bootstrap interval per detector (and threshold mode), a panel
    per benchmark group: self-referential detectors against the baselines."""
    m = metrics[metrics.metric == metric].copy()
    m["detector"] = m.detector + " (" + m.threshold + ")"
    groups = list(dict.fromkeys(m.group))
    fig, axes = plt.subplots(
        1,
        len(groups),
        figsize=(4.2 * len(groups), 0.32 * m.detector.nunique() + 1.2),
        sharey=True,
        squeeze=False,
    )
    palette = {
        "self-referential": "tab:red",
        "needs a reference model": "tab:purple",
        "threshold baseline": "tab:blue",
        "trivial reference": "gray",
    }
    for ax, group in zip(axes[0], groups, strict=True):
        g = m[m.group == group].reset_index(drop=True)
        for i, r in g.iterrows():
            ax.errorbar(
                r.value,
                i,
                xerr=[[r.value - r.low], [r.high - r.value]],
                fmt="o",
                color=palette.get(r.family, "black"),
            )
        ax.set_yticks(range(len(g)), g.detector)
        ax.axvline(0, color="gray", lw=0.5)
        ax.set(title=group, xlabel=metric.upper())
    fig.tight_layout()
    return fig


def contrast_forest(table: pd.DataFrame, role: str | None = None) -> plt.Figure:
    """Each contrast's difference with its paired interval (a ``contrast_table``), one
    marker per part (seed) and the pooled one in black (sub-pools of a few seeds, whose t
    intervals are wide, are left to the table), beside the line of no difference and
    the equivalence margin (shaded); each label ends with the pooled family-wise (Holm)
    verdict where the table has one."""
    t = table if role is None else table[table.role == role]
    if len(t) and ("difference" not in t or t.difference.isna().all()):  # nothing decided
        fig, ax = plt.subplots(figsize=(7, 1.2))
        ax.axis("off")
        ax.text(0.5, 0.5, "No contrast here had decisions to compare: the table says why.",
                ha="center", va="center")  # fmt: skip
        return fig
    t = t[~t.part.isin([WITHOUT_TUNING, CONFIRMATORY])]  # sub-pools of few seeds: in the table
    if t.empty:
        raise ValueError(f"no contrast of role {role!r} in the table: nothing to draw")
    t = t[t.difference.notna()]
    names = list(dict.fromkeys(t.contrast))
    parts = list(dict.fromkeys(t.part))
    colours = dict(zip(parts, sns.color_palette("muted", len(parts)), strict=True))
    colours["pooled"] = "black"
    fig, ax = plt.subplots(figsize=(7, 0.45 * len(names) + 1.3))
    step = 0.7 / max(len(parts), 1)
    for k, part in enumerate(parts):
        p = t[t.part == part].set_index("contrast").reindex(names)
        y = [i + (k - (len(parts) - 1) / 2) * step for i in range(len(names))]
        err = [(p.difference - p.low).to_numpy(), (p.high - p.difference).to_numpy()]
        marker = "D" if part == "pooled" else "o"
        ax.errorbar(p.difference, y, xerr=err, fmt=marker, color=colours[part], label=part, ms=4)
    labels = names
    summary = pooled_rows(t).set_index("contrast")
    if "family_verdict" in t and summary.family_verdict.ne("").all():
        labels = [f"{n}\n{summary.family_verdict[n]} (Holm)" for n in names]
    ax.set_yticks(range(len(names)), labels, fontsize=8)
    ax.invert_yaxis()
    ax.axvline(0, color="gray", lw=0.8)
    if "margin" in t and t.margin.notna().any():
        m = float(t.margin.dropna().iloc[0])
        ax.axvspan(-m, m, color="gray", alpha=0.12, lw=0, label=f"equivalence ±{m:g}")
    metric = "/".join(sorted({m.upper() for m in t.metric}))
    ax.set(xlabel=f"difference in {metric} (first rule − second), 95% paired interval")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1))
    fig.tight_layout()
    return fig


def metric_by(frame: pd.DataFrame, x: str, metric: str = "mcc", title: str = "") -> plt.Figure:
    """One metric of each detector against ``x`` (epoch, code-to-text ratio, n), with
    intervals where the frame has them."""
    m = frame[frame.metric == metric] if "metric" in frame else frame
    fig, ax = plt.subplots(figsize=(7, 3.6))
    sns.lineplot(m, x=x, y="value", hue="detector", marker="o", ax=ax, errorbar=None)
    if {"low", "high"} <= set(m.columns):
        for _, g in m.groupby("detector"):
            ax.fill_between(g[x], g.low, g.high, alpha=0.12)
    ax.set(ylabel=metric.upper(), title=title)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    return fig


def rejection_rates(power: pd.DataFrame, alpha: float) -> plt.Figure:
    """A pooled test's rejection rate against the samples per set, one line per condition
    (power where the model saw the set, false-positive rate where it did not) and one panel
    per design, with intervals and the nominal level ``alpha`` dashed."""
    designs = list(power.design.unique()) if "design" in power else [None]
    fig, axes = plt.subplots(
        1, len(designs), figsize=(5 * len(designs), 3.8), sharey=True, squeeze=False
    )
    for ax, design in zip(axes[0], designs, strict=True):
        p = power if design is None else power[power.design == design]
        sns.lineplot(
            p, x="samples", y="rejection rate", hue="set", style="saw it", marker="o", ax=ax
        )
        for _, g in p.groupby("set"):
            ax.fill_between(g.samples, g.low, g.high, alpha=0.12)
        ax.axhline(alpha, color="gray", linestyle="--", linewidth=1)
        title = f"Pooled test at α = {alpha:g}" + (f", {design}" if design else "")
        ax.set(xscale="log", ylim=(-0.02, 1.02), title=title)
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def mcc_by_scenario(mcc: pd.DataFrame, order: Sequence[str]) -> plt.Figure:
    """The duplication study's Fig. 3 with intervals: each detector's pooled MCC per scenario
    (``order``, duplicates and then shared files and repositories removed from training)
    with its 95% interval resampling repositories and files (``drops.mcc_table``)."""
    table = mcc.reset_index()
    scenarios = [s for s in order if s in set(table.scenario)]
    from srlib.duplication.impact.drops import REFERENCES

    found = list(dict.fromkeys(table.model))
    models = [m for m in REFERENCES if m in found] + [m for m in found if m not in REFERENCES]
    fig, ax = plt.subplots(figsize=(7.5, 4))
    width = 0.7 / max(1, len(models))
    for k, model in enumerate(models):
        rows = table[table.model == model].set_index("scenario").reindex(scenarios)
        x = [i - 0.35 + width * (k + 0.5) for i in range(len(scenarios))]
        errors = [rows["mcc"] - rows["low"], rows["high"] - rows["mcc"]]
        ax.errorbar(x, rows["mcc"], yerr=errors, fmt="o-", capsize=2, label=model, markersize=4)
    ax.set_xticks(range(len(scenarios)), scenarios)
    ax.set(xlabel="scenario (what training shares with the test removed →)", ylabel="MCC")
    ax.axhline(0, color="gray", linewidth=0.8)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def mcc_by_training_repositories(curve: pd.DataFrame) -> plt.Figure:
    """The duplication study's learning curve: each detector's pooled MCC on unseen
    repositories against the number of repositories it trained on, with its 95% interval
    resampling repositories and files (``curve.curve_table``)."""
    fig, ax = plt.subplots(figsize=(7.5, 4))
    for model, rows in curve.reset_index().groupby("model", sort=False):
        (line,) = ax.plot(rows.repositories, rows.mcc, "o-", label=model, markersize=4)
        ax.fill_between(rows.repositories, rows.low, rows.high, alpha=0.12, color=line.get_color())
    ax.set(
        xlabel="training repositories (nested subsets per fold)", ylabel="MCC, unseen repositories"
    )
    ax.axhline(0, color="gray", linewidth=0.8)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def audit_heatmap(summary: pd.DataFrame) -> plt.Figure:
    """Models × benchmarks, one panel per decision: the flag rate's excess over its empirical
    null (over the nominal chance level where the audit has no null), each cell annotated
    with the flag rate and the rate it is compared with."""
    decisions = list(dict.fromkeys(summary.decision))
    fig, axes = plt.subplots(
        1,
        len(decisions),
        figsize=(
            3.2 + 2.2 * summary.benchmark.nunique() * len(decisions),
            max(2.2, 0.6 + 0.5 * summary.model.nunique()),
        ),
        squeeze=False,
    )
    for ax, decision in zip(axes[0], decisions, strict=True):
        s = summary[summary.decision == decision].copy()
        base = s.null_rate if "null_rate" in s and s.null_rate.notna().any() else s.chance
        s["versus"] = base.fillna(s.chance)
        s["excess"] = s.rate - s.versus
        value = s.pivot(index="model", columns="benchmark", values="excess")
        text = (s.rate.map("{:.0%}".format) + "\nvs " + s.versus.map("{:.0%}".format)).to_numpy()
        labels = s.assign(text=text).pivot(index="model", columns="benchmark", values="text")
        sns.heatmap(
            value,
            annot=labels.loc[value.index, value.columns],
            fmt="",
            cmap="RdBu_r",
            center=0,
            vmin=-1,
            vmax=1,
            cbar=ax is axes[0][-1],
            cbar_kws={"label": "flag rate − null"},
            annot_kws={"fontsize": 8},
            ax=ax,
        )
        ax.set(title=f"SR {decision}", xlabel="", ylabel="")
    fig.tight_layout()
    return fig


def audit_rates(summary: pd.DataFrame) -> plt.Figure:
    """Each model's flag rate on each benchmark beside its empirical null, with the excess's
    95% interval (Newcombe) drawn from the null: where the bar clears zero, the excess is real."""
    s = summary[summary.null != "none"].copy() if "null" in summary else summary.iloc[:0]
    if s.empty:
        s = summary.copy()
        s["null_rate"], s["excess"] = s.chance, s.rate - s.chance
        s["excess_low"], s["excess_high"] = s.excess, s.excess
    s["row"] = s.model + " · " + s.benchmark
    decisions = list(dict.fromkeys(s.decision))
    fig, axes = plt.subplots(
        1,
        len(decisions),
        figsize=(6 * len(decisions), max(2.6, 1.3 + 0.32 * s.row.nunique())),
        sharey=True,
        squeeze=False,
    )
    for ax, decision in zip(axes[0], decisions, strict=True):
        g = s[s.decision == decision].reset_index(drop=True)
        y = range(len(g))
        ax.scatter(g.null_rate, y, marker="|", s=160, color="gray", label="null rate")
        ax.errorbar(
            g.null_rate + g.excess,
            y,
            xerr=[g.excess - g.excess_low, g.excess_high - g.excess],
            fmt="o",
            color="tab:red",
            label="flag rate (excess 95% CI)",
        )
        ax.set_yticks(list(y), g.row)
        ax.invert_yaxis()
        ax.set(xlim=(-0.02, 1.02), xlabel="share of samples flagged", title=f"SR {decision}")
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=2)
    fig.tight_layout()
    return fig
