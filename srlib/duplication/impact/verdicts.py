"""The duplication-impact chapter's verdict sentences, each from the table it judges: does
the study's ordering (Mixed > Near-duplicate > Unique) hold per model, how each model's drop
compares with the study's, whether Random Forest drops most, and what the tests between
Mixed and Unique say. Orderings and comparisons are read from intervals, never from point
estimates alone."""

from __future__ import annotations

import pandas as pd

REFERENCES = ("flag everything", "shape rule", "context only")
"""The references (``duplication.impact.references``): reported in the tables, never judged as a
detector."""


def scenario_means(results: pd.DataFrame, metric: str = "mcc") -> pd.DataFrame:
    """Mean ``metric`` over folds, one row per model and a column per scenario."""
    m = results[results.metric == metric]
    return m.groupby(["model", "scenario"]).value.mean().unstack()


STUDY_NAMES = {
    "Random Forest": "Random Forest",
    "LSTM": "LSTM",
    "Encoder + MLP (frozen)": "GraphCodeBERT-MLP",
    "Encoder (fine-tuned)": "GraphCodeBERT",
}
"""Each family here → its counterpart in the study's tables."""


def _step(row: pd.Series) -> str:
    return f"{row['drop']:+.2f} [{row['drop low']:+.2f}, {row['drop high']:+.2f}]"


def ordering(first: pd.DataFrame, second: pd.DataFrame) -> list[str]:
    """Per model (trivial references left out): does the study's ordering Mixed > Near-duplicate
    > Unique hold, judged on the intervals of both steps (``drops.mcc_drop_intervals`` Mixed →
    Near-duplicate as ``first``, Near-duplicate → Unique as ``second``): "holds" when both
    drops' intervals lie above 0, "is reversed" when either lies below 0, else no evidence."""
    out = []
    for model in first.index.drop(list(REFERENCES), errors="ignore"):
        if model not in second.index:
            continue
        one, two = first.loc[model], second.loc[model]
        if one["drop low"] > 0 and two["drop low"] > 0:
            verdict = "the study's ordering Mixed > Near > Unique holds (both drops above 0)"
        elif one["drop high"] < 0 or two["drop high"] < 0:
            verdict = "the study's ordering is reversed (a step's MCC rises beyond its interval)"
        else:
            verdict = (
                "no evidence for the study's full ordering Mixed > Near > Unique "
                "(a step's interval includes 0)"
            )
        out.append(
            f"{model}: MCC {one['mixed']:.2f} (Mixed) → {one['near-duplicate']:.2f} (Near) → "
            f"{two['unique']:.2f} (Unique); drops {_step(one)} and {_step(two)}: {verdict}."
        )
    return out


def against_study(drop: pd.DataFrame, paper: pd.DataFrame) -> list[str]:
    """Per model with a counterpart in the study: its relative MCC drop Mixed → Unique with
    its interval (``drops.mcc_drop_intervals``) beside the study's (``published.paper_reference``),
    and whether the study's value lies inside the interval, above it or below it."""
    out = []
    for model, study_name in STUDY_NAMES.items():
        if model not in drop.index:
            continue
        r, theirs = drop.loc[model], paper.loc[study_name, "relative drop"]
        if pd.isna(r["relative low"]):
            out.append(
                f"{model}: no relative drop to compare with the study's {theirs:.0%} "
                f"({study_name}): its Mixed MCC is not above 0 on every resample."
            )
            continue
        here = f"{r['relative drop']:.0%} [{r['relative low']:.0%}, {r['relative high']:.0%}]"
        if r["relative low"] <= theirs <= r["relative high"]:
            verdict = "consistent with the study"
        elif theirs > r["relative high"]:
            verdict = "smaller than the study's"
        else:
            verdict = "larger than the study's"
        exists = "a drop" if r["drop low"] > 0 else "no evidence of a drop"
        out.append(
            f"{model}: relative MCC drop Mixed → Unique {here} ({exists}); the study's "
            f"{study_name}: {theirs:.0%}, {verdict}."
        )
    return out


def largest_drop(differences: pd.DataFrame, model: str = "Random Forest") -> str:
    """Whether ``model`` drops most, as in the study, from the paired differences of its
    relative drop minus every other model's (``drops.drop_differences``): "drops more" only
    where the interval lies above 0."""
    rows = differences.drop(index=list(REFERENCES), errors="ignore")
    if rows.low.isna().all():
        return f"No model's relative drop can be compared with {model}'s."
    side = _sides(rows.index, rows.low, rows.high)
    if len(side["above"]) == len(rows):
        return (
            f"{model} drops more than every other model (each paired interval above 0), "
            "as in the study."
        )
    text = _listing(
        side,
        above="more than {}",
        below="less than {}",
        unclear="no evidence of a difference from {}",
        undefined="no comparison with {} (a Mixed MCC not above 0)",
    )
    return (
        f"{model}'s relative drop, paired with each other model's: {text}. "
        "The study's finding that it drops most is not reproduced here."
    )


def _sides(names, low, high) -> dict[str, list]:
    """Names whose interval lies above 0, below 0, includes 0, or is undefined (NaN)."""
    out: dict[str, list] = {"above": [], "below": [], "unclear": [], "undefined": []}
    for name, lo, hi in zip(names, low, high, strict=True):
        key = "undefined" if pd.isna(lo) else "above" if lo > 0 else "below" if hi < 0 else None
        out[key or "unclear"].append(name)
    return out


def _listing(side: dict[str, list], **templates: str) -> str:
    """The non-empty sides, each through its template, joined by semicolons."""
    return "; ".join(t.format(", ".join(side[k])) for k, t in templates.items() if side[k])


def against_references(table: pd.DataFrame, reference: str = "shape rule") -> list[str]:
    """Per trained model: in which scenarios it beats ``reference`` (``drops.against_reference``:
    the paired interval of its MCC minus the reference's above 0), falls below it, or shows no
    evidence of a difference."""
    out = []
    for model, g in table.drop(index=list(REFERENCES), level="model", errors="ignore").groupby(
        level="model", sort=False
    ):
        side = _sides(g.index.get_level_values("scenario"), g.low, g.high)
        if len(side["above"]) == len(g):
            out.append(f"{model} beats the {reference} in every scenario (paired intervals).")
            continue
        text = _listing(
            side,
            above="beats it in {}",
            below="falls below it in {}",
            unclear="no evidence of a difference in {}",
            undefined="no interval in {}",
        )
        out.append(f"{model} against the {reference}: {text}.")
    return out


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
