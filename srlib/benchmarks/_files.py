"""Finding benchmark files on disk: project data, explicit paths, the Hugging Face cache."""

from __future__ import annotations

import os
from pathlib import Path

from srlib.errors import SrlibError


class BenchmarkNotFound(SrlibError, FileNotFoundError):
    """A benchmark's files are not on this machine; the message says how to get them."""


def data_dir() -> Path:
    """The vendored data folder: inside the installed wheel, else the source checkout."""
    here = Path(__file__).resolve().parent.parent
    for candidate in (here / "_data", here.parent / "data"):
        if candidate.is_dir():
            return candidate
    raise BenchmarkNotFound(
        f"srlib's data folder is missing (looked in {here / '_data'} and {here.parent / 'data'}); "
        "reinstall srlib from its source checkout"
    )


def hf_hub_cache() -> Path:
    """The Hugging Face hub cache folder, honouring HF_HUB_CACHE and HF_HOME."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"])
    home = os.environ.get("HF_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "huggingface"
    )
    return Path(home) / "hub"


def cached_dataset_files(repo_id: str, pattern: str) -> list[Path]:
    """Files of a HF dataset repo already in the cache matching ``pattern`` (newest snapshot)."""
    root = hf_hub_cache() / ("datasets--" + repo_id.replace("/", "--")) / "snapshots"
    if not root.is_dir():
        return []
    snaps = sorted(root.iterdir(), key=lambda p: p.stat().st_mtime, reverse=True)
    for snap in snaps:
        found = sorted(snap.glob(pattern))
        if found:
            return found
    return []
