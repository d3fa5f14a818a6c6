"""Tables and views of variants for the book: yield, drop reasons, changed tokens, diffs."""

from __future__ import annotations

import difflib
import html
import re
from collections.abc import Sequence

import pandas as pd

from srlib.codetext import code_tokens, highlight
from srlib.samples import Sample
from srlib.transforms.surface import rename_problems
from srlib.transforms.variants import Variants


def tokens_changed(original: str, variant: str) -> int:
    """Number of code tokens of ``original`` replaced, inserted or deleted in ``variant``."""
    a, b = code_tokens(original), code_tokens(variant)
    ops = difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes()
    return sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in ops if tag != "equal")


def variant_table(samples: Sequence[Sample], sets: Sequence[Variants]) -> pd.DataFrame:
    """One row per kept variant: its sample, kinds, renames, replaced test lines, changed tokens."""
    rows = []
    for s, vs in zip(samples, sets, strict=True):
        for v in vs:
            rows.append(
                {
                    "id": v.id,
                    "sample": s.id,
                    "benchmark": s.benchmark,
                    "kinds": "+".join(v.kinds),
                    "renames": len(v.renames),
                    "test lines replaced": len(v.replaced_tests),
                    "tokens changed": tokens_changed(s.text, v.text),
                }
            )
    return pd.DataFrame(rows)


def yield_table(
    samples: Sequence[Sample], sets: Sequence[Variants], ns: Sequence[int] = (1, 3, 5, 10)
) -> pd.DataFrame:
    """Per benchmark: the share of samples that reached at least n valid variants."""
    counts = pd.DataFrame(
        {"benchmark": [s.benchmark for s in samples], "k": [len(v) for v in sets]}
    )
    out = counts.groupby("benchmark").agg(samples=("k", "size"))
    for n in ns:
        out[f"n ≥ {n}"] = counts.groupby("benchmark").k.apply(lambda k, n=n: (k >= n).mean())
    return out


def yield_said(yields: pd.DataFrame, n: int) -> str:
    """What a ``yield_table`` says at ``n`` variants, one clause per benchmark."""
    column = f"n ≥ {n}"
    if column not in yields:
        raise ValueError(f"the yield table has no column {column!r}: add {n} to its ns")
    parts = [
        f"{row[column]:.1%} of {name}'s {int(row.samples):,} samples"
        for name, row in yields.iterrows()
    ]
    return f"{' and '.join(parts)} reach {n} variants, each executed against its tests."


def drop_table(samples: Sequence[Sample], sets: Sequence[Variants]) -> pd.DataFrame:
    """Why candidates were dropped and why samples fell short, counted per benchmark."""
    rows = []
    for s, vs in zip(samples, sets, strict=True):
        for d in vs.dropped:
            rows.append((s.benchmark, d["stage"], _generic(d["reason"])))
        for r in vs.reasons:
            rows.append((s.benchmark, "shortfall", _generic(r)))
    table = pd.DataFrame(rows, columns=["benchmark", "stage", "reason"])
    if table.empty:
        return table.assign(count=[])
    return table.value_counts().rename("count").reset_index()


def _generic(reason: str) -> str:
    """A reason with its sample-specific details (numbers, names, tracebacks) removed."""
    reason = (
        reason.split(":", 1)[0] if reason.startswith(("failed", "timeout", "crashed")) else reason
    )
    reason = re.sub(r"\d+", "N", reason)
    return re.sub(r"rejected: .*", "rejected (libcst missed a use)", reason)[:90]


def audit_renames(samples: Sequence[Sample], sets: Sequence[Variants]) -> pd.DataFrame:
    """Byte-level audit of every rename-only variant: one row per benchmark, problems counted."""
    rows = []
    for s, vs in zip(samples, sets, strict=True):
        for v in vs:
            if v.replaced_tests:
                continue
            rows.append(
                {"benchmark": s.benchmark, "problems": len(rename_problems(s, v, v.renames))}
            )
    table = pd.DataFrame(rows, columns=["benchmark", "problems"])
    return table.groupby("benchmark").agg(
        variants=("problems", "size"), with_problems=("problems", lambda p: int((p > 0).sum()))
    )


def diff_view(original: Sample, variants: Sequence[Sample]) -> str:
    """HTML: the original, then each variant with what differs from the original marked."""
    parts = [
        f"<p><b>{html.escape(original.id)} (original)</b></p>"
        f"<pre>{html.escape(original.text)}</pre>"
    ]
    for v in variants:
        renames = ", ".join(f"{r['old']} → {r['new']}" for r in getattr(v, "renames", []))
        label = f"{v.id}: {'+'.join(getattr(v, 'kinds', ()))}" + (
            f" ({renames})" if renames else ""
        )
        parts.append(
            f"<p><b>{html.escape(label)}</b></p><pre>{highlight(original.text, v.text)}</pre>"
        )
    return "<div class='srlib-variants'>" + "".join(parts) + "</div>"
