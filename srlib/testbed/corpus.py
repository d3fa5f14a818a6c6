"""Text that is on every machine, for training small models offline: the Python standard
library's own source files (real code, written by many people over decades)."""

from __future__ import annotations

import random
import sysconfig
from pathlib import Path


def python_sources(max_chars: int = 2_000_000, seed: int = 0, min_chars: int = 500) -> list[str]:
    """Standard-library ``.py`` files (tests excluded) in a seeded random order, up to
    ``max_chars`` characters in all."""
    root = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(
        p
        for p in root.rglob("*.py")
        if "test" not in p.parts and "site-packages" not in p.parts and "idlelib" not in p.parts
    )
    if not files:
        raise FileNotFoundError(f"no Python sources under {root}")
    random.Random(seed).shuffle(files)
    texts, total = [], 0
    for f in files:
        try:
            text = f.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        if len(text) < min_chars:
            continue
        texts.append(text[: max_chars - total])
        total += len(texts[-1])
        if total >= max_chars:
            break
    return texts
