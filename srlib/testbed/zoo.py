"""The audit's model zoo, built from a testbed: the clean base model, the null control (the
same continued pre-training without any benchmark), and per benchmark and exposure count a
model continued-pre-trained on the same general text plus *every* sample of that benchmark
only, each seen that many times. Leakage is planted where the names say and nowhere else,
so an audit of the zoo has a known answer."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pandas as pd

from srlib.testbed.build import NULL, cpt_mixture, leak_settings
from srlib.testbed.testbed import Testbed


def zoo(
    tb: Testbed, exposures: tuple[int, ...] | None = None, progress: bool = True
) -> dict[str, Path]:
    """Model label → checkpoint folder: ``clean base``, ``null control`` and ``<benchmark>
    ×<k>`` for each benchmark of the testbed and each k of ``exposures`` (default the
    config's ``zoo_exposures``); trained once, cached beside the testbed's runs."""
    exposures = exposures or tb.config.zoo_exposures
    models = {"clean base": tb.base, "null control": tb.runs[NULL].checkpoints[-1]}
    general = cpt_mixture(tb.config, tb.corpus, tb.config.code_to_text).texts
    settings = dataclasses.replace(leak_settings(tb.config), epochs=1)
    for benchmark in dict.fromkeys(s.benchmark for s in tb.samples):
        texts = {s.id: s.text for s in tb.samples if s.benchmark == benchmark}
        for k in exposures:
            copies = dict.fromkeys(texts, k)
            run = tb.train_run(f"zoo-{benchmark}x{k}", general, texts, settings, copies, progress)
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
    """An audit summary of the zoo beside its known answer: per model and benchmark whether
    leakage was planted there, the flag rate, the null's, the excess with its interval, and
    whether the audit found it (the interval clears zero) — found where planted, not found
    elsewhere, is the audit working."""
    s = summary[summary.decision == decision].copy()
    leaked_on = s.model.str.extract(r"^(.+) ×\d+$")[0]
    s["planted"] = leaked_on.notna() & (leaked_on == s.benchmark.str.split(":").str[0])
    s["found"] = s.excess_low > 0
    columns = ["model", "benchmark", "planted", "rate", "null_rate", "excess", "excess_low"]
    columns += ["excess_high", "p_vs_null", "found"]
    return s[columns].reset_index(drop=True)
