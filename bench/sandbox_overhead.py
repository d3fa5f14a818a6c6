"""Sandbox cost per program, side by side with a bare ``python -I -c`` subprocess, one run.

Usage: ``.venv/bin/python bench/sandbox_overhead.py [N]``. Prints programs/second for both
and their ratio; the sandbox's extra work is the temp dir, limits, uid switch and cleanup.
"""

from __future__ import annotations

import subprocess
import sys
import time

from srlib.execution.sandbox import run_program

PROGRAM = "assert sum(range(10)) == 45\n"


def bare(n: int) -> float:
    """Seconds for ``n`` bare interpreter runs of PROGRAM."""
    start = time.perf_counter()
    for _ in range(n):
        subprocess.run([sys.executable, "-I", "-c", PROGRAM], check=True)
    return time.perf_counter() - start


def sandboxed(n: int) -> float:
    """Seconds for ``n`` sandboxed runs of PROGRAM (each must pass)."""
    start = time.perf_counter()
    for _ in range(n):
        assert run_program(PROGRAM).passed
    return time.perf_counter() - start


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    b, s = bare(n), sandboxed(n)
    print(f"bare python -I : {n / b:7.1f} programs/s")
    print(f"srlib sandbox  : {n / s:7.1f} programs/s")
    print(f"sandbox / bare time ratio: {s / b:.2f}")
