"""Finding benchmark files on disk: the project's data folder (the Hugging Face cache is
``hf.snapshot``'s)."""

from __future__ import annotations

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
