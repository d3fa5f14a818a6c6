"""Digests a reader can compare between two builds: of the training corpus, every trained
model, every score table and the claim table. A chapter publishes its rows (``publish``: a
table whose output carries them, in a cell tagged ``digests``); the appendix collects them in
pipeline order and writes ``book/digests.json``; ``compare`` says where two builds part,
first difference first (``srlib book --compare OTHER``)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd

from srlib.errors import InputError
from srlib.store import DIGEST_ORDER as ORDER

KEY = "srlib-digests"  # the output metadata field that carries a chapter's rows


def publish(rows: list[dict]) -> pd.DataFrame:
    """Show ``rows`` as a table whose output metadata carries them for the appendix (tag the
    cell ``digests``); returns the table."""
    from IPython.display import display

    table = pd.DataFrame(rows, columns=["what", "name", "digest", "note"])
    display(table.assign(digest=table.digest.str[:16]), metadata={KEY: rows})
    return table


def collect(executed: list[Path]) -> list[dict]:
    """Every published row of the executed chapters, each with its chapter, in pipeline order
    (``ORDER``, then chapter and publication order); a name published twice is kept once."""
    rows, seen = [], set()
    for path in executed:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        for cell in cells:
            for out in cell.get("outputs", []):
                for r in out.get("metadata", {}).get(KEY, []):
                    if (r["what"], r["name"]) not in seen:
                        seen.add((r["what"], r["name"]))
                        rows.append(r | {"chapter": path.stem})
    return sorted(rows, key=lambda r: ORDER.index(r["what"]))


def load(path: str | os.PathLike[str]) -> list[dict]:
    """A build's digests: its ``digests.json`` (or the appendix's ``digests.csv``), or a build
    folder holding ``book/digests.json``
    (or ``_build/html/digests.json``)."""
    path = Path(path)
    if path.is_dir():
        for candidate in ("book/digests.json", "_build/html/digests.json", "digests.json"):
            if (path / candidate).is_file():
                path = path / candidate
                break
        else:
            raise InputError(f"{path}: no book/digests.json (build the book there first)")
    try:
        if path.suffix == ".csv":
            return pd.read_csv(path, dtype=str, keep_default_na=False).to_dict("records")
        return json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, pd.errors.ParserError) as e:
        raise InputError(f"{path}: not a digests file ({e})") from e


def compare(mine: list[dict], other: list[dict]) -> list[str]:
    """Where two builds' digests part, in pipeline order: one line per differing or missing
    name, the first difference first; empty when they agree."""
    theirs = {(r["what"], r["name"]): r["digest"] for r in other}
    ours = {(r["what"], r["name"]): r["digest"] for r in mine}
    lines = []
    for what, name in sorted(
        ours | theirs, key=lambda k: (ORDER.index(k[0]), _position(k, mine, other))
    ):
        a, b = ours.get((what, name)), theirs.get((what, name))
        if a != b:
            lines.append(f"{what} {name}: {_short(a)} here, {_short(b)} there")
    return lines


def _position(key: tuple[str, str], *builds: list[dict]) -> int:
    """Where ``key`` first appears in either build (pipeline order within a kind)."""
    for build in builds:
        for i, r in enumerate(build):
            if (r["what"], r["name"]) == key:
                return i
    return 0


def _short(value: str | None) -> str:
    return value[:16] if value else "absent"
