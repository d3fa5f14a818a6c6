"""Execute samples' reference solutions against their tests and tabulate the outcome."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from srlib.execution.sandbox import run_programs
from srlib.samples import Sample


def check_samples(
    samples: Sequence[Sample], *, progress: bool | str = True, **sandbox: object
) -> pd.DataFrame:
    """One row per sample: does its ``program()`` pass in the sandbox, and if not, why."""
    results = run_programs([s.program() for s in samples], progress=progress, **sandbox)
    return pd.DataFrame(
        {
            "id": [s.id for s in samples],
            "benchmark": [s.benchmark for s in samples],
            "status": [r.status for r in results],
            "passed": [r.passed for r in results],
            "reason": [r.reason for r in results],
            "error": [_last_line(r.stderr) for r in results],
            "duration_s": [r.duration for r in results],
        }
    )


def known_failure(sample_id: str) -> str | None:
    """The documented reason a benchmark's own reference solution fails, if there is one."""
    from srlib.benchmarks.mbpp import KNOWN_FAILURES

    task = sample_id.removeprefix("mbpp/")
    if sample_id.startswith("mbpp/") and task.isdigit():
        return KNOWN_FAILURES.get(int(task))
    return None


def failure_table(checks: pd.DataFrame) -> pd.DataFrame:
    """The failed rows of ``check_samples`` with their documented reason, or a NEW marker."""
    failed = checks.loc[~checks.passed, ["id", "status", "error"]].reset_index(drop=True)
    failed["known reason"] = [
        known_failure(i) or "NEW: not a documented failure" for i in failed.id
    ]
    return failed


def _last_line(text: str) -> str:
    """The last non-empty line of a traceback: the exception and its message."""
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1][:200] if lines else ""
