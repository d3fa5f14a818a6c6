"""The claim's headline in words, from a ``contrasts.contrast_table``: the family-wise
verdicts of the primary contrasts first (better, worse, equivalent within the margin, or
inconclusive), each with its pooled interval, the design's detectable difference and the
rates both arms realise on the null controls; then the paper's own effect size against the
F1 intervals (the wording of single intervals is ``stats.verdicts``)."""

from __future__ import annotations

import math

import pandas as pd

from srlib.stats.verdicts import direction

POOLED = "pooled"
CONFIRMATORY = "pooled, confirmatory seeds"
VERDICTS = ("better", "worse", "equivalent", "inconclusive")


def pooled_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows of a contrast table a summary reads: the pool over every seed, or the one
    part there is (never the pool without the tuning seed)."""
    return rows[rows.part == POOLED] if POOLED in set(rows.part) else rows


def claim_headline(table: pd.DataFrame, role: str = "primary") -> list[str]:
    """The claim in sentences: a count of the ``role`` contrasts by family-wise verdict
    (each interval's own where the table has none), then per contrast the verdict first,
    its Holm-adjusted p-values, the pooled difference with its interval, the smallest
    difference the design detects with 80% power (and the seeds the margin would need), the
    rates both arms flag on the null controls, and in how many seeds its interval says the
    same; the count again without the tuning seed where the table has that pool; and the
    paper's reported gains against the F1 intervals."""
    rows = table[table.role == role]
    if rows.empty:
        return [f"No {role} contrast was computed."]
    seeds = [p for p in dict.fromkeys(rows.part) if p not in (POOLED, CONFIRMATORY)]
    summary = pooled_rows(rows)
    family = "family_verdict" in summary and summary.family_verdict.ne("").all()
    marginal = [direction(lo, hi) for lo, hi in zip(summary.low, summary.high, strict=True)]
    verdicts = list(summary.family_verdict) if family else marginal
    out = [_count(summary, verdicts, seeds, family, role)]
    for row, verdict, alone in zip(summary.itertuples(), verdicts, marginal, strict=True):
        same = rows[(rows.contrast == row.contrast) & rows.part.isin(seeds)]
        held = sum(direction(lo, hi) == alone for lo, hi in zip(same.low, same.high, strict=True))
        out.append(_row(row, verdict if family else alone, family, held, len(same)))
    kept = rows[rows.part == CONFIRMATORY]
    if family and len(kept):
        counts = ", ".join(f"{v} {list(kept.family_verdict).count(v)}" for v in VERDICTS)
        out.append(
            f"Without the seed the settings were tuned on ({len(seeds) - 1} seeds): {counts}."
        )
    if role == "primary":
        out += paper_sentences(table)
    return out


def _count(summary: pd.DataFrame, verdicts: list[str], seeds, family: bool, role: str) -> str:
    """The headline's first sentence: how many contrasts got each verdict."""
    where = f"pooled over {len(seeds)} seeds" if len(seeds) > 1 else f"on {seeds[0]}"
    resampled = "seeds and problems resampled" if len(seeds) > 1 else "problems resampled"
    if not family:
        b, w = verdicts.count("better"), verdicts.count("worse")
        return (
            f"Of {len(summary)} {role} contrasts ({where}, {resampled}, paired 95% intervals),"
            f" the first rule is better in {b}, worse in {w}, and there is no evidence of a"
            f" difference in {len(verdicts) - b - w}."
        )
    margin = summary.margin.iloc[0] if "margin" in summary else float("nan")
    said = ", ".join(f"{v} in {verdicts.count(v)}" for v in VERDICTS)
    return (
        f"Family-wise (Holm across {len(summary)} {role} contrasts, {where}, {resampled}), the"
        f" first rule is {said} (equivalent: within ±{margin:g} MCC; inconclusive: neither"
        " a difference nor equivalence shown — not the same as no difference)."
    )


def _row(row, verdict: str, family: bool, held: int, parts: int) -> str:
    """One contrast's sentence, its family-wise verdict first."""
    interval = f"{row.difference:+.3f} [{row.low:+.3f}, {row.high:+.3f}] {row.metric.upper()}"
    if family:
        text = (
            f"{row.a} − {row.b}: {verdict} family-wise (Holm p {_p(row.p_holm)}; equivalence"
            f" p {_p(row.p_equivalent_holm)}); {interval}"
        )
    else:
        text = f"{row.a} − {row.b}: {interval}, {verdict}"
    if not math.isnan(getattr(row, "detectable", float("nan"))):
        text += f"; the design detects {row.detectable:.3f} with 80% power"
        if row.seeds_needed > 1 and row.detectable > row.margin:
            text += f" ({int(row.seeds_needed)} seeds would detect {row.margin:g})"
    rates = (getattr(row, "a_null_rate", float("nan")), getattr(row, "b_null_rate", float("nan")))
    if not any(math.isnan(r) for r in rates):
        text += f"; null-control flag rates {rates[0]:.1%} and {rates[1]:.1%}"
    agree = f"; same interval verdict in {held} of {parts} seeds" if parts > 1 else ""
    return text + agree + "."


def paper_sentences(table: pd.DataFrame) -> list[str]:
    """Per rule, the paper's reported F1 gain against each F1 difference's interval at the
    primary point: inside it (consistent) or outside it (excluded)."""
    rows = pooled_rows(table[table.role == "paper"])
    out = []
    for rule, g in rows.groupby("a", sort=False):
        gain = g.paper_gain.iloc[0]
        inside = [f"{r.b.split(' (')[0]} {r.difference:+.3f} [{r.low:+.3f}, {r.high:+.3f}]"
                  for r in g.itertuples()]  # fmt: skip
        held = int(g.paper_inside.fillna(False).astype(bool).sum())
        out.append(
            f"The paper reports {rule} {gain * 100:+.2f} F1 points over the baselines; here, at"
            f" the primary point, F1 differences {'; '.join(inside)}: the claimed gain is inside"
            f" {held} of {len(g)} intervals and excluded by {len(g) - held}."
        )
    return out


def _p(p: float) -> str:
    """A bootstrap p-value as text: none of the resamples across zero is not a p of 0."""
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return "n/a"
    return f"= {p:.2g}" if p > 0 else "≈ 0 (no resample crossed the bound)"
