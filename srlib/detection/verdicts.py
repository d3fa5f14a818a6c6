"""The claim in sentences, from a ``contrasts.contrast_table``: per family (``declared.QUESTIONS``)
the question it answers and its family-wise verdicts (better, worse, equivalent within the
margin, or inconclusive) naming the contrasts, then each contrast with its pooled interval,
the seeds' own differences, the arms' flag rates on the leaked model (held-out and leaked
halves) and the null controls, and the design's power; which pools are confirmatory; and the
paper's gains, tested at this book's points (the wording of single intervals is
``stats.verdicts``; the answer box, decided findings first, ``answer``)."""

from __future__ import annotations

import math

import pandas as pd

from srlib.detection.declared import CHOSEN_ON, CONFIRMATORY_ROLES, PAPER_GAIN, QUESTIONS
from srlib.stats.significance import NO_VERDICT, holm
from srlib.stats.verdicts import direction

POOLED = "pooled"
WITHOUT_TUNING = "pooled, without the tuning seed"
CONFIRMATORY = "pooled, confirmatory seeds"
POOLS = (POOLED, WITHOUT_TUNING, CONFIRMATORY)
VERDICTS = ("better", "worse", "equivalent", "inconclusive")


def pooled_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows of a contrast table a summary reads: the pool over every seed, or the one
    part there is (never a sub-pool)."""
    return rows[rows.part == POOLED] if POOLED in set(rows.part) else rows


def seed_numbers(rows: pd.DataFrame) -> list[int]:
    """The replicate seeds whose parts the table holds, by number."""
    return [int(s.split()[-1]) for s in _seeds(rows) if s.split()[-1].isdigit()]


def _seeds(rows: pd.DataFrame) -> list[str]:
    """The table's parts that are seeds (not pools, whatever a pool is named)."""
    if "seeds" in rows and rows.seeds.notna().all():
        return list(dict.fromkeys(rows.part[rows.seeds == 1]))
    return [p for p in dict.fromkeys(rows.part) if p not in POOLS]


def family_answer(table: pd.DataFrame, role: str) -> str:
    """One family in a sentence: its question, then which contrasts got which family-wise
    verdict, by name, with the pooled difference."""
    rows = pooled_rows(table[table.role == role])
    if rows.empty:
        return f"No {role} contrast was computed."
    k = int(rows.seeds.iloc[0]) if "seeds" in rows and rows.seeds.notna().all() else 0
    k = k or len(_seeds(table[table.role == role]))
    where = f"pooled over {k} seeds" if k > 1 else f"on {rows.part.iloc[0]}"
    metric, count = str(rows.metric.iloc[0]).upper(), len(rows)
    undecided = rows[rows.difference.isna()]
    rows = rows[rows.difference.notna()]
    rules = [
        f"{why}, so no comparison of "
        + ", ".join(f"{short(r.a)} − {short(r.b)}" for r in g.itertuples())
        for why, g in (undecided.groupby("family_verdict", sort=False) if len(undecided) else [])
    ]
    rules += _by_rule(
        rows, lambda r: f"{short(r.b)} ({r.difference:+.3f} [{r.low:+.3f}, {r.high:+.3f}])"
    )
    question = QUESTIONS.get(role, role)
    margin = rows.margin.iloc[0] if "margin" in rows and len(rows) else math.nan
    within = "" if _nan(float(margin)) else f"; equivalent: within ±{margin:g}"
    return (
        f"{role.capitalize()} — {question} ({where}, {count} contrasts, Holm, "
        f"{metric}{within}): " + ". ".join(rules) + "."
    )


def _by_rule(rows: pd.DataFrame, name) -> list[str]:
    """Per rule, a sentence naming (``name(row)``) the baselines of each verdict, verdicts in
    ``VERDICTS`` order: "SR gray is better than PPL; is inconclusive against Zlib"."""
    rows = rows.assign(said=_verdicts(rows), rule=rows.a.map(short))
    out = []
    for rule, g in rows.groupby("rule", sort=False):
        said = [
            f"{_phrase(v)} " + ", ".join(name(r) for r in g.itertuples() if r.said == v)
            for v in dict.fromkeys([*VERDICTS, *g.said])
            if (g.said == v).any()
        ]
        out.append(f"{rule} " + "; ".join(said))
    return out


def _phrase(verdict: str) -> str:
    """A verdict as the words between a rule and the baselines it names."""
    said = {"better": "is better than", "worse": "is worse than", "equivalent": "is equivalent to"}
    said["no evidence"] = "shows no evidence of a difference from"
    said[NO_VERDICT] = "has no verdict (no spread to test) against"
    return said.get(verdict, f"is {verdict} against")


def short(label: str) -> str:
    """An arm's detector, without its operating point."""
    return label.split(" (")[0]


def _verdicts(rows: pd.DataFrame) -> list[str]:
    """Each row's family-wise verdict where it has one, else its interval's own."""
    family = rows.family_verdict if "family_verdict" in rows else pd.Series("", rows.index)
    return [
        v if isinstance(v, str) and v else direction(lo, hi)
        for v, lo, hi in zip(family, rows.low, rows.high, strict=True)
    ]


