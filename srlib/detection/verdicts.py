"""The claim's headline in words: the family-wise verdicts of the primary contrasts counted
(the wording of single intervals is ``stats.verdicts``)."""

from __future__ import annotations

import pandas as pd

from srlib.stats.verdicts import difference, direction


def claim_headline(table: pd.DataFrame, role: str = "primary") -> list[str]:
    """The claim in sentences, from a ``contrasts.contrast_table``: a count of the ``role``
    contrasts by verdict — family-wise (Holm) where the table has it, else each interval's —
    then each one's pooled difference (the only part when there is one) with its interval,
    its Holm-adjusted p-value, and in how many parts (seeds) its interval says the same."""
    rows = table[table.role == role]
    if rows.empty:
        return [f"No {role} contrast was computed."]
    seeds = [p for p in dict.fromkeys(rows.part) if p != "pooled"]
    summary = rows[rows.part == "pooled"] if "pooled" in set(rows.part) else rows
    marginal = [direction(lo, hi) for lo, hi in zip(summary.low, summary.high, strict=True)]
    family = "family_verdict" in summary and summary.family_verdict.ne("").all()
    verdicts = list(summary.family_verdict) if family else marginal
    where = f"pooled over {len(seeds)} seeds" if len(seeds) > 1 else f"on {seeds[0]}"
    how = "paired 95% intervals" + (", Holm-adjusted across the family" if family else "")
    b, w = verdicts.count("better"), verdicts.count("worse")
    out = [
        f"Of {len(summary)} {role} contrasts ({where}, {how}), the first rule of the pair is"
        f" better in {b}, worse in {w}, and there is no evidence of a difference in"
        f" {len(verdicts) - b - w}."
    ]
    for row, verdict, alone in zip(summary.itertuples(), verdicts, marginal, strict=True):
        same = rows[(rows.contrast == row.contrast) & (rows.part != "pooled")]
        held = sum(direction(lo, hi) == alone for lo, hi in zip(same.low, same.high, strict=True))
        text = difference(row.a, row.b, row.difference, row.low, row.high, row.metric.upper())
        if family:
            text += f" Family-wise: {verdict} (Holm-adjusted p {_p(row.p_holm)})."
        agree = f" Same interval verdict in {held} of {len(same)} seeds." if len(seeds) > 1 else ""
        out.append(text + agree)
    return out


def _p(p: float) -> str:
    """A bootstrap p-value as text: none of the resamples across zero is not a p of 0."""
    return f"= {p:.2g}" if p > 0 else "≈ 0 (no resampled difference crossed zero)"
