"""The fresh benchmark: problems written for this project, the null a real model can have.

HumanEval's format (a signature and docstring, a canonical solution, a ``check`` function),
written for srlib and never published before it (``data/fresh/PROVENANCE.md`` says when and
how), so no model trained before then can have seen them. They are kept out of plain-text
crawls the way peers keep theirs: the records live in a password-protected zip archive
(ConStat ships its reference benchmarks so; the password is in ``data/fresh/fresh.json``,
which only stops a crawler that reads text, not a reader), and every record and file carries
a canary string (BIG-bench's convention) by which a training-set filter can drop them. The
book shows their counts and statistics, never their text.

``load_fresh`` checks the archive's records against the digest recorded beside it, so a
changed problem is an error, not a silent change of every number; ``pack`` writes a new
archive from a JSONL (the maintainer's step, with Debian's ``zip``: Python's ``zipfile``
reads encrypted archives but cannot write them).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from srlib.benchmarks import register_benchmark
from srlib.benchmarks._files import BenchmarkNotFound, data_dir
from srlib.errors import InputError
from srlib.samples import Sample
from srlib.store import write_text

FIELDS = ("task_id", "prompt", "canonical_solution", "test", "entry_point")


def card_path() -> Path:
    """``data/fresh/fresh.json``: the archive's name, password, canary and records' digest."""
    return data_dir() / "fresh" / "fresh.json"


def card() -> dict:
    """The fresh benchmark's card (see ``card_path``)."""
    path = card_path()
    if not path.is_file():
        raise BenchmarkNotFound(f"{path} is missing; reinstall srlib from its source checkout")
    return json.loads(path.read_text(encoding="utf-8"))


def records(path: str | os.PathLike[str] | None = None) -> list[dict]:
    """The archive's records, checked against the card's digest."""
    import zipfile

    info = card()
    archive = Path(path) if path is not None else card_path().parent / info["archive"]
    import zlib

    try:
        with zipfile.ZipFile(archive) as zf:
            if not zf.getinfo(info["member"]).flag_bits & 1:
                raise InputError(f"{archive}: {info['member']} is not encrypted; repack it")
            raw = zf.read(info["member"], pwd=info["password"].encode())
    except (OSError, KeyError, RuntimeError, zipfile.BadZipFile, zlib.error) as e:
        raise BenchmarkNotFound(f"{archive}: the fresh benchmark cannot be read ({e})") from e
    got = hashlib.sha256(raw).hexdigest()
    if got != info["sha256"]:
        raise InputError(f"{archive}: records' SHA-256 {got} is not the card's {info['sha256']}")
    return [json.loads(line) for line in raw.decode("utf-8").splitlines() if line.strip()]


@register_benchmark("fresh")
def load_fresh(path: str | None = None) -> list[Sample]:
    """The fresh problems as HumanEval-format samples (``humaneval.humaneval_samples``);
    ``metadata`` keeps the canary."""
    from srlib.benchmarks.humaneval import humaneval_samples

    return humaneval_samples(records(path), "fresh", canary="canary")


def pack(jsonl: str | os.PathLike[str], out: str | os.PathLike[str] | None = None) -> dict:
    """Write the archive from ``jsonl`` (records with ``FIELDS``), adding the card's canary to
    each; the card's digest and count are updated where the archive is the card's own (no
    ``out``). Returns the archive's card. Needs ``zip`` on the PATH."""
    info = card()
    rows = [json.loads(x) for x in Path(jsonl).read_text(encoding="utf-8").splitlines() if x]
    for i, r in enumerate(rows):
        missing = [f for f in FIELDS if not isinstance(r.get(f), str) or not r[f]]
        if missing:
            raise InputError(f"{jsonl}: record {i} lacks {missing}")
    body = "".join(
        json.dumps({f: r[f] for f in FIELDS} | {"canary": info["canary"]}) + "\n" for r in rows
    ).encode("utf-8")
    if shutil.which("zip") is None:
        raise InputError("packing needs Debian's `zip` (apt-get install zip)")
    target = Path(out) if out is not None else card_path().parent / info["archive"]
    with tempfile.TemporaryDirectory() as tmp:
        member = Path(tmp) / info["member"]
        member.write_bytes(body)
        os.utime(member, (0, 0))
        made = Path(tmp) / "out.zip"
        cmd = ["zip", "-q", "-X", "-j", "-P", info["password"], str(made), str(member)]
        subprocess.run(cmd, check=True)
        shutil.move(made, target)
    info |= {"sha256": hashlib.sha256(body).hexdigest(), "problems": len(rows)}
    if out is None:
        write_text(card_path(), json.dumps(info, indent=2) + "\n")
    return info
