"""The near-duplicate partition on Dask, for corpora that outgrow one machine.

Stages (as datatrove and BigCode run MinHash dedup): tokens, fingerprints and MinHash
signatures per item; LSH banding, with datasketch's band layout, into buckets; candidate
pairs from the buckets; exact Jaccard verification of each candidate. All four run as Dask
bag tasks; exact grouping and union-find (linear in the corpus) run on the client. Because
bands, signatures (same seed) and verification are the same as ``partition(method="lsh")``,
the result is identical to the single-process one.

Point it at a real cluster with ``client=distributed.Client("tcp://scheduler:8786")``; the
workers need srlib installed. Without a client, Dask's default scheduler runs locally.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

import pandas as pd

from srlib.duplication.data.contexts import Context
from srlib.duplication.dedup.neardup import Fingerprint, clusters, is_near
from srlib.duplication.dedup.partition import exact_groups, fingerprints, labelled, near_pool


def _signatures(items, num_perm: int, seed: int, min_tokens: int):
    from datasketch import MinHash

    out = []
    for i, context, lang in items:
        (fp,) = fingerprints([context], [lang])
        if len(fp.t0) < min_tokens:
            continue
        m = MinHash(num_perm=num_perm, seed=seed)
        m.update_batch([t.encode() for t in fp.t0])
        out.append((i, fp, m.hashvalues))
    return out


def _bucket_keys(sig, b: int, r: int):
    """(band id + band's hash values as bytes, item): items sharing a key are candidates."""
    i, _, hv = sig
    return [
        (band.to_bytes(4, "little") + hv[band * r : (band + 1) * r].tobytes(), i)
        for band in range(b)
    ]


def _pairs(bucket, n: int):
    """Candidate pairs of one bucket, each encoded as the int i·n + j (i < j): hashable
    through any serialisation (tuples come back as lists from the workers)."""
    _, members = bucket
    return [i * n + j for i, j in combinations(sorted(set(members)), 2)]


def _verify(codes, fps: dict[int, Fingerprint], t0: float, t1: float, n: int):
    pairs = (divmod(c, n) for c in codes)
    return [(i, j) for i, j in pairs if is_near(fps[i], fps[j], t0, t1)]


def partition_dask(
    contexts: Sequence[Context | str],
    languages: Sequence[str] | None = None,
    t0: float = 0.8,
    t1: float = 0.7,
    min_tokens: int = 3,
    num_perm: int = 128,
    lsh_threshold: float = 0.5,
    seed: int = 1,
    npartitions: int = 8,
    client=None,
) -> pd.DataFrame:
    """``partition(contexts, method="lsh")`` computed with Dask (same columns, same result)."""
    import dask
    import dask.bag as db
    from datasketch import MinHashLSH

    texts = [c.text if isinstance(c, Context) else c for c in contexts]
    exact, codes, representative = exact_groups(texts)
    pool = near_pool(exact, representative)
    langs = languages or [""] * len(contexts)
    items = [(k, contexts[i], langs[i]) for k, i in enumerate(pool)]
    lsh = MinHashLSH(threshold=lsh_threshold, num_perm=num_perm)
    sigs = db.from_sequence(items, npartitions=npartitions).map_partitions(
        _signatures, num_perm, seed, min_tokens
    )
    candidates = (
        sigs.map(_bucket_keys, lsh.b, lsh.r)
        .flatten()
        .groupby(lambda kv: kv[0])
        .map(lambda group: (group[0], [i for _, i in group[1]]))
        .map(_pairs, len(pool) or 1)
        .flatten()
        .distinct()
    )
    fps = sigs.map(lambda s: (s[0], s[1]))
    fp_table = dask.delayed(dict)(fps)
    verified = candidates.repartition(npartitions).map_partitions(
        _verify, fp_table, t0, t1, len(pool) or 1
    )
    found = verified.compute(scheduler=client) if client is not None else verified.compute()
    pairs = {(int(i), int(j)) for i, j in found}
    labels = clusters(len(pool), pairs)
    return labelled(exact, codes, representative, pool, pairs, labels)
