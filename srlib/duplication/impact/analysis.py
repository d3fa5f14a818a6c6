"""The impact study's inference in one call, shared by the chapter and ``srlib dedup
evaluate``: every table the verdicts read, from one repository-and-file bootstrap, with the
Holm family made of exactly those tests, and the verdict sentences."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from srlib.duplication.impact import published, verdicts
from srlib.duplication.impact.drops import (
    Pooled,
    against_reference,
    duplicate_gain,
    family,
    fold_predictions,
    interval_widths,
    mcc_table,
    net_differences,
    step_table,
)
from srlib.duplication.impact.scenarios import SCENARIOS
from srlib.duplication.impact.study import Prepared
from srlib.stats.resample import LEVELS, ClusterBootstrap
from srlib.store import frame_row


@dataclass
class Analysis:
    """The tables of one study run: MCC per model and scenario, the steps (study's drop,
    composition, net drop), the memorisation test (each model's gain on the duplicated
    candidates from training with their own files), each model against the shape rule,
    Random Forest's net drop against the others', and how wide each resampling level makes
    one interval."""

    mcc: pd.DataFrame
    steps: pd.DataFrame
    gain: pd.DataFrame
    beside_rule: pd.DataFrame
    rf_net: pd.DataFrame
    widths: pd.DataFrame
    family_size: int

    def tables(self) -> dict[str, pd.DataFrame]:
        """Every table by the name it is written and published under."""
        return {
            "mcc": self.mcc,
            "steps": self.steps,
            "duplicate-gain": self.gain,
            "against-shape-rule": self.beside_rule,
            "random-forest-net-drop": self.rf_net,
            "interval-widths": self.widths,
        }

    def digests(self, results: pd.DataFrame, curve: pd.DataFrame | None = None) -> list[dict]:
        """Digest rows of the study's numbers (``book.digests.publish``): the per-fold
        results, every table and the learning curve, so two builds compare them too."""
        rows = [frame_row("duplication", "fold results", results)]
        rows += [frame_row("duplication", name, t) for name, t in self.tables().items()]
        return rows + (
            [frame_row("duplication", "learning curve", curve)] if curve is not None else []
        )

    def write(self, out: str | Path) -> list[Path]:
        """Every table as CSV in ``out``; the paths written."""
        paths = []
        for name, table in self.tables().items():
            paths.append(Path(out) / f"{name}.csv")
            table.to_csv(paths[-1])
        return paths

    def sentences(self) -> dict[str, list[str]]:
        """Every verdict the chapter states, by topic."""
        paper = published.paper_reference()
        return {
            "memorisation": verdicts.memorisation(self.steps, self.gain),
            "ordering": verdicts.ordering(self.steps),
            "grouped splits": verdicts.inflation(self.steps),
            "against the study": verdicts.against_study(self.steps, paper),
            "largest drop": [verdicts.largest_drop(self.rf_net)],
            "against the shape rule": verdicts.against_references(self.beside_rule),
            "in sum": [verdicts.closing(self.steps, self.gain, self.family_size)],
        }


def analyse(
    prepared: Prepared,
    run_dir: str | Path,
    n_boot: int = 1000,
    seed: int = 0,
    level: str = "repository",
) -> Analysis:
    """The tables of the run in ``run_dir`` (``study.run_study``'s folder) on ``prepared``'s
    candidates, intervals resampling at ``level`` (``stats.resample.LEVELS``)."""
    predictions = fold_predictions(run_dir)
    labels = prepared.data.labels

    def pooled_at(at: str) -> Pooled:
        boot = ClusterBootstrap(prepared.repos, prepared.files, at, n_boot, seed)
        return Pooled(predictions, labels, boot)

    pooled = pooled_at(level)
    steps = step_table(pooled)
    gain = duplicate_gain(pooled)
    beside_rule = against_reference(pooled)
    rf_net = (
        net_differences(pooled, "Random Forest")
        if pooled.has("Random Forest", "mixed", "unique")
        else pd.DataFrame({"low": [], "high": [], "p": []})
    )
    size = family(steps, gain, beside_rule, rf_net)
    widths = pd.DataFrame()
    if "shape rule" in pooled.models:  # the other levels' bootstraps only where they are read
        scenario = "mixed" if "mixed" in pooled.tested else next(iter(pooled.tested))
        levels = {at: pooled if at == level else pooled_at(at) for at in LEVELS}
        widths = interval_widths(levels, "shape rule", scenario)
    return Analysis(mcc_table(pooled), steps, gain, beside_rule, rf_net, widths, size)


NET = ("mixed → unique", "mixed → repository")
"""The net drops the first table sets beside the MCCs."""


def first_table(analysis: Analysis) -> pd.DataFrame:
    """The chapter's first table: MCC [interval] per model (references first) and scenario,
    and the net drops Mixed → Unique and Mixed → Repository [interval]."""
    table = verdicts.mcc_wide(analysis.mcc, SCENARIOS)
    for step in NET:
        cells = {}
        for (model, name), r in analysis.steps.iterrows():
            if name == step:
                low, high = r["net drop low"], r["net drop high"]
                cells[model] = f"{r['net drop']:+.2f} [{low:+.2f}, {high:+.2f}]"
        if cells:
            table[f"net drop {step}"] = pd.Series(cells)
    return table
