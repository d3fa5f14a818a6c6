"""The exact / near-duplicate / unique partition of a set of contexts (§II-B of the study):

- ``C_exact``: contexts identical to at least one other (the same string, character for
  character: nothing is normalised); ``R_exact``: one per exact group (its first occurrence);
- among the other contexts (``C_¬exact``), ``C_near``: those in a near-duplicate pair with
  another context — another of ``C_¬exact`` or a member of an exact group (its
  representative stands for the group: identical strings have one fingerprint);
- ``C_unique``: the rest, near no other context; ``C_dedup = C_unique ∪ C_near ∪ R_exact``.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import numpy as np
import pandas as pd

from srlib.duplication.data.contexts import Context
from srlib.duplication.dedup.neardup import METHODS, Fingerprint, clusters, near_pairs
from srlib.duplication.dedup.tokens import context_tokens
from srlib.execution.progress import tqdm

PARTS = ("unique", "exact", "near")


def fingerprints(
    contexts: Sequence[Context | str],
    languages: Sequence[str] | None = None,
    progress: bool = False,
):
    """T0/T1 of each context; both sides of a Context are tokenized separately."""
    langs = languages or [""] * len(contexts)
    out = []
    pairs = zip(contexts, langs, strict=True)
    for c, lang in tqdm(pairs, total=len(contexts), desc="fingerprints", disable=not progress):
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
    progress: bool = False,
    **lsh_options,
) -> pd.DataFrame:
    """One row per context: ``exact_group`` (-1 if none), ``representative``,
    ``near_cluster`` (-1 if none), ``part`` (exact / near / unique) and ``dedup``
    (member of C_dedup). Contexts with fewer than ``min_tokens`` distinct identifier/literal
    tokens are too short to call near duplicates."""
    if method not in METHODS:
        raise ValueError(f"method must be 'lsh' or 'exhaustive', got {method!r}")
    texts = [c.text if isinstance(c, Context) else c for c in contexts]
    exact, codes, representative = exact_groups(texts)
    pool = near_pool(exact, representative)
    langs = [languages[i] for i in pool] if languages else None
    fps = fingerprints([contexts[i] for i in pool], langs, progress)
    pairs = near_pairs(fps, t0, t1, min_tokens, method, **lsh_options)
    return labelled(exact, codes, representative, pool, pairs, clusters(len(pool), pairs))


def near_pool(exact: np.ndarray, representative: np.ndarray) -> np.ndarray:
    """The contexts near pairs are looked for among: every context outside the exact groups
    and each group's representative (in index order)."""
    return np.flatnonzero(~exact | representative)


def exact_groups(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per text: in an exact group?, the group's code, and whether it is the group's first
    occurrence (its representative)."""
    codes, _ = pd.factorize(pd.Series(list(texts), dtype=object))
    exact = np.bincount(codes)[codes] > 1 if len(codes) else np.zeros(0, dtype=bool)
    first = np.zeros(len(codes), dtype=bool)
    first[np.unique(codes, return_index=True)[1]] = True
    return exact, codes, exact & first


def labelled(exact, codes, representative, pool, pairs, labels) -> pd.DataFrame:
    """The partition table from the exact stage and the near-duplicate pairs among ``pool``
    (``near_pool``; ``pairs`` index into it): a context outside the exact groups in any pair is
    near, whether its partner is another such context or an exact group's representative."""
    n = len(exact)
    in_pair = np.zeros(len(pool), dtype=bool)
    for i, j in pairs:
        in_pair[i] = in_pair[j] = True
    in_pair &= ~exact[pool]
    near_cluster = np.full(n, -1)
    near_cluster[pool[in_pair]] = labels[in_pair]
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


def partition_said(table: pd.DataFrame) -> str:
    """What a ``partition_table`` says: the shares of exact and near duplicates, and what is
    left with the exact copies removed (``C_dedup``: one representative kept per group)."""
    share = table.share
    return (
        f"Of {table.samples['total']:,} candidates, {share['C_exact']:.1%} are exact duplicates "
        f"and {share['C_near']:.1%} near duplicates of another; with the exact copies removed "
        f"(one kept per group), {table.samples['C_dedup']:,} ({share['C_dedup']:.1%}) remain."
    )


def example_pair(contexts: Sequence[Context], parts: pd.DataFrame, marker: str = "[SECRET]"):
    """Two members of the largest near-duplicate cluster (counting its ``C_near`` members), as
    HTML with the secret's place shown as ``marker`` and the second's differing tokens marked
    (no secret value appears)."""
    from srlib.codetext import highlight

    sizes = parts[parts.part == "near"].near_cluster.value_counts()
    sizes = sizes[sizes >= 2]  # a context near an exact group only is a cluster of one
    if sizes.empty:
        return "<p>No near-duplicate pair outside the exact groups.</p>"
    near = parts[parts.part == "near"]
    cluster = sizes.index[0]
    i, j = near.index[near.near_cluster == cluster][:2]
    a, b = (contexts[k].before + marker + contexts[k].after for k in (i, j))
    return (
        f"<p><b>context {i}</b></p><pre>{html.escape(a)}</pre>"
        f"<p><b>context {j}</b> (what differs is marked)</p><pre>{highlight(a, b)}</pre>"
    )
