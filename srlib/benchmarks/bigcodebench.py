"""BigCodeBench (Zhuo et al. 2024) from a local copy: JSONL(.gz) or parquet, or the HF cache.

BigCodeBench is not shipped with srlib. Give ``path=`` (a release file such as
``BigCodeBench-v0.1.2.jsonl.gz``, a HF ``v0.1.x-*.parquet`` shard, or a folder of them), or
download ``bigcode/bigcodebench`` into the Hugging Face cache beforehand. Its tests import
many third-party libraries; a sample fails in the sandbox when those are not installed.
"""

from __future__ import annotations

from pathlib import Path

from srlib.benchmarks import register_benchmark
from srlib.benchmarks._files import BenchmarkNotFound
from srlib.benchmarks.hf import rows, snapshot
from srlib.samples import Sample, SampleFormatError

HOW_TO_GET = (
    "BigCodeBench is not on this machine. Download it where you have network access, e.g. "
    "`huggingface-cli download bigcode/bigcodebench --repo-type dataset` (fills the HF cache, "
    "which srlib then reads offline), or a release file BigCodeBench-v0.1.x.jsonl.gz from "
    "github.com/bigcode-project/bigcodebench, and pass path=... to load_benchmark."
)
RUNNER = """

import sys as _sys
import unittest as _unittest

_suite = _unittest.defaultTestLoader.loadTestsFromTestCase(TestCases)
_result = _unittest.TextTestRunner(stream=_sys.stderr, verbosity=1).run(_suite)
if not _result.wasSuccessful():
    raise SystemExit(1)
"""
FIELDS = ("task_id", "complete_prompt", "canonical_solution", "test", "entry_point")


@register_benchmark("bigcodebench")
def load_bigcodebench(
    path: str | None = None, version: str | None = None, subset: str = "full"
) -> list[Sample]:
    """BigCodeBench tasks (``complete`` prompts); ``version`` picks a release, newest by default."""
    if subset not in ("full", "hard"):
        raise ValueError(f"unknown BigCodeBench subset {subset!r}; choose 'full' or 'hard'")
    files = _locate(path, subset)
    if version:
        files = [f for f in files if version in f.name]
        if not files:
            raise BenchmarkNotFound(f"no BigCodeBench file of version {version!r}. {HOW_TO_GET}")
    file = sorted(files, key=lambda f: f.name)[-1]
    return [_sample(r, file, i) for i, r in enumerate(_rows(file), 1)]


def _locate(path: str | None, subset: str) -> list[Path]:
    patterns = ("*.jsonl", "*.jsonl.gz", "*.parquet")
    if path is not None:
        p = Path(path)
        if not p.exists():
            raise BenchmarkNotFound(f"{p} does not exist. {HOW_TO_GET}")
        files = [p] if p.is_file() else [f for pat in patterns for f in p.rglob(pat)]
    else:
        repo = "bigcode/bigcodebench" + ("-hard" if subset == "hard" else "")
        files = sorted((snapshot(repo, HOW_TO_GET) / "data").glob("*.parquet"))
    if not files:
        raise BenchmarkNotFound(HOW_TO_GET)
    return files


def _rows(file: Path) -> list[dict]:
    """The records of one release file (JSONL, gzipped or not, or parquet), read by
    ``datasets`` (``hf.rows``)."""
    return rows(file)


def _sample(r: dict, file: Path, row: int) -> Sample:
    missing = [f for f in FIELDS if f not in r]
    if missing:
        raise SampleFormatError(f"{file}: record {row} lacks BigCodeBench field(s) {missing}")
    libs = r.get("libs", [])
    return Sample(
        id=r["task_id"],
        benchmark="bigcodebench",
        prompt=r["complete_prompt"],
        solution=r["canonical_solution"],
        tests=r["test"],
        entry_point=r["entry_point"],
        runner=RUNNER,
        format="completion",
        metadata={
            "task_id": r["task_id"],
            "libs": libs if isinstance(libs, list) else str(libs),
            "instruct_prompt": r.get("instruct_prompt", ""),
        },
    )
