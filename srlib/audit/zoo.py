"""The audit chapter's plan, decided here rather than in the notebook: which models are
audited (given ones, or the testbed's zoo), which model is the null (the given reference,
else the zoo's null control, trained like the planted models without any benchmark), and
whether the testbed's own variants can be reused (only when the audit reads exactly the
testbed's samples, so the score cache already holds them); and the audit of the zoo read per
half of each benchmark (the testbed's leaked and held-out halves)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from srlib.audit.run import Audit, audit, summarise
from srlib.stats.rates import flag_rate
from srlib.stats.verdicts import direction
from srlib.testbed.testbed import Testbed
from srlib.testbed.zoo import HALF, planted_on, testbed_variants, zoo


def audit_plan(
    tb: Testbed,
    models: Mapping[str, str] | None,
    benchmarks: Sequence[str],
    reference: str | None = None,
    limit: int | None = None,
) -> dict:
    """The audit's arguments: ``models`` (label → spec) or, when none are given, the zoo;
    the null model and its label; samples per benchmark (the testbed's ``limit`` unless
    given); and the testbed's variants where the samples are the testbed's own."""
    audited, null_model, null_label = dict(models or {}), reference, None
    if not audited:
        audited = {label: str(path) for label, path in zoo(tb, progress=False).items()}
        matched = audited.pop("null control")
        if not reference:
            null_model, null_label = matched, "null control"
    each = tb.config.limit if limit is None else limit
    same = set(benchmarks) <= set(tb.config.benchmarks) and each == tb.config.limit
    return {
        "models": audited,
        "reference": null_model,
        "reference_label": null_label,
        "limit": each,
        "variants": testbed_variants(tb, list(benchmarks)) if same else None,
    }


def audit_testbed(
    tb: Testbed,
    out_dir: str | Path,
    models: Mapping[str, str] | None = None,
    benchmarks: Sequence[str] = ("humaneval", "mbpp:test"),
    reference: str | None = None,
    setting: str = "gray",
    control: str | None = None,
    limit: int | None = None,
    progress: bool = False,
    detectors: Sequence = (),
) -> Audit:
    """``audit`` with ``audit_plan``'s arguments (and a researcher's ``detectors``) and the
    testbed's settings and score cache,
    into a keyed folder under ``out_dir`` (a changed input gets its own). Its models are
    opened as the testbed opens them (device, dtype, threads, both batch sizes), so the scores
    the testbed computed are read from the cache, not computed again, and the same holds the
    other way."""
    plan = audit_plan(tb, models, benchmarks, reference, limit)
    c = tb.config
    return audit(
        plan.pop("models"),
        list(benchmarks),
        out_dir,
        n=c.n,
        setting=setting,
        control=control,
        cache=tb.cache_dir / "scores.sqlite",
        max_new_tokens=c.max_new_tokens,
        device=c.device,
        dtype=c.dtype,
        batch_size=c.score_batch,
        generate_batch=c.generate_batch,
        threads=c.threads,
        progress=progress,
        keyed=True,
        detectors=detectors,
        **plan,
    )


def halves(result: Audit, split: pd.DataFrame) -> pd.DataFrame:
    """The audit's summary with each benchmark cut into the testbed's leaked and held-out
    halves (``split``: id, leaked), as ``<benchmark> · leaked half`` / ``· held-out half``
    (``· not in the testbed`` for other samples): each half's flag rate against the null's on
    the same samples, paired, as ``summarise`` computes it for whole benchmarks."""
    leaked = result.samples.id.map(split.set_index("id").leaked)
    half = leaked.map({True: "leaked half", False: "held-out half"}).fillna("not in the testbed")
    table = result.samples.assign(benchmark=result.samples.benchmark + HALF + half)
    return summarise(table, result.spec.ref_label)


def memorisation(result: Audit, split: pd.DataFrame, decision: str = "sr_gray") -> pd.DataFrame:
    """Per planted zoo model (``<benchmark> ×<k>``): its flag rate on the leaked half of its
    benchmark against its rate on the held-out half — both halves drawn at random from one
    benchmark, so the benchmark's style is the same in both, and only memorisation makes the
    leaked half more often flagged — with Newcombe's interval for independent proportions,
    Fisher's one-sided test and the verdict sentence."""
    leaked = split.set_index("id").leaked
    rows = []
    table = result.samples[result.samples.set == "benchmark"]
    for model, g in table.groupby("model", sort=False):
        g = g[g.benchmark.str.split(":").str[0] == planted_on(model)]
        if g.empty:  # not a planted model, or not audited on its benchmark
            continue
        half = g.id.map(leaked)
        own, held = g[half.eq(True)], g[half.eq(False)]
        fr = flag_rate(list(own[decision]), own.n_variants.to_numpy(), list(held[decision]))
        rows.append(
            {
                "model": model,
                "benchmark": g.benchmark.iloc[0],
                "leaked half": fr["rate"],
                "held-out half": fr["null_rate"],
                "difference": fr["excess"],
                "low": fr["excess_low"],
                "high": fr["excess_high"],
                "p (Fisher)": fr["p_vs_null"],
                "verdict": _halves_verdict(
                    model, fr["excess"], fr["excess_low"], fr["excess_high"]
                ),
            }
        )
    return pd.DataFrame(rows)


def _halves_verdict(model: str, value: float, low: float, high: float) -> str:
    """What the leaked-minus-held-out difference of one planted model says, by its interval."""
    said = {
        "better": "it flags its leaked half more often: memorisation beyond the benchmark's style",
        "worse": "it flags its held-out half more often",
        "no evidence": "no evidence that it flags its leaked half more often",
    }[direction(low, high)]
    return (
        f"{model}: leaked − held-out half = {value:+.0%} of samples flagged "
        f"(95% interval [{low:+.0%}, {high:+.0%}]): {said}."
    )
