"""Near-duplicate pairs after Allamanis (2019): token set T0 and multiset T1 per item; a pair
is kept when Jaccard(T0) ≥ t0 and the multiset Jaccard Σmin/Σmax of T1 ≥ t1 (inclusive, as
the original tool). The original compares all pairs; here MinHash LSH (datasketch) proposes
candidates and every candidate is verified with the exact Jaccards, so no pair is kept that
the exhaustive method would reject. Unlike the original, matched items are not skipped, so
the result does not depend on the input order."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components


@dataclass(frozen=True)
class Fingerprint:
    """T0 (the set of tokens) and T1 (token counts) of one item."""

    t0: frozenset[str]
    t1: Counter

    @classmethod
    def of(cls, tokens: Sequence[str]) -> Fingerprint:
        """Fingerprint of a token list."""
        return cls(frozenset(tokens), Counter(tokens))


def jaccard(a: frozenset, b: frozenset) -> float:
    """``|A ∩ B| / |A ∪ B|`` (1.0 for two empty sets)."""
    union = len(a | b)
    return len(a & b) / union if union else 1.0


def multiset_jaccard(a: Counter, b: Counter) -> float:
    """Σ min(count) / Σ max(count) over all tokens (1.0 for two empty multisets)."""
    top = sum((a | b).values())
    return sum((a & b).values()) / top if top else 1.0


def is_near(a: Fingerprint, b: Fingerprint, t0: float = 0.8, t1: float = 0.7) -> bool:
    """The detector's rule, thresholds inclusive."""
    return jaccard(a.t0, b.t0) >= t0 and multiset_jaccard(a.t1, b.t1) >= t1


def exhaustive_pairs(
    fps: Sequence[Fingerprint], t0: float = 0.8, t1: float = 0.7, min_tokens: int = 1
) -> set[tuple[int, int]]:
    """Every pair (i < j) the rule keeps, by comparing all pairs: O(n²), the reference."""
    ok = [i for i, f in enumerate(fps) if len(f.t0) >= min_tokens]
    return {(i, j) for i, j in combinations(ok, 2) if is_near(fps[i], fps[j], t0, t1)}


def lsh_pairs(
    fps: Sequence[Fingerprint],
    t0: float = 0.8,
    t1: float = 0.7,
    min_tokens: int = 1,
    num_perm: int = 128,
    lsh_threshold: float = 0.5,
    seed: int = 1,
) -> tuple[set[tuple[int, int]], int]:
    """Pairs the rule keeps among MinHash LSH candidates (``lsh_threshold`` well below t0, so
    that candidates miss few true pairs), and the number of candidates verified."""
    from datasketch import MinHash, MinHashLSH

    ok = [i for i, f in enumerate(fps) if len(f.t0) >= min_tokens]
    hashes = MinHash.bulk(
        [[t.encode() for t in fps[i].t0] for i in ok], num_perm=num_perm, seed=seed
    )
    lsh = MinHashLSH(threshold=lsh_threshold, num_perm=num_perm)
    candidates: set[tuple[int, int]] = set()
    for i, h in zip(ok, hashes, strict=True):
        for j in lsh.query(h):
            candidates.add((j, i))
        lsh.insert(i, h)
    kept = {(i, j) for i, j in candidates if is_near(fps[i], fps[j], t0, t1)}
    return kept, len(candidates)


METHODS = ("lsh", "exhaustive")


def near_pairs(
    fps: Sequence[Fingerprint],
    t0: float = 0.8,
    t1: float = 0.7,
    min_tokens: int = 1,
    method: str = "lsh",
    **lsh_options,
) -> set[tuple[int, int]]:
    """The pairs the rule keeps, by ``method``: "lsh" (fast, candidates verified) or
    "exhaustive" (all pairs, the reference)."""
    if method not in METHODS:
        raise ValueError(f"method must be 'lsh' or 'exhaustive', got {method!r}")
    if method == "exhaustive":
        return exhaustive_pairs(fps, t0, t1, min_tokens)
    return lsh_pairs(fps, t0, t1, min_tokens, **lsh_options)[0]


class NearIndex:
    """Reference items (fingerprints) that other items are looked up against, by the rule
    above: MinHash LSH (datasketch) over the references proposes candidates, each verified with
    the exact Jaccards, as ``lsh_pairs`` does within one set. References and items with fewer
    than ``min_tokens`` distinct tokens are never near (short code resembles too much). ``method``
    "exhaustive" compares every reference instead: the slow reference the tests check the
    fast path against."""

    def __init__(
        self,
        refs: Sequence[Fingerprint],
        t0: float = 0.8,
        t1: float = 0.7,
        min_tokens: int = 1,
        method: str = "lsh",
        num_perm: int = 128,
        lsh_threshold: float = 0.5,
        seed: int = 1,
    ):
        if method not in METHODS:
            raise ValueError(f"method must be 'lsh' or 'exhaustive', got {method!r}")
        self.refs, self.t0, self.t1, self.method = list(refs), t0, t1, method
        self.min_tokens = min_tokens
        self.num_perm, self.seed = num_perm, seed
        self.ok = [i for i, f in enumerate(self.refs) if len(f.t0) >= min_tokens]
        self.lsh = None
        if method == "lsh" and self.ok:
            from datasketch import MinHashLSH

            self.lsh = MinHashLSH(threshold=lsh_threshold, num_perm=num_perm)
            for i, h in zip(self.ok, self._hashes([self.refs[i] for i in self.ok]), strict=True):
                self.lsh.insert(i, h)

    def _hashes(self, fps: Sequence[Fingerprint]) -> list:
        from datasketch import MinHash

        sets = [[t.encode() for t in f.t0] for f in fps]
        return MinHash.bulk(sets, num_perm=self.num_perm, seed=self.seed)

    def near(self, items: Sequence[Fingerprint]) -> list[set[int]]:
        """Per item, the references it is a near duplicate of."""
        out: list[set[int]] = [set() for _ in items]
        asked = [k for k, item in enumerate(items) if len(item.t0) >= self.min_tokens]
        if not self.ok or not asked:
            return out
        if self.method == "exhaustive":
            candidates = [self.ok for _ in asked]
        else:
            candidates = [self.lsh.query(h) for h in self._hashes([items[k] for k in asked])]
        for k, cands in zip(asked, candidates, strict=True):
            out[k] = {j for j in cands if is_near(self.refs[j], items[k], self.t0, self.t1)}
        return out


def clusters(n: int, pairs: set[tuple[int, int]]) -> np.ndarray:
    """Connected components of the pair graph: a cluster label per item (union-find)."""
    if not pairs:
        return np.arange(n)
    rows, cols = zip(*pairs, strict=True)
    graph = coo_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, n))
    return connected_components(graph, directed=False)[1]
