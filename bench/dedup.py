"""Partition N secret-sized contexts (goal: 100,000 in under 60 s on 2 cores), and compare
the LSH method with the exhaustive all-pairs method on a subset the latter can finish, in
the same run. Contexts are 400-character windows of real code with exact and near copies.

Usage: ``.venv/bin/python bench/dedup.py [N [SUBSET]]``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from _timing import timed

from srlib.duplication.dedup.neardup import exhaustive_pairs, lsh_pairs
from srlib.duplication.dedup.partition import fingerprints, partition

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from synthetic import code_windows  # noqa: E402  (the tests' data generator, not the library's)

if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    subset = int(sys.argv[2]) if len(sys.argv) > 2 else 5_000
    data = code_windows(n)
    parts, full_s = timed(lambda: partition(data))
    counts = parts.part.value_counts().to_dict()
    print(f"LSH partition of {n:,} contexts: {full_s:.1f} s  {counts}")
    lsh, lsh_s = timed(lambda: partition(data[:subset]))
    exhaustive, ex_s = timed(lambda: partition(data[:subset], method="exhaustive"))
    same = bool((lsh == exhaustive).all().all())
    print(
        f"{subset:,}-context subset: LSH {lsh_s:.1f} s, exhaustive {ex_s:.1f} s "
        f"({ex_s / lsh_s:.0f}x slower); identical partitions: {same}"
    )
    fps = fingerprints(list(dict.fromkeys(data[:subset])))  # distinct contexts
    truth = exhaustive_pairs(fps, min_tokens=3)
    found, candidates = lsh_pairs(fps, min_tokens=3)
    recall = len(found & truth) / len(truth) if truth else float("nan")
    print(
        f"LSH recall of true near-duplicate pairs: {recall:.4f} ({len(truth):,} pairs; "
        f"{candidates:,} candidates verified of {len(fps) * (len(fps) - 1) // 2:,} pairs)"
    )
