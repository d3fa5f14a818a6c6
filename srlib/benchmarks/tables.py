"""Tidy tables the book shows about benchmarks: sizes, lengths, availability, pass rates."""

from __future__ import annotations

import io
import tokenize
from collections.abc import Sequence

import pandas as pd

from srlib.benchmarks import BenchmarkNotFound, available_benchmarks, load_benchmark
from srlib.samples import Sample


def code_tokens(code: str) -> int:
    """Number of Python tokens in ``code`` (comments and layout tokens excluded)."""
    skip = {
        tokenize.COMMENT,
        tokenize.NL,
        tokenize.NEWLINE,
        tokenize.INDENT,
        tokenize.DEDENT,
        tokenize.ENDMARKER,
        tokenize.ENCODING,
    }
    try:
        toks = tokenize.generate_tokens(io.StringIO(code).readline)
        return sum(1 for t in toks if t.type not in skip)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return len(code.split())


def sample_lengths(samples: Sequence[Sample]) -> pd.DataFrame:
    """One row per sample: characters of prompt, solution and scored text; solution lines/tokens."""
    return pd.DataFrame(
        {
            "id": [s.id for s in samples],
            "benchmark": [s.benchmark for s in samples],
            "prompt_chars": [len(s.prompt) for s in samples],
            "solution_chars": [len(s.solution) for s in samples],
            "solution_lines": [len(s.solution.strip().splitlines()) for s in samples],
            "solution_tokens": [code_tokens(s.solution) for s in samples],
            "text_chars": [len(s.text) for s in samples],
        }
    )


def size_table(lengths: pd.DataFrame) -> pd.DataFrame:
    """Per benchmark: number of samples and median lengths."""
    g = lengths.groupby("benchmark", sort=False)
    return pd.DataFrame(
        {
            "samples": g.size(),
            "median prompt chars": g.prompt_chars.median(),
            "median solution lines": g.solution_lines.median(),
            "median solution tokens": g.solution_tokens.median(),
        }
    )


def availability(names: Sequence[str] | None = None) -> pd.DataFrame:
    """Which registered benchmarks load on this machine, with the loader's message if not."""
    rows = []
    for name in names or available_benchmarks():
        try:
            n, note = len(load_benchmark(name)), ""
        except BenchmarkNotFound as e:
            n, note = 0, str(e)
        rows.append({"benchmark": name, "available": n > 0, "samples": n, "how to get it": note})
    return pd.DataFrame(rows)


def pass_table(checks: pd.DataFrame) -> pd.DataFrame:
    """Per benchmark: samples executed, how many passed, pass rate, and counts by status."""
    counts = checks.pivot_table(
        index="benchmark", columns="status", values="id", aggfunc="count", fill_value=0
    )
    out = pd.DataFrame({"executed": counts.sum(axis=1)})
    out["passed"] = counts.get("passed", 0)
    out["pass rate"] = out.passed / out.executed
    for status in counts.columns.drop("passed", errors="ignore"):
        out[status] = counts[status]
    return out


def pass_said(table: pd.DataFrame) -> list[str]:
    """One sentence per benchmark of a ``pass_table``: how many reference solutions pass."""
    return [
        f"{name}: {int(row.passed):,} of {int(row.executed):,} reference solutions pass in the "
        f"sandbox ({row['pass rate']:.1%})."
        for name, row in table.iterrows()
    ]
