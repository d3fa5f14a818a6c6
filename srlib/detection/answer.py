"""The answer box, from a ``contrasts.contrast_table``: what was decided first, in words —
what SR flags on problems the leaked model saw and never saw, whether a model-free classifier
already tells an original from its variants, which scores rank leaked problems better (with
intervals), whose decisions hold at a clean model's threshold, the paper's gain at this book's
points — and only then what stays undecided and why (the power the design is expected to have
for its named effect, ``declared.DESIGN``). The full sentences per contrast are
``verdicts.claim_headline``'s, the power's range and the seeds it would need
``power_sentence``'s."""

from __future__ import annotations

import math
from collections.abc import Mapping

import pandas as pd

from srlib.detection.declared import CHOSEN_ON, CONFIRMATORY_ROLES, DESIGN, Planned
from srlib.detection.verdicts import paper_point, pooled_rows, seed_numbers, short
from srlib.stats.pooling import PowerRange, power, seeds_needed
from srlib.stats.significance import NO_VERDICT, collapsed
from srlib.stats.verdicts import direction

RATE_ROLE = "transport"
"""The family whose rows carry each rule's own flag rates (the rule as it decides)."""


def flag_rates(table: pd.DataFrame) -> list[tuple[str, float, float]]:
    """(rule, share of the leaked model's held-out problems it flags, share of its leaked
    ones), pooled over the seeds, from the rows where the rule decides as it does."""
    rows = pooled_rows(table[table.role == RATE_ROLE])
    out = []
    for rule, g in rows.groupby("a", sort=False):
        held, leaked = g.a_held_out_rate.iloc[0], g.a_leaked_rate.iloc[0]
        if not (math.isnan(held) or math.isnan(leaked)):
            out.append((short(rule), float(held), float(leaked)))
    return out


def _interval(r) -> str:
    """A row's pooled difference and interval."""

    def said(x: float) -> str:
        text = f"{x:+.2f}"
        return text[1:] if float(text) == 0 else text  # no sign on a zero

    return f"{said(r.difference)} [{said(r.low)}, {said(r.high)}]"


def _named(row) -> str:
    """A contrast's name without its metric and point ("SR gray − mean of 4 baselines")."""
    return row.contrast.split(" (")[0]


def _decided(rows: pd.DataFrame) -> list:
    """The rows whose family verdict decided something (not "inconclusive", not
    ``NO_VERDICT``)."""
    return [
        r for r in rows.itertuples() if r.family_verdict not in ("", "inconclusive", NO_VERDICT)
    ]


def _ranking(table: pd.DataFrame) -> str | None:
    """Which scores rank leaked problems better: the family's decided verdicts."""
    family = pooled_rows(table[table.role == "discrimination"])
    said = [f"{_named(r)} {_interval(r)} AUC, {r.family_verdict}" for r in _decided(family)]
    return "; ".join(said) or None


def exploratory_ranking(table: pd.DataFrame) -> str | None:
    """The baselines whose own AUC interval lies on one side of a rule's (exploratory, each
    interval unadjusted): said below the answer, not in its box, whose length must not grow
    with how many there are."""
    auc = pooled_rows(table[(table.role == "secondary") & (table.metric == "auc")])
    if "se" in auc:  # a collapsed bootstrap ranks nothing
        auc = auc[~collapsed(auc.se)]
    explored = []
    for rule in dict.fromkeys(auc.a):
        parts = []
        for side, words in (("worse", "worse than"), ("better", "better than")):
            mine = [f"{short(r.b)} ({_interval(r)})" for r in auc.itertuples()
                    if r.a == rule and direction(r.low, r.high) == side]  # fmt: skip
            if mine:
                parts.append(f"{words} {', '.join(mine)}")
        if parts:
            explored.append(f"{rule} ranks leaked problems " + ", ".join(parts))
    if not explored:
        return None
    return "; ".join(explored) + " (exploratory, each interval unadjusted: rule − score)"


