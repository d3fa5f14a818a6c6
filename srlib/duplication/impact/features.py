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

from srlib.duplication.data.secretdata import SecretRecord

NUMERIC = ("length", "entropy", "upper", "lower", "digit", "symbol", "has_word", "known_prefix")
"""The numeric features of a candidate, each computed from its value, none revealing it."""
_WORD = re.compile(r"[a-z]{4,}", re.IGNORECASE)
KNOWN_PREFIXES = (
    "AKIA",  # AWS access key id
    "ASIA",  # AWS temporary key id
    "ghp_",  # GitHub tokens
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "glpat-",  # GitLab
    "xoxb-",  # Slack
    "xoxp-",
    "sk_live_",  # Stripe
    "AIza",  # Google API key
    "ya29.",  # Google OAuth access token
    "eyJ",  # a JWT's base64 header
    "-----BEGIN",  # PEM private keys
    "SG.",  # SendGrid
)
"""Providers' public key prefixes. Matched on at most their first four characters: datasets
that obfuscate values (CredData) keep only those."""


def entropy(value: str) -> float:
    """Shannon entropy of the characters, in bits per character (0 for an empty value)."""
    if not value:
        return 0.0
    counts = np.array(list(Counter(value).values()), dtype=float)
    p = counts / counts.sum()
    return float(-(p * np.log2(p)).sum())


def known_prefix(value: str) -> bool:
    """Whether the value starts like a provider's key (``KNOWN_PREFIXES``)."""
    return any(value.startswith(p[:4]) for p in KNOWN_PREFIXES)


def numeric(value: str) -> list[float]:
    """``NUMERIC`` for one candidate value: length, entropy, shares of upper-case, lower-case,
    digit and other characters, whether it holds a run of four letters, and whether it
    starts like a provider's key."""
    n = max(len(value), 1)
    return [
        float(len(value)),
        entropy(value),
        sum(c.isupper() for c in value) / n,
        sum(c.islower() for c in value) / n,
        sum(c.isdigit() for c in value) / n,
        sum(not c.isalnum() for c in value) / n,
        float(bool(_WORD.search(value))),
        float(known_prefix(value)),
    ]


def shape_rule(numeric_rows: np.ndarray) -> np.ndarray:
    """A detector with no training, on the candidate's shape alone: a provider's prefix, or
    at least 16 characters of at least three character classes with an entropy of at least
    3.5 bits per character. The thresholds are fixed here, not fitted: every trained model
    must beat it (and where it does well, the task is separable without context)."""
    x = np.asarray(numeric_rows, dtype=float).reshape(-1, len(NUMERIC))
    col = {name: x[:, i] for i, name in enumerate(NUMERIC)}
    classes = sum((col[c] > 0).astype(int) for c in ("upper", "lower", "digit", "symbol"))
    random_looking = (col["length"] >= 16) & (classes >= 3) & (col["entropy"] >= 3.5)
    return (col["known_prefix"] > 0) | random_looking


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
