"""Execute samples' reference solutions against their tests and tabulate the outcome."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from srlib.samples import Sample
from srlib.sandbox import run_programs


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


def _last_line(text: str) -> str:
    """The last non-empty line of a traceback: the exception and its message."""
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1][:200] if lines else ""
