"""Is the fresh benchmark comparable with HumanEval where it matters to SR, and new?

``comparability``: per benchmark, the sizes SR's rule is sensitive to — the scored text's
length, the identifiers the renamings can change (``transforms.rename.analyze``), the test
cases the test transformation can rewrite (``transforms.testcases.plan_tests``) and how many
validated variants each problem yields. ``novelty``: the fresh problems checked against the
published benchmarks with the decontamination's three rules
(``duplication.dedup.overlap.overlap_audit``): a fresh problem written after the model was
trained cannot be in its data, but one that copied a published problem could be."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from srlib.samples import Sample, read_jsonl
from srlib.transforms import Variant, Variants


def audit_variants(out: Path, name: str, samples: Sequence[Sample]) -> list[Variants]:
    """The variants an audit in ``out`` scored for the sample set ``name`` (a benchmark spec,
    or ``audit.summary.CONTROL``), one ``Variants`` per sample."""
    from srlib.audit.run import _safe

    by_id: dict[str, list[Variant]] = {s.id: [] for s in samples}
    for v in read_jsonl(out / "variants" / f"{_safe(name)}.jsonl", Variant):
        by_id[v.original_id].append(v)
    return [Variants(by_id[s.id]) for s in samples]


def comparability(
    sets: Mapping[str, Sequence[Sample]], variants: Mapping[str, Sequence[Variants]], n: int
) -> pd.DataFrame:
    """One row per benchmark: problems, median characters of the scored text, median
    renamable functions and variables, median test cases, the mean number of validated
    variants and the share of problems with all ``n``."""
    from srlib.transforms.rename import analyze
    from srlib.transforms.testcases import plan_tests

    def med(values) -> float:
        return float(pd.Series(list(values), dtype=float).median())

    rows = []
    for name, samples in sets.items():
        found = [analyze(s) for s in samples]
        counts = pd.Series([len(v) for v in variants[name]], dtype=float)
        rows.append(
            {
                "benchmark": name,
                "problems": len(samples),
                "median text chars": med(len(s.text) for s in samples),
                "median functions": med(len(a.of_kind("function")) for a in found),
                "median variables": med(len(a.of_kind("variable")) for a in found),
                "median test cases": med(len(plan_tests(s).cases) for s in samples),
                "mean variants": counts.mean(),
                f"share with {n} variants": (counts >= n).mean(),
            }
        )
    return pd.DataFrame(rows).set_index("benchmark")


def novelty(fresh: Sequence[Sample], published: Sequence[Sample]) -> pd.DataFrame:
    """Per fresh problem, its overlap with the ``published`` problems' texts (each a document):
    the share of its 13-token runs found there, and whether one holds it verbatim or as a near
    duplicate (``overlap_audit``'s columns)."""
    from srlib.duplication.dedup.overlap import overlap_audit

    documents = [(f"{s.benchmark}/{s.id}", s.text) for s in published]
    return overlap_audit(fresh, documents)
