"""The exact / near-duplicate / unique partition of a set of contexts (§II-B of the study):

- ``C_exact``: contexts identical to at least one other; ``R_exact``: one per exact group
  (its first occurrence);
- among the other contexts (``C_¬exact``), ``C_near``: those in a near-duplicate pair;
- ``C_unique``: the rest; ``C_dedup = C_unique ∪ C_near ∪ R_exact``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from srlib.duplication.contexts import Context
from srlib.duplication.neardup import Fingerprint, clusters, exhaustive_pairs, lsh_pairs
from srlib.duplication.tokens import context_tokens

PARTS = ("unique", "exact", "near")


def fingerprints(contexts: Sequence[Context | str], languages: Sequence[str] | None = None):
    """T0/T1 of each context; both sides of a Context are tokenized separately."""
    langs = languages or [""] * len(contexts)
    out = []
    for c, lang in zip(contexts, langs, strict=True):
        sides = (c.before, c.after) if isinstance(c, Context) else (c,)
        out.append(Fingerprint.of([t for side in sides for t in context_tokens(side, lang)]))
    return out


def partition(
    contexts: Sequence[Context | str],
    languages: Sequence[str] | None = None,
    t0: float = 0.8,
    t1: float = 0.7,
    min_tokens: int = 3,
    method: str = "lsh",
    **lsh_options,
) -> pd.DataFrame:
    """One row per context: ``exact_group`` (-1 if none), ``representative``,
    ``near_cluster`` (-1 if none), ``part`` (exact / near / unique) and ``dedup``
    (member of C_dedup). Contexts with fewer than ``min_tokens`` distinct identifier/literal
    tokens are too short to call near duplicates."""
    if method not in ("lsh", "exhaustive"):
        raise ValueError(f"method must be 'lsh' or 'exhaustive', got {method!r}")
    texts = [c.text if isinstance(c, Context) else c for c in contexts]
    n = len(texts)
    codes, first = pd.factorize(pd.Series(texts, dtype=object))
    counts = np.bincount(codes, minlength=len(first))
    exact = counts[codes] > 1
    seen: set[int] = set()
    representative = np.zeros(n, dtype=bool)
    for i, code in enumerate(codes):
        if exact[i] and code not in seen:
            representative[i] = True
            seen.add(code)
    rest = np.flatnonzero(~exact)
    fps = fingerprints(
        [contexts[i] for i in rest], [languages[i] for i in rest] if languages else None
    )
    if method == "exhaustive":
        pairs = exhaustive_pairs(fps, t0, t1, min_tokens)
    else:
        pairs, _ = lsh_pairs(fps, t0, t1, min_tokens, **lsh_options)
    labels = clusters(len(rest), pairs)
    in_pair = np.zeros(len(rest), dtype=bool)
    for i, j in pairs:
        in_pair[i] = in_pair[j] = True
    near_cluster = np.full(n, -1)
    near_cluster[rest[in_pair]] = labels[in_pair]
    part = np.where(exact, "exact", np.where(near_cluster >= 0, "near", "unique"))
    return pd.DataFrame(
        {
            "exact_group": np.where(exact, codes, -1),
            "representative": representative,
            "near_cluster": near_cluster,
            "part": part,
            "dedup": (part != "exact") | representative,
        }
    )


def partition_table(parts: pd.DataFrame, labels: Sequence[bool] | None = None) -> pd.DataFrame:
    """Counts and shares in the shape of the study's Tables I–II, with true secrets per part
    when ``labels`` are given; rows C_unique, C_exact, C_near, R_exact, C_dedup, total."""
    rows = {
        "C_unique": parts.part == "unique",
        "C_exact": parts.part == "exact",
        "C_near": parts.part == "near",
        "R_exact": parts.representative,
        "C_dedup": parts.dedup,
        "total": pd.Series(True, index=parts.index),
    }
    table = pd.DataFrame({"samples": {k: int(v.sum()) for k, v in rows.items()}})
    table["share"] = table.samples / len(parts)
    if labels is not None:
        y = pd.Series(np.asarray(labels, dtype=bool), index=parts.index)
        table["true secrets"] = {k: int((y & v).sum()) for k, v in rows.items()}
    return table
