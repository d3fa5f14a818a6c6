"""An audit's summary: per model, benchmark and decision, the flag rate against its
empirical null, the benchmark-level tests, and what each plug-in left undecided."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
from sklearn.metrics import cohen_kappa_score

from srlib.detection.plugins import flag_column, rules
from srlib.detection.pooled import contrasts, control_test, pooled_test
from srlib.stats.rates import flag_rate

CONTROL = "control"

DECISIONS = {"gray": "sr_gray", "black": "sr_black", "gray contrasted": "sr_gray_contrasted"}


def decisions_of(found) -> dict[str, str]:
    """``DECISIONS`` and each plug-in rule's name → its flag column (``plugin_contrasts.flags``)."""
    return DECISIONS | {d.name: flag_column(d) for d in rules(found)}


def without_chance(found) -> frozenset[str]:
    """The plug-in rules whose flags are not a rank among variants: no chance level."""
    return frozenset(p.entry.name for p in found if p.kind == "rule")


def failure_table(parts: list[pd.DataFrame], jobs: list) -> pd.DataFrame:
    """Every call a plug-in could not score, by model, benchmark, detector and reason (each
    plug-in, whether or not it has a decision of its own in the summary)."""
    rows = [
        {"model": m.label, "benchmark": name, "detector": detector, "reason": why, "calls": k}
        for part, (m, name) in zip(parts, jobs, strict=True)
        for detector, counts in part.attrs.get("plugin failures", {}).items()
        for why, k in counts.items()
    ]
    return pd.DataFrame(rows, columns=["model", "benchmark", "detector", "reason", "calls"])


def undecided(parts: list[pd.DataFrame], jobs: list, found) -> dict[tuple, str]:
    """(model, benchmark, plug-in decision) → the calls its plug-in could not score there,
    counted by reason ("12 raised ValueError, 3 returned NaN"); absent where it
    scored every call."""
    owner = {d.name: p.entry.name for p in found for d in (p.rule, p.entry) if d is not None}
    out = {}
    for part, (m, name) in zip(parts, jobs, strict=True):
        failed = part.attrs.get("plugin failures", {})
        for d in rules(found):
            counts = failed.get(owner[d.name], {})
            if counts:
                out[m.label, name, d.name] = ", ".join(f"{k} {why}" for why, k in counts.items())
    return out


def summarise(
    table: pd.DataFrame,
    reference: str | None = None,
    decisions: Mapping[str, str] = DECISIONS,
    undecided: Mapping[tuple, str] | None = None,
    no_chance: frozenset[str] = frozenset(),
) -> pd.DataFrame:
    """One row per model × benchmark × decision: flag rate, chance, the empirical null (the
    reference's rate on the same samples, with McNemar's test and the paired interval, else
    the model's own on control samples, with Fisher's test and the unpaired interval), the
    pooled benchmark-level test, and gray/black agreement. A plug-in's decision is never left
    out: ``undecided`` ((model, benchmark, decision) → the calls it could not score, by
    reason) fills its ``why undecided`` column, and one that decided nothing keeps its row,
    with no rate. A rule of ``no_chance`` (a plug-in's own rule, not a rank of the original
    among its variants) has no chance level 1/(n + 1): its null is the reference's or the
    control samples' rate alone."""
    rows = []
    undecided = undecided or {}
    bench = table[table.set == "benchmark"]
    for (model, name), g in bench.groupby(["model", "benchmark"], sort=False):
        ctrl = table[(table.set == CONTROL) & (table.model == model)]
        for decision, column in decisions.items():
            said = undecided.get((model, name, decision), "")
            if column not in g or g[column].isna().all():
                if decision not in DECISIONS:  # a plug-in's: reported, never dropped
                    rows.append({"model": model, "benchmark": name, "decision": decision,
                                 "null": "none", "flagged": 0, "samples": len(g), "decided": 0,
                                 "undecided": len(g), "rate": np.nan,
                                 "why undecided": said or "no score kept"})  # fmt: skip
                continue
            null, source, paired = None, "none", False
            if reference and model != reference and decision != "gray contrasted":
                ref = bench[(bench.model == reference) & (bench.benchmark == name)]
                null = list(ref.set_index("id")[column].reindex(g.id))  # the same samples
                source, paired = f"reference {reference}", True
            elif not ctrl.empty and column in ctrl and ctrl[column].notna().any():
                null, source = ctrl[column], "control samples"
            fr = flag_rate(list(g[column]), g.n_variants.to_numpy(), null, paired)
            if decision in no_chance:
                fr |= {"chance": np.nan, "p_vs_chance": np.nan}
            row = {"model": model, "benchmark": name, "decision": decision, "null": source}
            why = {"why undecided": said} if decision not in DECISIONS else {}
            rows.append(row | fr | why | _pooled(bench, g, ctrl, decision, reference))
        both = (
            g[g.sr_gray.notna() & g.sr_black.notna()] if {"sr_gray", "sr_black"} <= set(g) else []
        )
        if len(both):
            gray, black = both.sr_gray.astype(bool), both.sr_black.astype(bool)
            for row in rows:
                if row["model"] == model and row["benchmark"] == name:
                    row["gray/black agreement"] = float((gray == black).mean())
                    row["gray/black kappa"] = float(cohen_kappa_score(gray, black))
    return pd.DataFrame(rows)


def _pooled(bench, g, ctrl, decision, reference) -> dict:
    """The benchmark-level tests of the gray-box preference for originals: against the
    reference (Wilcoxon, paired by sample) and against control samples (Mann-Whitney)."""
    if decision != "gray" or "gray_scores" not in g:
        return {}
    out = {}
    target = list(g.gray_scores)
    model, name = g.model.iloc[0], g.benchmark.iloc[0]
    if reference and model != reference:
        ref_rows = bench[(bench.model == reference) & (bench.benchmark == name)]
        ref = ref_rows.set_index("id").gray_scores.reindex(g.id)
        test = pooled_test(target, list(ref), method="wilcoxon")
        out.update(pooled_p=test.p_value, pooled_effect=test.effect)
    if not ctrl.empty and "gray_scores" in ctrl:
        d = contrasts(target)
        c = contrasts(list(ctrl.gray_scores))
        test = control_test(d[np.isfinite(d)], c[np.isfinite(c)])
        out.update(control_p=test.p_value, control_effect=test.effect)
    return out
