"""Where the duplication chapters' records come from, by one name: the vendored CredData
subset, the generated teaching corpus, a SecretBench CSV, a CredData checkout in its native
layout, or a JSONL record file."""

from __future__ import annotations

from pathlib import Path

from srlib.duplication.data import creddata, secretdata
from srlib.duplication.data.corpus import CorpusConfig, make_corpus
from srlib.duplication.data.secretdata import SecretRecord
from srlib.errors import InputError

NAMED = ("creddata", "offline")
FORMATS = ("records", "secretbench", "creddata")


def load_source(
    source: str | Path,
    source_format: str = "records",
    files_root: str | Path | None = None,
    size: int = 2000,
    scanned_files: int = 300,
    seed: int = 0,
) -> list[SecretRecord]:
    """``"creddata"``: the vendored real subset (``creddata.load_contexts``); ``"offline"``:
    the generated corpus (``size`` records, ``scanned_files`` real files scanned); a path:
    JSONL records (``source_format="records"``), SecretBench's CSV export
    (``"secretbench"``) with its files under ``files_root``, or the folder of a CredData
    checkout in its own layout (``"creddata"``: ``meta/*.csv`` and ``data/``)."""
    if source == "creddata":
        return creddata.load_contexts()
    if source == "offline":
        return make_corpus(CorpusConfig(size=size, scanned_files=scanned_files, seed=seed))
    if source_format not in FORMATS:
        raise InputError(f"unknown source format {source_format!r}; choose from {FORMATS}")
    if source_format == "secretbench":
        if files_root is None:
            raise InputError(f"{source}: a SecretBench CSV needs its files' folder (--files-root)")
        return secretdata.load_secretbench(source, files_root)
    if source_format == "creddata":
        if not Path(source, "meta").is_dir():
            raise InputError(f"{source}: not a CredData checkout (no meta/ folder in it)")
        return creddata.load_creddata(source)
    if not Path(source).is_file():
        raise InputError(f"no record file {source} (or name one of {', '.join(NAMED)})")
    return secretdata.load_records(source)