def _transport(table: pd.DataFrame) -> str | None:
    """Whose decisions hold at a clean model's threshold: the family's decided verdicts."""
    rows = _decided(pooled_rows(table[table.role == "transport"]))
    return "; ".join(f"{_named(r)} {_interval(r)} MCC, {r.family_verdict}" for r in rows) or None


def _paper(table: pd.DataFrame) -> str | None:
    """The paper's gain at this book's points, per rule: each point's difference in F1 points
    and verdict, beside the paper's (their intervals are ``verdicts.paper_sentences``')."""
    rows = pooled_rows(table[table.role == "paper"])
    if rows.empty:
        return None
    said = []
    for rule, g in rows.groupby("a", sort=False):
        verdicts = {r.family_verdict or "no test" for r in g.itertuples()}
        one = len(verdicts) == 1 and len(g) > 1
        points = ", ".join(
            f"{100 * r.difference:+.1f} {paper_point(r)}"
            + ("" if one else f" ({r.family_verdict or 'no test'})")
            for r in g.itertuples()
        )
        after = f": {verdicts.pop()} at both points" if one else ""
        said.append(f"{short(rule)} (paper {g.paper_gain.iloc[0] * 100:+.0f}): {points}{after}")
    return "; ".join(said)


def undecided(table: pd.DataFrame) -> str | None:
    """The confirmatory contrasts that stayed inconclusive or got no verdict, named: an
    inconclusive one with the power its design is expected to have for the named effect
    (``power_sentence`` gives its range and the seeds 80% would need), or, where that power
    reached 80% and the interval lies inside ±the effect, saying so; bare where its design
    has no plan or one seed gives no pooled test (said first)."""
    rows = pooled_rows(table[table.role.isin(CONFIRMATORY_ROLES)])
    plans = {p.contrast: p for p in DESIGN}
    said = []
    for r in rows.itertuples():
        if r.family_verdict == NO_VERDICT:
            said.append(f"{short(r.a)} {r.metric.upper()} ({NO_VERDICT}: no spread to test)")
        if r.family_verdict != "inconclusive":
            continue
        plan, k = plans.get(r.contrast), int(getattr(r, "seeds", 1) or 1)
        name = f"{short(r.a)} {r.metric.upper()}"
        if plan is None or k < 2:
            said.append(name)
            continue
        family = int((rows.role == r.role).sum())
        stated, _, _ = _design(plan, r, k, family)
        if stated.expected >= 0.8 and -plan.effect < r.low and r.high < plan.effect:
            said.append(f"{name} (interval inside ±{plan.effect:g})")
        else:
            said.append(f"{name} (expected power {stated.expected:.0%} for {plan.effect:g})")
    if not said:
        return None
    one = int(rows.seeds.max()) < 2 if "seeds" in rows and rows.seeds.notna().any() else True
    return ("one seed, no pooled test: " if one else "") + ", ".join(said)


def power_sentence(plan: Planned, table: pd.DataFrame) -> str:
    """A confirmatory contrast's power for its named effect at the table's seeds: as stated
    in its design (``Planned.power_range``, before these seeds were run unless they are the
    exploratory ``CHOSEN_ON``: at the seeds' SD as estimated, expected over that estimate's
    uncertainty, and at the top of its 95% range), with the variance parts this table
    realised, and the seeds 80% would need at the larger of the two variances; where the
    expected or the realised power is under 80%, that a verdict is not to be expected."""
    rows = pooled_rows(table[table.contrast == plan.contrast])
    k = int(rows.seeds.iloc[0]) if len(rows) and "seeds" in rows else 0
    if k < 2:
        return f"one seed: no pooled test of {plan.effect:g}"
    family = int((pooled_rows(table).role == rows.role.iloc[0]).sum())
    stated, realised, needed = _design(plan, rows.iloc[0], k, family)
    seeds = "no number of seeds" if math.isinf(needed) else f"{int(needed)} seeds"
    when = "as designed (from these exploratory seeds)" if _exploratory(table) else "as designed"
    text = (
        f"power for a difference of {plan.effect:g} at {k} seeds {when}: {stated.said()};"
        f" {realised:.0%} with this build's variance; {seeds} would give 80%"
    )
    if min(stated.expected, realised) < 0.8:
        text += (
            "; with the expected or this build's power under 80%, a verdict on an effect"
            " that size is not to be expected here"
        )
    return text


