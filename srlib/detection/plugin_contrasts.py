"""What the comparison and the audit read of a researcher's detectors (``plugins``): their
family of contrasts, declared from their kinds before any score is read, and their rules'
per-sample flags. Apart from ``plugins`` so that the code that scores (``detect``, whose
source keys every score table) does not import the code that compares."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from srlib.detection.arms import Arm, Contrast
from srlib.detection.compare import decide
from srlib.detection.plugins import Plugin, flag_column, rules

GRAY_BASELINES = ("PPL", "Min-K%", "Min-K%++", "Zlib")
BLACK_BASELINES = ("NGO", "n-gram acc")


def contrasts(found: Sequence[Plugin]) -> list[Contrast]:
    """Each plug-in against SrDetection and every threshold baseline of its setting, in MCC,
    declared before any score is read: one family of its own (role ``"plug-in"``, Holm
    across it), the user's detector first, every pair at one operating point — the
    threshold-transport family's: a threshold flags as many of the null controls' evaluated
    problems as the rule it is matched to (``operating``, cross-fitted).
    A score ``X``: at SR's null-control flag rate against SR and against each baseline at
    that same rate; its rule ``SR X``, and a rule plug-in ``R``, as they decide against each
    baseline matched to their null-control rate, and against SR with both margins calibrated
    to the table's ``fpr`` (two threshold-free rules decide at their own rates; this holds
    them to one)."""
    out = []
    for p in found:
        sr, baselines = ("SR black", BLACK_BASELINES) if p.entry.setting == "black" else (
            "SR gray", GRAY_BASELINES)  # fmt: skip
        rules = [p.rule.name] if p.rule else []
        if p.kind == "rule":
            rules = [p.entry.name]
        else:
            x = p.entry.name
            at_sr = Arm((x,), "null", matched_to=sr)
            out.append(Contrast(f"{x} − {sr}", at_sr, Arm((sr,)), "plug-in"))
            out += [
                Contrast(f"{x} − {b}", at_sr, Arm((b,), "null", matched_to=sr), "plug-in")
                for b in baselines
            ]
            if p.rule:
                mine = Arm((x,), "null", matched_to=p.rule.name)
                out.append(Contrast(f"{p.rule.name} − {x}", Arm((p.rule.name,)), mine, "plug-in"))
        for r in rules:
            both = (Arm((r,), "calibrated"), Arm((sr,), "calibrated"))
            out.append(Contrast(f"{r} − {sr} (both calibrated)", *both, "plug-in"))
            out += [
                Contrast(f"{r} − {b}", Arm((r,)), Arm((b,), "null", matched_to=r), "plug-in")
                for b in baselines
            ]
    return out


def flags(table: pd.DataFrame, found: Sequence[Plugin]) -> dict[str, pd.Series]:
    """Each plug-in rule's per-sample flag on a ``detect`` table (``flag_column``;
    undecided: ``<NA>``), read as the comparison reads it (``compare.decide``)."""
    out = {}
    for d in rules(found):
        if d.score in table:
            each = [decide(d, row, {})[0] for row in table.itertuples()]
            out[flag_column(d)] = pd.array(each, dtype="boolean")
    return out
