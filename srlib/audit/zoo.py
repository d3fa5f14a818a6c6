"""The audit chapter's plan, decided here rather than in the notebook: which models are
audited (given ones, or the testbed's zoo), which model is the null (the given reference,
else the zoo's clean base), and whether the testbed's own variants can be reused (only when
the audit reads exactly the testbed's samples, so the score cache already holds them)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from srlib.audit.run import Audit, audit
from srlib.testbed.testbed import Testbed
from srlib.testbed.zoo import testbed_variants, zoo


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
        clean = audited.pop("clean base")
        if not reference:
            null_model, null_label = clean, "clean base"
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
) -> Audit:
    """``audit`` with ``audit_plan``'s arguments and the testbed's settings and score cache,
    into a keyed folder under ``out_dir`` (a changed input gets its own)."""
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
        batch_size=c.score_batch,
        progress=progress,
        keyed=True,
        **plan,
    )
