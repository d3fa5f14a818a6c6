"""Time to generate and validate n variants for every HumanEval problem (goal: < 60 s, 2 cores).

Usage: ``.venv/bin/python bench/variants.py [N]``. Prints the wall time of each stage's
share (the whole call, then analysis alone) and the yield, all measured in this one run.
"""

from __future__ import annotations

import sys
import time

from srlib.benchmarks import load_benchmark
from srlib.transforms import make_variants_many
from srlib.transforms.rename import analyze

if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    samples = load_benchmark("humaneval")
    start = time.perf_counter()
    sets = make_variants_many(samples, n, progress=False)
    total = time.perf_counter() - start
    start = time.perf_counter()
    for s in samples:
        analyze(s)
    analysis = time.perf_counter() - start
    kept = sum(map(len, sets))
    print(f"HumanEval {len(samples)} x n={n}: {total:.1f} s to generate and validate")
    print(f"  of which scope analysis (libcst + symtable check): {analysis:.1f} s")
    print(f"  kept {kept} variants; {sum(len(v) == n for v in sets)} samples reached n")
