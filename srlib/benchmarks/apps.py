"""APPS (Hendrycks et al. 2021) from a local copy: HF ``codeparrot/apps`` JSONL or the APPS tree.

APPS is not shipped with srlib. Give ``path=`` (a ``test.jsonl``/``train.jsonl`` file, a
folder holding one, or the original ``APPS/`` folder with ``test/0000/question.txt`` ...),
or download ``codeparrot/apps`` into the Hugging Face cache beforehand.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

from srlib.benchmarks import register_benchmark
from srlib.benchmarks._files import BenchmarkNotFound
from srlib.benchmarks.hf import rows, snapshot
from srlib.samples import Sample, call_tests

HOW_TO_GET = (
    "APPS is not on this machine. Download it where you have network access, e.g. "
    "`huggingface-cli download codeparrot/apps --repo-type dataset` (fills the HF cache, "
    "which srlib then reads offline), or fetch test.jsonl/train.jsonl from that dataset or "
    "the original APPS.tar.gz (github.com/hendrycks/apps) and pass path=... to load_benchmark."
)
DIFFICULTIES = ("introductory", "interview", "competition")
REPO = "codeparrot/apps"
"""APPS on the Hugging Face hub (``test.jsonl``, ``train.jsonl``), read from the cache."""


@register_benchmark("apps")
def load_apps(
    path: str | None = None, split: str = "test", difficulty: str | None = None
) -> list[Sample]:
    """APPS problems with at least one solution and one test case; others are skipped."""
    if split not in ("test", "train"):
        raise ValueError(f"unknown APPS split {split!r}; choose 'test' or 'train'")
    if difficulty is not None and difficulty not in DIFFICULTIES:
        raise ValueError(f"unknown APPS difficulty {difficulty!r}; choose from {DIFFICULTIES}")
    records = list(_records(_locate(path, split), split))
    samples, skipped = [], 0
    for rec in records:
        if difficulty and rec.get("difficulty") != difficulty:
            continue
        sample = _sample(rec, split)
        if sample is None:
            skipped += 1
        else:
            samples.append(sample)
    if skipped:
        warnings.warn(
            f"APPS {split}: skipped {skipped} problems without solutions or tests",
            stacklevel=2,
        )
    return samples


def _locate(path: str | None, split: str) -> Path:
    if path is not None:
        p = Path(path)
        if not p.exists():
            raise BenchmarkNotFound(f"{p} does not exist. {HOW_TO_GET}")
        if p.is_dir() and (p / f"{split}.jsonl").is_file():
            return p / f"{split}.jsonl"
        return p
    cached = snapshot(REPO, HOW_TO_GET) / f"{split}.jsonl"
    if not cached.is_file():
        raise BenchmarkNotFound(f"the cached {REPO} has no {cached.name}. {HOW_TO_GET}")
    return cached


def _records(p: Path, split: str):
    """Raw APPS records from a JSONL file (read by ``datasets``: ``hf.rows``) or from the
    original one-folder-per-problem tree."""
    if p.is_file():
        yield from rows(p)
        return
    root = p / split if (p / split).is_dir() else p
    problems = sorted(d for d in root.iterdir() if (d / "question.txt").is_file())
    if not problems:
        raise BenchmarkNotFound(f"{p} holds no APPS problems (no */question.txt). {HOW_TO_GET}")
    for d in problems:
        meta = d / "metadata.json"
        yield {
            "problem_id": int(d.name) if d.name.isdigit() else d.name,
            "question": (d / "question.txt").read_text(encoding="utf-8"),
            "solutions": _read_opt(d / "solutions.json"),
            "input_output": _read_opt(d / "input_output.json"),
            "starter_code": _read_opt(d / "starter_code.py"),
            "difficulty": json.loads(meta.read_text()).get("difficulty") if meta.exists() else "",
        }


def _read_opt(p: Path) -> str:
    """A file's text, or "" when the problem folder lacks it."""
    return p.read_text(encoding="utf-8") if p.is_file() else ""


def _json_field(value: Any) -> Any:
    """HF exports store ``solutions`` and ``input_output`` as JSON strings; accept both."""
    if isinstance(value, str):
        return json.loads(value) if value.strip() else None
    return value


def _text(x: Any) -> str:
    return "\n".join(map(str, x)) if isinstance(x, list) else str(x)


def _sample(rec: dict, split: str) -> Sample | None:
    solutions = _json_field(rec.get("solutions")) or []
    io = _json_field(rec.get("input_output")) or {}
    inputs, outputs = io.get("inputs") or [], io.get("outputs") or []
    if not solutions or not inputs or len(inputs) != len(outputs):
        return None
    starter = rec.get("starter_code") or ""
    fn_name = io.get("fn_name")
    if fn_name:
        cases = [
            (args if isinstance(args, list) else [args], out)
            for args, out in zip(inputs, outputs, strict=True)
        ]
        tests, fmt = call_tests(fn_name, cases, in_class="class Solution" in starter), "standalone"
    else:
        tests, fmt = (
            json.dumps([[_text(i), _text(o)] for i, o in zip(inputs, outputs, strict=True)]),
            "stdio",
        )
    pid = rec.get("problem_id", rec.get("id"))
    prompt = rec["question"] + (f"\n{starter}" if starter else "")
    return Sample(
        id=f"apps/{split}/{pid}",
        benchmark="apps",
        prompt=prompt,
        solution=solutions[0],
        tests=tests,
        entry_point=fn_name or "",
        format=fmt,
        metadata={
            "problem_id": pid,
            "difficulty": rec.get("difficulty", ""),
            "n_solutions": len(solutions),
            "url": rec.get("url", ""),
        },
        text_sep="\n",
    )
