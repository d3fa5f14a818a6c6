"""What a secret detector sees of a candidate: its **masked context** — the ``window``
characters before and after it with the value replaced by a *shape* token (length bucket,
character classes, entropy bucket) — and, for the Random Forest, the same shape as numbers.
The value itself never leaves ``SecretRecord``: no feature, table or figure holds it."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from srlib.duplication.secretdata import SecretRecord

NUMERIC = ("length", "entropy", "upper", "lower", "digit", "symbol", "has_word")
"""The numeric features of a candidate, each computed from its value, none revealing it."""
_WORD = re.compile(r"[a-z]{4,}", re.IGNORECASE)


def entropy(value: str) -> float:
    """Shannon entropy of the characters, in bits per character (0 for an empty value)."""
    if not value:
        return 0.0
    counts = np.array(list(Counter(value).values()), dtype=float)
    p = counts / counts.sum()
    return float(-(p * np.log2(p)).sum())


def numeric(value: str) -> list[float]:
    """``NUMERIC`` for one candidate value: length, entropy, shares of upper-case, lower-case,
    digit and other characters, and whether it holds a run of four letters."""
    n = max(len(value), 1)
    return [
        float(len(value)),
        entropy(value),
        sum(c.isupper() for c in value) / n,
        sum(c.islower() for c in value) / n,
        sum(c.isdigit() for c in value) / n,
        sum(not c.isalnum() for c in value) / n,
        float(bool(_WORD.search(value))),
    ]


def shape(value: str) -> str:
    """A token that stands for the value: ``<SECRET len=40 Aa0+ H5>`` (length to the nearest
    multiple of 8, character classes present, entropy rounded down)."""
    classes = "".join(
        mark
        for mark, test in (("A", str.isupper), ("a", str.islower), ("0", str.isdigit))
        if any(test(c) for c in value)
    )
    classes += "+" if any(not c.isalnum() for c in value) else ""
    length = 8 * round(len(value) / 8)
    return f" <SECRET len={length} {classes or '-'} H{math.floor(entropy(value))}> "


@dataclass(frozen=True)
class Dataset:
    """The inputs of every model, one row per candidate: masked contexts, numeric features,
    labels (true secret or not)."""

    texts: list[str]
    numeric: np.ndarray
    labels: np.ndarray

    def __len__(self) -> int:
        return len(self.texts)


def dataset(records: Sequence[SecretRecord], window: int = 200) -> Dataset:
    """Masked contexts and numeric features of ``records`` (values dropped here)."""
    texts, rows = [], []
    for r in records:
        c = r.context(window)
        texts.append(c.before + shape(r.secret) + c.after)
        rows.append(numeric(r.secret))
    labels = np.array([r.label for r in records], dtype=bool)
    return Dataset(texts, np.array(rows, dtype=float).reshape(-1, len(NUMERIC)), labels)
