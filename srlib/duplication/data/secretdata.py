"""Secret-detection data: SecretBench's published schema (gated; for users who have it) and a
generic format of (file text, secret span, label) records, both to ``SecretRecord`` objects.

SecretBench (Basak et al., MSR 2023) ships one CSV row per candidate secret with the file's
location, not its text. ``load_secretbench(csv, files_root)`` reads the text from
``files_root/<file_identifier>`` when present, else ``files_root/<repo_name>/<file_path>``;
candidates whose file is missing, whose line or column lies past the end of the file, or whose
secret is not at its line and column are counted by reason and skipped, never fatal. Labels
are ``Y``/``N`` in the published exports (documented as Boolean); both spellings are accepted.
Secret values are never printed: ``SecretRecord.__repr__`` masks them.
"""

from __future__ import annotations

import csv
import errno
import random
import warnings
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from srlib.duplication.data.contexts import Context, offset, secret_context
from srlib.errors import InputError, describe
from srlib.jsonl import iter_jsonl
from srlib.localfiles import language_name

_COLUMNS = (
    "id secret repo_name domain commit_id file_path file_type start_line end_line start_column "
    "end_column committer_email commit_date label is_template in_url entropy character_set "
    "has_words length is_multiline category file_identifier repo_identifier comment"
)
SECRETBENCH_COLUMNS = tuple(_COLUMNS.split())
REQUIRED = (
    "id",
    "secret",
    "repo_name",
    "file_path",
    "start_line",
    "end_line",
    "start_column",
    "end_column",
    "label",
)
_TRUE = {"y", "yes", "true", "1", "t"}
_FALSE = {"n", "no", "false", "0", "f"}


def mask(secret: str) -> str:
    """A printable stand-in for a secret: its length and first character only."""
    return f"{secret[:1]}***({len(secret)} chars)" if secret else "***"


@dataclass
class SecretRecord:
    """One candidate secret in its file."""

    id: str
    text: str = field(repr=False)
    start: int
    end: int
    label: bool
    language: str = ""
    category: str = ""
    repo: str = ""
    file: str = ""  # the file within ``repo`` (path or id): the file-grouped scenario's unit

    @property
    def secret(self) -> str:
        """The candidate value (never print it; see ``mask``)."""
        return self.text[self.start : self.end]

    def context(self, window: int = 200) -> Context:
        """The secret's context, ``window`` characters each side, secret excluded."""
        return secret_context(self.text, self.start, self.end, window)

    def __repr__(self) -> str:
        return (
            f"SecretRecord(id={self.id!r}, secret={mask(self.secret)}, label={self.label}, "
            f"language={self.language!r}, category={self.category!r})"
        )


def parse_label(value: str, where: str) -> bool:
    """SecretBench's Y/N (or Boolean) label."""
    v = str(value).strip().lower()
    if v in _TRUE:
        return True
    if v in _FALSE:
        return False
    raise ValueError(f"{where}: label {value!r} is neither Y/N nor a Boolean")


def load_records(path: str | Path) -> list[SecretRecord]:
    """Generic JSONL: ``{"id", "text", "start", "end", "label", "language"?, "category"?,
    "repo"?, "file"?}`` per line (``file_id`` read as ``file``, CredData's name for it),
    ``start``/``end`` character offsets of the secret in ``text``."""
    out = []
    for lineno, r in iter_jsonl(path):
        try:
            rec = SecretRecord(
                id=str(r["id"]),
                text=r["text"],
                start=int(r["start"]),
                end=int(r["end"]),
                label=parse_label(r["label"], f"{path}:{lineno}"),
                language=language_name(r.get("language", "")),
                category=r.get("category", ""),
                repo=r.get("repo", ""),
                file=str(r.get("file") or r.get("file_id") or ""),
            )
            if not 0 <= rec.start <= rec.end <= len(rec.text):
                raise ValueError(f"span [{rec.start}, {rec.end}) outside the text")
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise InputError(f"{path}:{lineno}: bad secret record: {describe(e)}") from e
        out.append(rec)
    return out


def _language(file_type: str, file_path: str) -> str:
    return language_name(file_type or Path(file_path).suffix)


