"""The audit's model zoo, built from a testbed: the clean base model, a null control (the same
one-epoch continued pre-training as the planted models, without any benchmark text), and per
benchmark and exposure count a model continued-pre-trained on the same general text plus the
testbed's *leaked half* of that benchmark only, each sample seen that many times. Leakage is
planted where the names say and nowhere else, and each planted benchmark keeps a held-out half
the model never saw: an excess there is the benchmark's style, not memorisation."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pandas as pd

from srlib.testbed.build import cpt_mixture, leak_settings, train_run
from srlib.testbed.experiment import PLANTED, planted_on  # noqa: F401 (its public home was here)
from srlib.testbed.testbed import Testbed

HALF = " · "  # between a benchmark's name and its half in an audit of the halves


def zoo(
    tb: Testbed, exposures: tuple[int, ...] | None = None, progress: bool = True
) -> dict[str, Path]:
    """Model label → checkpoint folder: ``clean base``, ``null control`` and ``<benchmark>
    ×<k>`` for each benchmark of the testbed and each k of ``exposures`` (default the
    config's ``zoo_exposures``); trained once, cached beside the testbed's runs."""
    exposures = exposures or tb.config.zoo_exposures
    general = cpt_mixture(tb.config, tb.corpus, tb.config.code_to_text).texts
    settings = dataclasses.replace(leak_settings(tb.config), epochs=1)
    null = train_run(tb, "zoo-null", general, {}, settings, None, progress)
    models = {"clean base": tb.base, "null control": null.checkpoints[-1]}
    leaked = set(tb.split.id[tb.split.leaked])
    for benchmark in dict.fromkeys(s.benchmark for s in tb.samples):
        texts = {s.id: s.text for s in tb.samples if s.benchmark == benchmark and s.id in leaked}
        for k in exposures:
            copies = dict.fromkeys(texts, k)
            run = train_run(tb, f"zoo-{benchmark}x{k}", general, texts, settings, copies, progress)
            models[f"{benchmark} ×{k}"] = run.checkpoints[-1]
    return models


def testbed_variants(tb: Testbed, benchmarks: list[str]) -> dict[str, list]:
    """The testbed's own variants of each named benchmark (``name`` or ``name:split``), in
    sample order, for ``audit(variants=...)``: the audit then scores exactly the texts the
    testbed scored, so the score cache already holds the clean base model's scores."""
    by_name: dict[str, list] = {}
    for sample, vs in zip(tb.samples, tb.variants, strict=True):
        by_name.setdefault(sample.benchmark, []).append(vs)
    return {b: by_name[b.split(":")[0]] for b in benchmarks}


def planted(summary: pd.DataFrame, decision: str = "gray") -> pd.DataFrame:
    """An audit summary of the zoo beside its known answer: per model and benchmark (or half
    of one, as ``audit.zoo.halves`` names them) where it lies — ``leaked half`` of the planted
    benchmark (the only cells where leakage was planted), its ``held-out half``, ``other
    benchmark``, or ``nothing planted`` for the clean models — the flag rate, the null's, the
    excess with its interval, and whether the audit found it (the interval clears zero)."""
    s = summary[summary.decision == decision].copy()
    parts = s.benchmark.str.partition(HALF)
    name, half = parts[0], parts[2]
    leaked_on = s.model.map(planted_on)
    same = leaked_on.notna() & (leaked_on == name.str.split(":").str[0])
    s["where"] = "nothing planted"
    s.loc[leaked_on.notna() & ~same, "where"] = "other benchmark"
    s.loc[same, "where"] = "planted benchmark"
    s.loc[same & (half == "leaked half"), "where"] = "leaked half"
    s.loc[same & (half == "held-out half"), "where"] = "held-out half"
    s["planted"] = s["where"].isin(["leaked half", "planted benchmark"])
    s["found"] = s.excess_low > 0
    columns = ["model", "benchmark", "where", "planted", "rate", "null_rate", "excess"]
    columns += ["excess_low", "excess_high", "p_vs_null", "found"]
    return s[columns].reset_index(drop=True)