def claim_headline(table: pd.DataFrame, role: str | None = None) -> list[str]:
    """The claim in sentences: for each family (or the one ``role``), its answer
    (``family_answer``) and a sentence per contrast; then which pools confirm; then the
    paper's gains at this book's matched points."""
    roles = [role] if role else [r for r in QUESTIONS if r in set(table.get("role", ()))]
    if not roles or table[table.role.isin(roles)].empty:
        return [f"No {role or 'declared'} contrast was computed."]
    out = []
    for r in roles:
        rows = table[table.role == r]
        out.append(family_answer(table, r))
        seeds = _seeds(rows)
        summary = pooled_rows(rows)
        for row, verdict in zip(summary.itertuples(), _verdicts(summary), strict=True):
            if _nan(row.difference):  # said in the family's answer
                continue
            out.append(_row(row, verdict, rows[rows.contrast == row.contrast], seeds, table))
        out += _pools(rows, seeds)
    if role is None:
        out += rests_on(table)
        out += paper_sentences(table)
    return out


def rests_on(table: pd.DataFrame) -> list[str]:
    """What each decided confirmatory verdict rests on, beside it: its family's Holm p; the p
    Holm would give it over every tested confirmatory contrast at once (``NO_VERDICT`` rows
    have no p; the families are two questions, each of its own, but a reader may count them as
    one claim); and, pooled over K
    seeds, that the t test leans on the seeds' differences being normal — the exact sign-flip
    test, which does not, cannot go below 2^(1 − K) over K seeds two-sided (a difference), nor
    2^(−K) one-sided (each of equivalence's two tests)."""
    rows = pooled_rows(table[table.role.isin(CONFIRMATORY_ROLES)])
    needed = {"p", "p_holm", "p_equivalent", "p_equivalent_holm", "family_verdict"}
    if rows.empty or not needed <= set(rows):
        return []
    rows = rows[rows.p.notna()]
    equivalent = rows.family_verdict == "equivalent"
    p = rows.p.where(~equivalent, rows.p_equivalent)
    together = pd.Series(holm(p.to_numpy()), index=rows.index)
    out = []
    for i, r in rows.iterrows():
        if r.family_verdict not in ("better", "worse", "equivalent"):
            continue
        own = r.p_equivalent_holm if r.family_verdict == "equivalent" else r.p_holm
        k = int(r.seeds) if "seeds" in rows and r.seeds == r.seeds else 1
        text = (
            f"{r.contrast} is {r.family_verdict} with Holm p {_p(own)} in its family of"
            f" {int((rows.role == r.role).sum())}; over all {len(rows)} confirmatory contrasts"
            f" Holm would give p {_p(together[i])}"
        )
        if k > 1:
            floor = 2.0**-k if r.family_verdict == "equivalent" else 2.0 ** (1 - k)
            text += (
                f"; pooled over {k} seeds by a t test that takes their differences as normal"
                f" (no sign-flip test over {k} seeds goes below {floor:.3g})"
            )
        out.append(text + ".")
    return out


def _pools(rows: pd.DataFrame, seeds: list[str]) -> list[str]:
    """The sub-pools' counts, and whether any pool is confirmatory."""
    out = []
    for name, what in (
        (WITHOUT_TUNING, "Without the seed the settings were tuned on"),
        (CONFIRMATORY, "Confirmatory, on the seeds no family was chosen on"),
    ):
        kept = rows[rows.part == name]
        if len(kept) and kept.family_verdict.ne("").all():
            n = int(kept.seeds.iloc[0]) if "seeds" in kept else len(_seeds(rows)) - 1
            none = (kept.family_verdict == NO_VERDICT).any()
            said = [*VERDICTS, NO_VERDICT] if none else list(VERDICTS)
            counts = ", ".join(f"{v} {(kept.family_verdict == v).sum()}" for v in said)
            out.append(f"{what} ({n} seeds, t on {n - 1} degree(s) of freedom: wide): {counts}.")
    numbers = seed_numbers(rows)
    if len(seeds) > 1 and numbers and all(n not in CHOSEN_ON for n in numbers):
        out.append(
            "Every seed here is confirmatory: no family was chosen on any of them (they score the"
            " same problems, whose share of the variance informed the choice too)."
        )
    elif len(seeds) > 1 and not (rows.part == CONFIRMATORY).any():
        chosen = ", ".join(map(str, CHOSEN_ON))
        out.append(
            f"Exploratory: the families were chosen after results on seeds {chosen} had been"
            " read; seeds outside them (`settings: {replicates: [...]}`) confirm them."
        )
    return out