def _design(plan: Planned, row, seeds: int, family: int) -> tuple[PowerRange, float, float]:
    """(stated power with its range, power with the row's own variance parts, the seeds 80%
    would need at the larger of the two variances) for the plan's effect."""
    own = (float(row.problem_se) ** 2, float(row.seed_sd) ** 2)
    parts = max((plan.problem_se**2, plan.seed_sd**2), own, key=lambda v: v[0] + v[1] / seeds)
    realised = power(*own, seeds, plan.effect, family)
    return plan.power_range(seeds, family), realised, seeds_needed(*parts, plan.effect, family)


def _exploratory(table: pd.DataFrame) -> bool:
    """Whether any seed of the table is one the design was read from (``CHOSEN_ON``)."""
    return any(n in CHOSEN_ON for n in seed_numbers(table))


def design_sentences(table: pd.DataFrame) -> list[str]:
    """Before the families' table: each confirmatory contrast's named effect and power
    (``power_sentence``), and where it is under 80% that a verdict is not to be expected."""
    out = []
    for plan in DESIGN:
        if (table.contrast == plan.contrast).any():
            said = power_sentence(plan, table)
            out.append(f"{plan.contrast}: {said}.")
    return out


def claim_answer(
    table: pd.DataFrame,
    markdown: bool = True,
    premise: Mapping[str, float] | None = None,
    rates: bool = True,
    exploratory: bool = False,
) -> list[str]:
    """The answer box: what was decided, first — SR's flag rates on the leaked model's
    held-out and leaked halves; with ``premise`` (``blind.premise_summary`` over the evaluated
    problems) what a model-free classifier makes of originals and variants; which scores rank
    leaked problems better; whose decisions hold at a clean model's threshold; the paper's
    gain at this book's points — then what stays undecided and why. Not ``markdown``: plain
    text, as a cell prints it; not ``rates``: without the flag rates (a chapter that says
    them its own way); with ``exploratory``, the exploratory rankings (``exploratory_ranking``)
    after the decided ones, for a cell to print — the box leaves them out, so that its length
    has a bound whatever the numbers (``tests/test_book.py`` renders the longest box the code
    can write, ``tests/test_claim_headline.longest_answer``, in the built chapter)."""
    if "role" not in table:
        return []
    strong = "**" if markdown else ""
    out = []
    said = flag_rates(table) if rates else []
    if said:
        out.append(
            f"{strong}What SR flags{strong}: "
            + "; ".join(
                f"{rule} {held:.0%} of problems the leaked model never saw, {leaked:.0%} of those"
                " it saw"
                if k == 0
                else f"{rule} {held:.0%} of unseen and {leaked:.0%} of seen ones"
                for k, (rule, held, leaked) in enumerate(said)
            )
            + "."
        )
    if premise is not None:
        told = premise["p_above_chance"] < 0.05
        out.append(
            f"{strong}Without a model{strong}, names and tokens "
            + ("tell" if told else "do not tell")
            + " originals from variants"
            + ("" if told else " beyond chance")
            + f" (AUC {premise['auc']:.2f}); SR's rule on them flags {premise['flag_rate']:.0%}"
            f" of problems (chance {premise['chance']:.0%})."
        )
    for label, said in (
        ("Ranking leaked problems", _ranking(table)),
        ("Exploratory rankings", exploratory_ranking(table) if exploratory else None),
        ("At a clean model's threshold", _transport(table)),
        ("The paper's F1 gain, at this book's matched points", _paper(table)),
        ("Undecided", undecided(table)),
    ):
        if said:
            out.append(f"{strong}{label}{strong}: {said}.")
    return out
