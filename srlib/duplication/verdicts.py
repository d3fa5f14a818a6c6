"""The duplication-impact chapter's verdict sentences, each from the table it judges: does
the study's ordering (Mixed > Near-duplicate > Unique) hold per model, which model drops
most, and what the tests between Mixed and Unique say."""

from __future__ import annotations

import pandas as pd

REFERENCES = ("flag everything", "shape rule")
"""References that learn nothing: reported in the tables, never judged as a detector."""


def scenario_means(results: pd.DataFrame, metric: str = "mcc") -> pd.DataFrame:
    """Mean ``metric`` over folds, one row per model and a column per scenario."""
    m = results[results.metric == metric]
    return m.groupby(["model", "scenario"]).value.mean().unstack()


def ordering(results: pd.DataFrame) -> list[str]:
    """Per model (trivial references left out): its mean MCC per scenario and whether the
    study's ordering Mixed > Near-duplicate > Unique holds on these means."""
    mcc = scenario_means(results)
    out = []
    for model, r in mcc.drop(index=list(REFERENCES), errors="ignore").iterrows():
        holds = r["mixed"] > r["near-duplicate"] > r["unique"]
        out.append(
            f"{model}: MCC {r['mixed']:.2f} (mixed) → {r['near-duplicate']:.2f} "
            f"(near-duplicate) → {r['unique']:.2f} (unique); Mixed > Near > Unique "
            + ("holds." if holds else "does not hold.")
        )
    return out


def drop_ranking(drop: pd.DataFrame, paper: pd.DataFrame) -> str:
    """Which model's relative MCC drop Mixed → Unique is largest and smallest here, beside
    the study's (``study.mcc_drop`` and ``study.paper_reference``)."""
    drops = drop.drop(index=list(REFERENCES), errors="ignore")["relative drop"]
    drops = drops.dropna().sort_values(ascending=False)
    if drops.empty:
        return "No model has both a Mixed and a Unique result."
    theirs = paper["relative drop"].sort_values(ascending=False)
    return (
        f"Largest relative drop Mixed → Unique here: {drops.index[0]} ({drops.iloc[0]:.0%}); "
        f"smallest: {drops.index[-1]} ({drops.iloc[-1]:.0%}). In the study the largest is "
        f"{theirs.index[0]} ({theirs.iloc[0]:.0%}) and the smallest {theirs.index[-1]} "
        f"({theirs.iloc[-1]:.0%})."
    )


def mixed_vs_unique(tests: pd.DataFrame, alpha: float = 0.05) -> list[str]:
    """The Mixed-vs-Unique test of each model (``study.t_tests`` rows: Welch's test, the
    folds being different samples; Holm-adjusted over every between-scenario test), as
    sentences that say whether the difference is significant at ``alpha``."""
    rows = tests[tests.within.str.startswith("model:")]
    pair = ((rows.a == "mixed") & (rows.b == "unique")) | (
        (rows.a == "unique") & (rows.b == "mixed")
    )
    out = []
    for _, r in rows[pair].iterrows():
        name = r.within.split(": ", 1)[1]
        if name in REFERENCES:
            continue
        if pd.isna(r.p):
            out.append(
                f"{name}: mixed vs unique, no test: its MCC is the same on every fold of "
                "both scenarios (no variance to test against)."
            )
            continue
        verdict = (
            "a difference beyond chance" if r["p (Holm)"] < alpha else "no evidence of a difference"
        )
        out.append(
            f"{name}: mixed vs unique, Welch's t-test over {r.folds} folds each, "
            f"p = {r.p:.3g} (Holm-adjusted {r['p (Holm)']:.3g}): {verdict} at {alpha:g}."
        )
    return out
