"""CredData (Samsung, Apache-2.0 metadata): real credential candidates from open-source
repositories, each labelled after manual review (``T`` a real credential, ``F`` not one).

Two ways in:

- ``load_contexts()``: the subset vendored under ``data/creddata/`` (6,087 candidates from 38
  repositories, values obfuscated beyond their first four characters, 250 characters of
  their file each side; ``PROVENANCE.md`` there says how it was built and under which
  licences) — the duplication chapters' default data;
- ``load_creddata(root)``: CredData's own layout, as its ``download_data.py`` leaves it —
  ``root/meta/<repo id>.csv`` (one row per labelled line: ``Id``, ``FileID``, ``FilePath``,
  ``LineStart``, ``LineEnd``, ``GroundTruth``, ``ValueStart``, ``ValueEnd``, ``Category``)
  and the files under ``root/data/<repo id>/...`` — for a user with the whole dataset.

Rows left out are counted by reason and reported in one warning: undecided ``X`` labels, a
value span that is missing or spans lines (the study needs the span to exclude the value
from its context), a file that is not there, a line or span outside the file."""

from __future__ import annotations

import csv
import errno
from collections import Counter
from pathlib import Path

from srlib.benchmarks._files import data_dir
from srlib.codetext import line_starts
from srlib.duplication.data.secretdata import SecretRecord, load_records, report_skipped
from srlib.errors import InputError
from srlib.localfiles import language

REQUIRED = ("Id", "LineStart", "LineEnd", "GroundTruth", "ValueStart", "ValueEnd")


def contexts_file() -> Path:
    """Where the vendored subset lies (in srlib's data folder)."""
    return data_dir() / "creddata" / "creddata-contexts.jsonl"


def load_contexts(path: str | Path | None = None) -> list[SecretRecord]:
    """The vendored CredData subset (see the module docstring), or the same format at
    ``path``."""
    path = Path(path) if path else contexts_file()
    if not path.is_file():
        raise FileNotFoundError(errno.ENOENT, "no CredData contexts file", str(path))
    return load_records(path)


def load_creddata(root: str | Path, window: int = 250) -> list[SecretRecord]:
    """Every decided single-line candidate of a CredData checkout, with ``window``
    characters of its file each side (see the module docstring for the layout)."""
    root = Path(root)
    metas = sorted((root / "meta").glob("*.csv"))
    if not metas:
        raise FileNotFoundError(errno.ENOENT, "no CredData meta/*.csv files", str(root / "meta"))
    out: list[SecretRecord] = []
    skipped: Counter = Counter()
    for meta in metas:
        with meta.open(encoding="utf-8", newline="") as fh:
            reader = csv.DictReader(fh)
            absent = [c for c in REQUIRED if c not in (reader.fieldnames or [])]
            if absent:
                raise InputError(f"{meta}: not CredData's meta schema, missing {absent}")
            files: dict[Path, tuple[str, list[int]] | None] = {}
            for rowno, row in enumerate(reader, 2):
                record = _record(root, meta.stem, row, files, window)
                if isinstance(record, str):
                    skipped[record] += 1
                elif record is None:
                    raise InputError(f"{meta}:{rowno}: bad CredData row")
                else:
                    out.append(record)
    missing = skipped["file not there"]
    if missing and not out:
        raise InputError(
            f"{root}: the source files of all {missing} decided candidates are missing (only "
            "meta/ is there): CredData ships its files by a download script (download_data.py "
            "in the CredData repository); run it, then point --input at the checkout again"
        )
    report_skipped(root, skipped)
    return out


def _record(root: Path, repo_id: str, row: dict, files: dict, window: int):
    """One row as a record, or the reason it is left out."""
    if row["GroundTruth"] not in ("T", "F"):
        return "undecided (X)"
    if not (row["ValueStart"] and row["ValueEnd"]) or row["LineStart"] != row["LineEnd"]:
        return "no single-line value span"
    file = _file(root, repo_id, row)
    if file not in files:
        files[file] = _read(file)
    if files[file] is None:
        return "file not there"
    text, starts = files[file]
    try:
        line, start, end = int(row["LineStart"]) - 1, int(row["ValueStart"]), int(row["ValueEnd"])
    except ValueError:
        return None
    if not 0 <= line < len(starts):
        return "line or span outside the file"
    stop = starts[line + 1] if line + 1 < len(starts) else len(text)
    length = len(text[starts[line] : stop].rstrip("\r\n"))
    if not 0 <= start < end <= length:
        return "line or span outside the file"
    a, b = starts[line] + start, starts[line] + end
    lo, hi = max(0, a - window), min(len(text), b + window)
    return SecretRecord(
        id=f"{repo_id}:{row['Id']}",
        text=text[lo:hi],
        start=a - lo,
        end=b - lo,
        label=row["GroundTruth"] == "T",
        language=language(file),
        category=row.get("Category", ""),
        repo=row.get("RepoName") or repo_id,
        file=row.get("FileID") or row.get("FilePath", ""),
    )


def _file(root: Path, repo_id: str, row: dict) -> Path:
    """The candidate's file: ``FilePath`` when given, else ``data/<repo>/*/<FileID>.*``."""
    if row.get("FilePath"):
        return root / row["FilePath"]
    found = sorted((root / "data" / repo_id).glob(f"*/{row.get('FileID', '')}*"))
    return found[0] if found else root / "data" / repo_id / "missing"


def _read(file: Path) -> tuple[str, list[int]] | None:
    """A file's text and where its lines start, CR, LF and CRLF each ending a line (as
    CredData numbers them); None where the file is not there."""
    if not file.is_file():
        return None
    with file.open(encoding="utf-8", errors="replace", newline="") as fh:
        text = fh.read()
    return text, line_starts(text)
