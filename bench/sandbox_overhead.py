"""Sandbox cost per program, three ways side by side in one run: a bare ``python -I -c``
subprocess, the sandbox's fresh launcher (``run_program`` alone) and its fork server
(``run_programs``, one worker, the way every batch runs).

Usage: ``.venv/bin/python bench/sandbox_overhead.py [N]``. Prints programs per second and
CPU milliseconds per program (this process and its ended children) for each, and the fork
server's CPU against the launcher's. The sandbox's extra work over a bare run is the
temporary directory, the limits, the uid switch and the cleanup.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

from srlib.execution.sandbox import run_program, run_programs

PROGRAM = "assert sum(range(10)) == 45\n"


def measured(fn) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process and its ended children) of ``fn()``."""
    t0, w0 = os.times(), time.perf_counter()
    fn()
    t1, w1 = os.times(), time.perf_counter()
    cpu = sum(getattr(t1, k) - getattr(t0, k) for k in ("user", "system"))
    cpu += sum(getattr(t1, k) - getattr(t0, k) for k in ("children_user", "children_system"))
    return w1 - w0, cpu


def bare(n: int) -> None:
    """``n`` bare interpreter runs of PROGRAM."""
    for _ in range(n):
        subprocess.run([sys.executable, "-I", "-c", PROGRAM], check=True)


def launched(n: int) -> None:
    """``n`` sandboxed runs of PROGRAM, each in a fresh interpreter (each must pass)."""
    for _ in range(n):
        assert run_program(PROGRAM).passed


def served(n: int) -> None:
    """``n`` sandboxed runs of PROGRAM through one fork server (each must pass)."""
    assert all(r.passed for r in run_programs([PROGRAM] * n, workers=1, progress=False))


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    cpu = {}
    for name, fn in (("bare python -I", bare), ("sandbox, launcher", launched),
                     ("sandbox, fork server", served)):  # fmt: skip
        wall, cpu[name] = measured(lambda f=fn: f(n))
        print(f"{name:21}: {n / wall:7.1f} programs/s, {1000 * cpu[name] / n:5.1f} CPU-ms each")
    ratio = cpu["sandbox, launcher"] / cpu["sandbox, fork server"]
    print(f"fork server: {ratio:.2f}× less CPU per program than the launcher")
