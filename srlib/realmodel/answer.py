"""The real-model chapter's sentences, from its tables: what the audit's flag rates say against
the fresh problems' rate (the empirical null a real model can have), and what the design of
the known leak could detect. The leak's verdicts themselves are ``detection.answer``'s."""

from __future__ import annotations

import math

import pandas as pd

from srlib.detection.declared import CONFIRMATORY_ROLES
from srlib.detection.verdicts import pooled_rows, short
from srlib.stats.significance import NO_VERDICT
from srlib.stats.verdicts import direction

RULE = "gray"  # the audit's decision read in words: SR's gray-box rule


def _points(share: float) -> str:
    """A difference of two shares in percentage points, signed."""
    return f"{share * 100:+.0f}"


def _p(p: float) -> str:
    return f"p = {p:.2g}" if p >= 1e-4 else "p < 0.0001"


def audit_sentences(summary: pd.DataFrame, control: str, rule: str = RULE) -> list[str]:
    """Per audited benchmark: the rule's flag rate beside the control's (the model's own rate
    on problems it cannot have seen), the excess with its interval, Fisher's test and the
    excess the two sizes detect (``rates.detectable_excess``), and the
    pooled benchmark-level test against the control; then the control's rate beside chance."""
    rows = summary[(summary.decision == rule) & (summary.null == "control samples")]
    out = []
    for r in rows.itertuples():
        side = direction(r.excess_low, r.excess_high)
        verdict = {
            "better": "above the fresh problems' rate",
            "worse": "below the fresh problems' rate",
        }.get(side, "not distinguishable from the fresh problems' rate")
        pooled = (
            f"; pooled test against the fresh problems {_p(r.control_p)}"
            if not math.isnan(r.control_p)
            else ""
        )
        out.append(
            f"{r.benchmark}: SR {rule} flags {r.rate:.0%} of {r.decided} problems against "
            f"{r.null_rate:.0%} of the fresh ones, an excess of {r.excess:+.0%} "
            f"(95% interval {r.excess_low:+.0%} to {r.excess_high:+.0%}, one-sided Fisher "
            f"{_p(r.p_vs_null)}; at these sizes an excess of {r.excess_detectable:.0%} "
            "clears that interval with 80% power)"
            f": {verdict}{pooled}."
        )
    if len(rows):
        first = rows.iloc[0]
        out.append(
            f"On the fresh problems ({control}), never published before the model was trained, "
            f"SR {rule} "
            f"flags {first.null_rate:.0%}, where chance is {first.chance:.0%}: the share "
            "a clean real model already flags, the null every other rate is read against."
        )
    return out


def detectable_sentences(claims: pd.DataFrame) -> list[str]:
    """Per confirmatory contrast: the difference the leak's design detects with 80% power
    (``contrasts.contrast_table``'s ``detectable``) beside the one it found."""
    rows = pooled_rows(claims[claims.role.isin(CONFIRMATORY_ROLES)])
    out = []
    for r in rows.itertuples():
        seeds = int(getattr(r, "seeds", 1) or 1)
        runs = f"{seeds} seeds" if seeds > 1 else "one training run (no seed-to-seed spread)"
        if r.family_verdict == NO_VERDICT:
            out.append(
                f"{short(r.a)} against the mean of the baselines ({r.metric.upper()}): "
                f"{r.difference:+.2f}, the same in every resample of its {r.n} problems: too few "
                f"for an interval, {NO_VERDICT}."
            )
            continue
        out.append(
            f"{short(r.a)} against the mean of the baselines ({r.metric.upper()}): "
            f"{r.difference:+.2f} found, {r.detectable:.2f} detectable with 80% power at "
            f"{r.n} problems and {runs}: {r.family_verdict}."
        )
    return out


def headline(
    summary: pd.DataFrame, tables: dict, config, exposures: int, rule: str = RULE
) -> list[str]:
    """The landing page's sentences: each audited benchmark's SR rate against the fresh
    problems', then SR's rates on the leaked and held-out halves of the known leak beside the
    untouched model's (``config``: the chapter's ``RealConfig``); ``exposures``: how often the
    leak showed each leaked problem."""
    from srlib.realmodel.study import half_rates

    rows = summary[(summary.decision == rule) & (summary.null == "control samples")]
    model = rows.model.iloc[0] if len(rows) else "the real model"
    said = [
        f"{r.rate:.0%} of {r.benchmark} ({_points(r.excess)} points over the fresh rate, 95% "
        f"interval {_points(r.excess_low)} to {_points(r.excess_high)})"
        for r in rows.itertuples()
    ]
    out = []
    if said:
        out.append(
            f"A real model ({model}), audited against problems written for this book, never "
            f"published before it was trained: SR {rule} flags {rows.null_rate.iloc[0]:.0%} of "
            "those fresh problems, " + ", ".join(said) + "."
        )
    rates = half_rates(tables)
    if len(rates):
        mean = rates.groupby(["model", "half"]).rate.mean()
        seeds = rates.seed.nunique()
        out.append(
            f"Leaked on purpose ({config.leaked_share:.0%} of the fresh problems, each seen "
            f"{exposures} times in "
            f"continued pre-training; {seeds} seed{'s' if seeds > 1 else ''}): SR {rule} flags "
            f"{mean['leaked model', 'leaked']:.0%} "
            f"of the leaked half and {mean['leaked model', 'held out']:.0%} of the held-out "
            f"half; the untouched model {mean['untouched model', 'leaked']:.0%} and "
            f"{mean['untouched model', 'held out']:.0%} of the same halves."
        )
    return out


def box(summary: pd.DataFrame, tables: dict, claims: pd.DataFrame, rule: str = RULE) -> list[str]:
    """The chapter's answer box, short enough for a first screen: the audit's rates with each
    excess's interval, the leak's rates on its halves beside the untouched model's, and the
    two families' differences with what the design could detect."""
    from srlib.realmodel.study import half_rates

    out = []
    rows = summary[(summary.decision == rule) & (summary.null == "control samples")]
    if len(rows):
        said = ", ".join(
            f"{r.rate:.0%} of {r.benchmark} ({_points(r.excess)} points, "
            f"{_points(r.excess_low)} to {_points(r.excess_high)})"
            for r in rows.itertuples()
        )
        out.append(f"SR {rule} flags {rows.null_rate.iloc[0]:.0%} of the fresh problems, {said}.")
    rates = half_rates(tables)
    if len(rates):
        mean = rates.groupby(["model", "half"]).rate.mean()
        out.append(
            f"Leaked on purpose, it flags {mean['leaked model', 'leaked']:.0%} of the leaked "
            f"and {mean['leaked model', 'held out']:.0%} of the held-out problems (untouched: "
            f"{mean['untouched model', 'leaked']:.0%} and "
            f"{mean['untouched model', 'held out']:.0%})."
        )
    family = pooled_rows(claims[claims.role.isin(CONFIRMATORY_ROLES)])
    if len(family):
        out.append(
            "Against the baselines' mean: "
            + "; ".join(
                f"{r.metric.upper()} {r.difference:+.2f}, {r.family_verdict}"
                + ("" if r.family_verdict == NO_VERDICT else f" ({r.detectable:.2f} detectable)")
                for r in family.itertuples()
            )
            + "."
        )
    return out