def load_secretbench(csv_path: str | Path, files_root: str | Path) -> list[SecretRecord]:
    """SecretBench rows with their files' text (see the module docstring for the layout)."""
    root, out = Path(files_root), []
    if not root.is_dir():
        raise FileNotFoundError(errno.ENOENT, "no such folder of SecretBench files", str(root))
    try:
        with Path(csv_path).open(encoding="utf-8", newline="") as fh:
            skipped = _read_secretbench(csv.DictReader(fh), csv_path, root, out)
    except UnicodeDecodeError as e:
        raise InputError(f"{csv_path}: not UTF-8 ({e.reason} at byte {e.start})") from e
    report_skipped(csv_path, skipped)
    return out


def report_skipped(source: str | Path, skipped: Counter) -> None:
    """One warning naming how many candidates were left out of ``source``, and why."""
    if sum(skipped.values()):
        why = ", ".join(f"{n} {reason}" for reason, n in skipped.most_common())
        warnings.warn(f"{source}: candidates skipped: {why}", stacklevel=3)


def _read_secretbench(reader: csv.DictReader, csv_path, root: Path, out: list) -> Counter:
    """Append the rows of a SecretBench CSV to ``out``; the rows skipped, by reason (the file
    missing, its line past the end of the file, or the secret not at its line and column:
    never kept with a guessed span)."""
    absent = [c for c in REQUIRED if c not in (reader.fieldnames or [])]
    if absent:
        raise InputError(f"{csv_path}: not the SecretBench schema, missing {absent}")
    skipped: Counter = Counter()
    for rowno, row in enumerate(reader, 2):
        where = f"{csv_path}:{rowno}"
        file = root / row.get("file_identifier", "")
        if not row.get("file_identifier") or not file.is_file():
            file = root / row["repo_name"] / row["file_path"]
        if not file.is_file():
            skipped[f"file not under {root}"] += 1
            continue
        text = file.read_text(encoding="utf-8", errors="replace")
        secret = row["secret"]
        if secret.startswith("[") and secret.endswith("]"):
            secret = secret[1:-1]  # exported wrapped in brackets
        try:
            line, column = int(row["start_line"]), int(row["start_column"])
            label = parse_label(row["label"], where)
        except ValueError as e:
            raise InputError(f"{where}: bad SecretBench row: {e}") from e
        start = _position(text, line, column)
        if start is None:
            skipped["line or column past the end of its file"] += 1
            continue
        if text[start : start + len(secret)] != secret:
            skipped["secret not at its line and column"] += 1
            continue
        end = start + len(secret)
        out.append(
            SecretRecord(
                id=row["id"],
                text=text,
                start=start,
                end=end,
                label=label,
                language=_language(row.get("file_type", ""), row["file_path"]),
                category=row.get("category", ""),
                repo=row["repo_name"],
                file=row["file_path"],
            )
        )
    return skipped


def _position(text: str, line: int, column: int) -> int | None:
    """The character offset of a 1-based line and column, or None where the file has no
    such line or the column lies past the end of the text (a row of another version of the
    file: counted as skipped, never fatal)."""
    try:
        at = offset(text, line, column)
    except ValueError:
        return None
    return at if 0 <= at <= len(text) else None


def in_languages(records: Sequence[SecretRecord], languages: Sequence[str]) -> list[SecretRecord]:
    """The records in ``languages``, spelt either way (SecretBench's ``js``, ``cs``, ``cpp`` or
    this project's ``javascript``, ``c#``, ``c++``): the study's seven-language subset."""
    wanted = {language_name(lang) for lang in languages}
    return [r for r in records if language_name(r.language) in wanted]


def sample(records: Sequence[SecretRecord], size: int | None, seed: int = 0) -> list[SecretRecord]:
    """``size`` records drawn without replacement, in their order (None: all of them): a quick
    run's small, seeded share of a dataset."""
    if size is None or size >= len(records):
        return list(records)
    if size < 1:
        raise ValueError(f"a sample of {size} records: give at least 1 (or None for all)")
    keep = sorted(random.Random(seed).sample(range(len(records)), size))
    return [records[i] for i in keep]
