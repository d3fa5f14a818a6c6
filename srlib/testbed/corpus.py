"""Text that is on every machine, for training small models offline: the Python standard
library's own source files (real code, written by many people over decades)."""

from __future__ import annotations

import random

from srlib.localfiles import python_files, read_texts


def python_sources(max_chars: int = 2_000_000, seed: int = 0, min_chars: int = 500) -> list[str]:
    """Standard-library ``.py`` files (tests excluded) in a seeded random order, up to
    ``max_chars`` characters in all."""
    files = python_files(("stdlib",), exclude_parts=("test", "idlelib"))
    if not files:
        raise FileNotFoundError("no Python sources in the standard library folder")
    random.Random(seed).shuffle(files)
    texts, total = [], 0
    for _, text in read_texts(files):
        if len(text) < min_chars:
            continue
        texts.append(text[: max_chars - total])
        total += len(texts[-1])
        if total >= max_chars:
            break
    return texts
