"""``make_variants``: n distinct, semantics-preserving, execution-validated variants per sample."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from srlib.execution.progress import tqdm
from srlib.execution.sandbox import Limits, run_programs
from srlib.samples import Sample
from srlib.transforms import testcases as tc
from srlib.transforms.edits import Module, apply_edits
from srlib.transforms.rename import Analysis, analyze, rename_edits
from srlib.transforms.scopecheck import same_scopes

KINDS = ("function", "variable", "test")
#: CPU seconds each variant's validating program may use: the slowest original here
#: (``mbpp/123``) takes about 5 s of CPU, and a CPU slower than this one must not drop a
#: sample another keeps.
VALIDATION_CPU_SECONDS = 30.0
Naturalness = Callable[[list[str]], list[float]]


@dataclass
class Variant(Sample):
    """A transformed sample: behaves like a Sample and records how it was made."""

    original_id: str = ""
    index: int = 0
    kinds: tuple[str, ...] = ()
    renames: list[dict[str, str]] = field(default_factory=list)  # kind, scope, old, new
    replaced_tests: list[dict[str, str]] = field(default_factory=list)  # changed test lines

    def __post_init__(self) -> None:
        super().__post_init__()
        self.kinds = tuple(self.kinds)
        self.entry_point = renamed_entry_point(self.entry_point, self.renames)


def renamed_entry_point(entry_point: str, renames: list[dict[str, str]]) -> str:
    """The entry point's name after ``renames``: a module-level function renamed from it
    gives its new name (every transformation, the LLM rewriter included, records renames
    so; a record already carrying the new name is left as it is)."""
    for r in renames:
        if r.get("scope") == "<module>" and r.get("old") == entry_point and entry_point:
            return r["new"]
    return entry_point


class Variants(list):
    """The variants of one sample, plus why there are fewer than asked and what was dropped."""

    def __init__(self, items=(), reasons=None, dropped=None):
        super().__init__(items)
        self.reasons: list[str] = reasons or []
        self.dropped: list[dict[str, Any]] = dropped or []


@dataclass
class _Job:
    sample: Sample
    analysis: Analysis | None = None
    plan: tc.TestPlan | None = None
    result: Variants = field(default_factory=Variants)
    texts: set[str] = field(default_factory=set)
    attempt: int = 0
    avoid: frozenset[str] = frozenset()  # names no rename may choose


def make_variants(
    sample: Sample,
    n: int,
    kinds: Sequence[str] = KINDS,
    seed: int = 0,
    validate: bool = True,
    **options: Any,
) -> Variants:
    """``n`` distinct variants of ``sample`` (see ``make_variants_many`` for the options)."""
    return make_variants_many([sample], n, kinds, seed, validate, **options)[0]


def make_variants_many(
    samples: Sequence[Sample],
    n: int,
    kinds: Sequence[str] = KINDS,
    seed: int = 0,
    validate: bool = True,
    *,
    naturalness: Naturalness | None = None,
    pool: int = 4,
    rounds: int = 3,
    timeout: float = VALIDATION_CPU_SECONDS,
    workers: int | None = None,
    progress: bool = True,
    avoid: Sequence[Collection[str]] | None = None,
) -> list[Variants]:
    """Variants for many samples, with sandbox work batched and parallel across them.

    Each variant applies every kind in ``kinds`` that the sample supports. With ``validate``
    every variant's program runs in the sandbox and failures are dropped with the reason; up
    to ``rounds`` rounds generate replacements. ``naturalness`` (optional) scores texts, e.g.
    a reference model's mean log-likelihood: among ``pool`` candidates per slot it keeps those
    scored closest to the original, so that a clean model is not biased towards the original.
    ``avoid`` (one collection per sample) holds names its renames may not choose: a variant
    whose vocabulary is disjoint from other variants' (the testbed's paraphrase leak).
    """
    unknown = set(kinds) - set(KINDS)
    if unknown or not kinds:
        raise ValueError(f"kinds must be a non-empty subset of {KINDS}, got {tuple(kinds)}")
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    sandbox = {"timeout": timeout, "workers": workers, "progress": progress and "validate"}
    if avoid is not None and len(avoid) != len(samples):
        raise ValueError(f"avoid has {len(avoid)} name sets for {len(samples)} samples")
    names = avoid if avoid is not None else [()] * len(samples)
    jobs = [_Job(s, avoid=frozenset(a)) for s, a in zip(samples, names, strict=True)]
    _prepare(jobs, tuple(kinds), n * (pool if naturalness else 1) + 2, seed, validate, sandbox)
    for _ in range(rounds):
        todo = [j for j in jobs if len(j.result) < n and not j.result.reasons]
        if not todo:
            break
        batch = [
            (j, v)
            for j in todo
            for v in _generate(j, tuple(kinds), seed, n - len(j.result), naturalness, pool)
        ]
        passed = _validate([v for _, v in batch], validate, sandbox)
        for (job, variant), (ok, why) in zip(batch, passed, strict=True):
            if ok and len(job.result) < n:
                variant.index = len(job.result)
                variant.id = f"{job.sample.id}#{variant.index}"
                job.result.append(variant)
            elif not ok:
                job.result.dropped.append(
                    {"variant": variant.id, "stage": "validation", "reason": why}
                )
    for job in jobs:
        if len(job.result) < n and not job.result.reasons:
            failed = sum(d["stage"] == "validation" for d in job.result.dropped)
            job.result.reasons.append(
                f"only {len(job.result)} of {n} variants: {len(job.texts)} distinct texts "
                f"could be made, {failed} failed validation"
            )
    return [j.result for j in jobs]


def _prepare(jobs, kinds, attempts, seed, validate, sandbox) -> None:
    """Analyse renames, plan and evaluate test cases, and check each original passes."""
    renaming = {"function", "variable"} & set(kinds)
    for job in tqdm(jobs, desc="analyse", disable=not sandbox["progress"] or len(jobs) < 50):
        if renaming:
            job.analysis = analyze(job.sample)
            if job.analysis.reason:
                job.result.dropped.append(
                    {"variant": None, "stage": "rename", "reason": job.analysis.reason}
                )
        if "test" in kinds:
            job.plan = tc.plan_tests(job.sample)
            if job.plan.reason:
                job.result.dropped.append(
                    {"variant": None, "stage": "test", "reason": job.plan.reason}
                )
    planned = [j for j in jobs if j.plan and j.plan.cases]
    inputs = [tc.mutations(j.sample, j.plan, attempts, seed) for j in planned]
    programs = [
        tc.evaluation_program(j.sample, j.plan, m) for j, m in zip(planned, inputs, strict=True)
    ]
    limits = Limits(timeout=max(60.0, sandbox["timeout"]), max_output=5_000_000)
    results = run_programs(
        programs,
        workers=sandbox["workers"],
        progress=sandbox["progress"] and "test outputs",
        limits=limits,
    )
    for job, tried, res in zip(planned, inputs, results, strict=True):
        job.plan = tc.read_evaluations(job.plan, tried, res.stdout)
    if validate:
        originals = _validate([j.sample for j in jobs], True, sandbox)
        for job, (ok, why) in zip(jobs, originals, strict=True):
            if not ok:
                job.result.reasons.append(f"the original fails its own tests ({why})")


def _generate(job: _Job, kinds, seed, need, naturalness, pool) -> list[Variant]:
    """Up to ``need`` new distinct variants, picked from ``need * pool`` candidates when
    matching naturalness."""
    want = need * (pool if naturalness else 1)
    out: list[Variant] = []
    for _ in range(want * 8):
        if len(out) >= want:
            break
        variant = _one(job, kinds, seed, job.attempt)
        job.attempt += 1
        if variant is None or variant.text in job.texts or variant.text == job.sample.text:
            continue
        job.texts.add(variant.text)
        out.append(variant)
    if naturalness and out:
        scores = naturalness([job.sample.text] + [v.text for v in out])
        out = [
            v
            for _, v in sorted(
                zip((abs(s - scores[0]) for s in scores[1:]), out, strict=True), key=lambda p: p[0]
            )
        ]
    return out[:need]


def _one(job: _Job, kinds, seed, attempt) -> Variant | None:
    """One candidate variant (not yet validated), or None when nothing could change."""
    s, rng = job.sample, random.Random(f"{seed}:{job.sample.id}:{attempt}")
    edits, renames, applied, replaced, test_edits = [], [], [], [], []
    if job.analysis:
        for kind in ("function", "variable"):
            if kind in kinds and job.analysis.of_kind(kind):
                e, r = rename_edits(job.analysis, (kind,), rng, job.avoid)
                edits += e
                renames += r
                applied.append(kind)
    if job.plan and job.plan.cases:
        chosen: dict[int, tuple | None] = {}  # per hidden case; its quotations take the same
        for ci, case in enumerate(job.plan.cases):
            source = tc.source_of(ci, case)
            if source not in chosen:
                valid = tc.valid_candidates(job.plan.cases[source])
                chosen[source] = rng.choice(valid) if valid else None
            if chosen[source] is not None:
                test_edits += tc.case_edits(case, chosen[source])
        replaced = _changed_lines(s, apply_edits(s, test_edits))
        if replaced:
            applied.append("test")
            edits += test_edits
    if not edits:
        return None
    fields = apply_edits(s, edits)
    variant = Variant(
        **{**dataclasses.asdict(s), **fields, "id": f"{s.id}#attempt{attempt}"},
        original_id=s.id,
        kinds=tuple(applied),
        renames=renames,
        replaced_tests=replaced,
    )
    if renames:
        old, new = {r["old"] for r in renames}, {r["new"] for r in renames}
        if not same_scopes(Module.of(s).text, Module.of(variant).text, old, new):
            job.result.dropped.append(
                {"variant": variant.id, "stage": "scope check", "reason": "symtable differs"}
            )
            return None
    return variant


def _changed_lines(s: Sample, fields: dict[str, str]) -> list[dict[str, str]]:
    """The lines a test transformation changed, as ``{field, old, new}`` records."""
    out = []
    for name, text in fields.items():
        before, after = getattr(s, name).splitlines(), text.splitlines()
        out += [
            {"field": name, "old": a, "new": b}
            for a, b in zip(before, after, strict=True)
            if a != b
        ]
    return out


def _validate(items: Sequence[Sample], validate: bool, sandbox) -> list[tuple[bool, str]]:
    """(passed, reason) per item; everything passes when validation is off."""
    if not validate or not items:
        return [(True, "")] * len(items)
    results = run_programs(
        [v.program() for v in items],
        timeout=sandbox["timeout"],
        workers=sandbox["workers"],
        progress=sandbox["progress"],
    )
    return [
        (r.passed, "" if r.passed else f"{r.status}: {r.reason or r.stderr[-200:]}")
        for r in results
    ]
