"""Where a chapter runs: the project's folder, whichever runner started its kernel.

A chapter names its inputs and caches relative to the project (``.srlib-cache/testbed``,
``examples/detectors.py``). ``srlib book`` starts each kernel there; JupyterLab starts it in the
notebook's own folder (``notebooks/``, or ``book/_executed/`` for an executed copy), where the same
names would point at nothing, and a chapter would train again what the book has cached. So each
chapter calls ``at_project_root()`` after its imports: every runner then reads and writes the
same files.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

MARKER = "runs.yml"
"""The file that marks the project's folder: the book's runs file, at its root."""


def project_root(start: str | Path | None = None) -> Path | None:
    """The nearest folder at or above ``start`` (the working directory) that holds ``MARKER``;
    ``None`` when there is none (a chapter copied into a folder of one's own)."""
    here = Path(start or Path.cwd()).resolve()
    return next((p for p in (here, *here.parents) if (p / MARKER).is_file()), None)


def at_project_root(start: str | Path | None = None) -> Path:
    """Make the project's folder (``project_root``) the working directory and return it. Where
    there is none (a chapter run from a folder of one's own), the working directory stays, its
    relative names are read from it, and a warning says so: caches made there are not the
    book's."""
    root = project_root(start)
    if root is None:
        warnings.warn(
            f"no {MARKER} in {Path(start or Path.cwd()).resolve()} or above it: this chapter "
            "reads and writes its relative paths (caches included) here, not in the book's "
            "folder",
            stacklevel=2,
        )
    elif root != Path.cwd().resolve():
        os.chdir(root)
    return Path.cwd()