def _row(row, verdict: str, same: pd.DataFrame, seeds: list[str], table: pd.DataFrame) -> str:
    """One contrast's sentence, its family-wise verdict first, then its interval, the seeds'
    own differences, the flag rates and the design's power."""
    interval = f"{row.difference:+.3f} [{row.low:+.3f}, {row.high:+.3f}] {row.metric.upper()}"
    if not _nan(getattr(row, "p_holm", float("nan"))):
        text = (
            f"{row.a} − {row.b}: {verdict} family-wise (Holm p {_p(row.p_holm)}; equivalence"
            f" p {_p(row.p_equivalent_holm)}); {interval}"
        )
    else:
        text = f"{row.a} − {row.b}: {interval}, {verdict}"
    auc = table[(table.part == row.part) & (table.contrast == _auc_name(row))]
    if row.role == "discrimination" and row.metric != "auc" and len(auc):
        a = auc.iloc[0]
        text += f"; AUC {a.difference:+.3f} [{a.low:+.3f}, {a.high:+.3f}]"
    each = same[same.part.isin(seeds)]
    if len(each) > 1:
        values = ", ".join(f"{d:+.3f}" for d in each.difference)
        text += f"; the seeds' own differences {values} (SD {row.seed_sd:.3f})"
    text += _rates(row)
    if not _nan(getattr(row, "detectable", float("nan"))):
        text += f"; the design detects {row.detectable:.3f} with 80% power"
        needed = getattr(row, "seeds_needed", float("nan"))
        if not _nan(needed) and row.detectable > row.margin:
            text += f" ({_count(needed)} would detect ±{row.margin:g}"
            text += f", {_count(row.seeds_needed_equivalence)} show equivalence within it)"
    return text + "."


def _auc_name(row) -> str:
    """The AUC contrast beside a discrimination row."""
    return f"{row.contrast.split(' (')[0]} (AUC)"


def _rates(row) -> str:
    """Both arms' flag rates on the leaked model's held-out and leaked halves and on the null
    controls, where the table has them."""
    out = ""
    for what, label in (
        ("held_out", "held-out"),
        ("leaked", "leaked-half"),
        ("null", "null-control"),
    ):
        a, b = getattr(row, f"a_{what}_rate", math.nan), getattr(row, f"b_{what}_rate", math.nan)
        if not (_nan(a) or _nan(b)):
            out += f"; {label} flag rates {a:.1%} and {b:.1%}"
    return out  # fmt: skip


def _count(seeds: float) -> str:
    """A number of seeds, or what infinity means here."""
    return "no number of seeds" if math.isinf(seeds) else f"{int(seeds)} seeds"


def paper_sentences(table: pd.DataFrame) -> list[str]:
    """Per rule, the paper's reported gain (F1 over the mean of the baselines) tested at each
    of this book's matched points: one-sided both ways, read as ``contrasts.PAPER_VERDICTS``
    says, with the interval — every difference in F1 points, as the paper's."""
    rows = pooled_rows(table[table.role == "paper"])
    out = []
    for rule, g in rows.groupby("a", sort=False):
        said = []
        for r in g.itertuples():
            said.append(
                f"at the {paper_point(r)} point {r.difference * 100:+.1f} [{r.low * 100:+.1f}, "
                f"{r.high * 100:+.1f}] points: {_paper_verdict(r)}"
            )
        gain = PAPER_GAIN.get(rule, g.paper_gain.iloc[0])
        out.append(
            f"The paper reports {rule} {gain * 100:+.2f} F1 points over the mean of its"
            f" baselines; here, {'; '.join(said)}."
        )
    return out


def _paper_verdict(r) -> str:
    """One paper row's verdict in words, with its one-sided Holm p-values."""
    gain = f"{r.paper_gain * 100:+.2f}"
    verdict = getattr(r, "family_verdict", "")
    if verdict == "smaller but positive":
        return (
            f"smaller but positive (below the paper's {gain}, one-sided Holm p {_p(r.p_holm)};"
            f" above zero, p {_p(r.p_above_zero_holm)})"
        )
    if verdict == "not reproduced here":
        return f"not reproduced here (below the paper's {gain}, one-sided Holm p {_p(r.p_holm)})"
    if verdict == "reproduced":
        return (
            f"reproduced (above zero, one-sided Holm p {_p(r.p_above_zero_holm)}, and not shown"
            f" below the paper's {gain})"
        )
    if verdict == NO_VERDICT:
        return f"{NO_VERDICT} (every resample gave the same difference: nothing to test)"
    return f"inconclusive (neither shown below the paper's {gain} nor above zero)"


def paper_point(row) -> str:
    """The point a paper row is tested at, as its name says it ("held-out" for the one
    matched on the leaked model's held-out half, "transport" for the null-matched one)."""
    return row.contrast.rsplit(", ", 1)[-1].rstrip(")")


def _nan(x) -> bool:
    """None or NaN."""
    return x is None or (isinstance(x, float) and math.isnan(x))


def _p(p: float) -> str:
    """A p-value as text."""
    if _nan(p):
        return "n/a"
    if p == 0:
        return "≈ 0 (no resample crossed the bound)"
    return f"= {p:.2g}" if p >= 0.001 else "< 0.001"
