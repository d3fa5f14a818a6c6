"""Overlap audit: which benchmark samples appear in a code corpus — verbatim, through long
shared n-grams, or as near duplicates of a corpus function.

- **n-gram overlap**: the share of a sample's code-token n-grams (n = 13, as in GPT-3's
  contamination check) that occur anywhere in the corpus;
- **exact**: the sample's solution, whitespace-normalised line by line, is a contiguous part
  of a corpus document (checked only in documents that share an n-gram with it);
- **near duplicate**: a corpus function (top-level ``def``/``class`` block) passes
  Allamanis's rule against the sample's solution (MinHash LSH candidates, exact check).

The corpus is any iterable of ``(name, text)``: the local one (this machine's Python sources)
by default, JSONL or parquet shards, or a Dask bag when ``client`` is given.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import pandas as pd
from tqdm import tqdm

from srlib.codetext import code_tokens
from srlib.duplication.dedup.neardup import Fingerprint, is_near
from srlib.duplication.dedup.tokens import context_tokens
from srlib.errors import InputError
from srlib.jsonl import iter_jsonl
from srlib.localfiles import python_files, read_texts
from srlib.samples import Sample

_BLOCK = re.compile(r"^(?:def|class|async def) ", re.M)


def local_corpus(max_files: int | None = None, read: bool = True) -> Iterator[tuple[str, str]]:
    """This machine's Python sources: the standard library and installed packages, as
    ``(path, text)`` (``text`` is empty when ``read`` is false)."""
    files = python_files()
    if not read:
        yield from ((str(f), "") for f in files[:max_files])
        return
    for count, (f, text) in enumerate(read_texts(files), 1):
        yield str(f), text
        if max_files is not None and count >= max_files:
            return


def shard_corpus(paths: Sequence[str | Path], field: str = "content") -> Iterator[tuple[str, str]]:
    """Documents from JSONL or parquet shards (``field`` holds the text, e.g. ``content``)."""
    for path in map(Path, paths):
        if path.suffix == ".parquet":
            frame = pd.read_parquet(path, columns=[field])
            for i, text in enumerate(frame[field]):
                yield f"{path.name}:{i}", str(text)
        else:
            for i, record in iter_jsonl(path):
                if not isinstance(record, dict) or field not in record:
                    raise InputError(f"{path}:{i}: no {field!r} field")
                yield f"{path.name}:{i}", record[field]


def _normalise(text: str) -> str:
    return "\n".join(line.strip() for line in text.splitlines() if line.strip())


def _grams(tokens: list[str], n: int) -> set[tuple[str, ...]]:
    return {tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)}


def _blocks(text: str) -> list[str]:
    starts = [m.start() for m in _BLOCK.finditer(text)] + [len(text)]
    return [text[a:b] for a, b in zip(starts, starts[1:], strict=False)]


class _Index:
    """What a corpus scan looks for: every sample's n-grams and solution fingerprint."""

    def __init__(self, samples: Sequence[Sample], n: int, t0: float, t1: float):
        self.n, self.t0, self.t1 = n, t0, t1
        self.grams = [_grams(code_tokens(s.solution), n) for s in samples]
        self.owner: dict[tuple[str, ...], list[int]] = {}
        for k, grams in enumerate(self.grams):
            for g in grams:
                self.owner.setdefault(g, []).append(k)
        self.norm = [_normalise(s.solution) for s in samples]
        self.fps = [Fingerprint.of(context_tokens(s.solution, "python")) for s in samples]


def _matches(text: str, index: _Index, min_tokens: int) -> tuple[dict[int, set], set, set]:
    """One document against the index: per sample the n-grams it shares, and the samples it
    holds verbatim or as a near-duplicate function."""
    shared: dict[int, set] = {}
    for g in _grams(code_tokens(text), index.n):
        for k in index.owner.get(g, ()):
            shared.setdefault(k, set()).add(g)
    if not shared:
        return shared, set(), set()
    norm = _normalise(text)
    blocks = [Fingerprint.of(context_tokens(b, "python")) for b in _blocks(text)]
    exact = {k for k in shared if index.norm[k] and index.norm[k] in norm}
    near = {
        k
        for k in shared
        if len(index.fps[k].t0) >= min_tokens
        and any(is_near(index.fps[k], b, index.t0, index.t1) for b in blocks)
    }
    return shared, exact, near


def _scan(documents: Iterable[tuple[str, str]], index: _Index, min_tokens: int = 10) -> dict:
    """Per sample: n-grams found, exact matches and near-duplicate matches in ``documents``."""
    found: dict[int, set] = {}
    exact: dict[int, str] = {}
    near: dict[int, str] = {}
    for name, text in documents:
        shared, verbatim, similar = _matches(text, index, min_tokens)
        for k, grams in shared.items():
            found.setdefault(k, set()).update(grams)
        for k in verbatim:
            exact.setdefault(k, name)
        for k in similar:
            near.setdefault(k, name)
    return {"found": found, "exact": exact, "near": near}


def contaminated_documents(
    samples: Sequence[Sample],
    documents: Iterable[tuple[str, str]],
    n: int = 13,
    t0: float = 0.8,
    t1: float = 0.7,
    min_tokens: int = 10,
    progress: bool = False,
) -> pd.DataFrame:
    """One row per document that overlaps any sample: ``document``, ``reason`` (the
    strongest of ``exact``, ``near``, ``ngram``: it holds a solution verbatim, a
    near-duplicate function, or shares an n-token run), the ``samples`` it overlaps and the
    number of ``shared_ngrams`` — what a decontaminated training corpus leaves out."""
    index = _Index(samples, n, t0, t1)
    rows = []
    for name, text in tqdm(documents, desc="decontaminate", disable=not progress):
        shared, exact, near = _matches(text, index, min_tokens)
        if shared:
            reason = "exact" if exact else "near" if near else "ngram"
            rows.append(
                {
                    "document": name,
                    "reason": reason,
                    "samples": sorted({samples[k].id for k in shared}),
                    "shared_ngrams": sum(len(g) for g in shared.values()),
                }
            )
    return pd.DataFrame(rows, columns=["document", "reason", "samples", "shared_ngrams"])


def _merge(parts: Iterable[dict]) -> dict:
    out: dict = {"found": {}, "exact": {}, "near": {}}
    for part in parts:
        for k, grams in part["found"].items():
            out["found"].setdefault(k, set()).update(grams)
        for key in ("exact", "near"):
            for k, name in part[key].items():
                out[key].setdefault(k, name)
    return out


def overlap_audit(
    samples: Sequence[Sample],
    documents: Iterable[tuple[str, str]] | None = None,
    n: int = 13,
    t0: float = 0.8,
    t1: float = 0.7,
    min_tokens: int = 10,
    client=None,
    npartitions: int = 16,
    progress: bool = False,
) -> pd.DataFrame:
    """One row per sample: ``ngram_overlap`` (share of its n-grams in the corpus), ``exact``
    and ``near`` (bool) with the first matching document's name (``exact_in``,
    ``near_in``). Only candidate documents sharing an n-gram are checked for exact and near
    matches, so a near duplicate with no n-token run in common is not reported; solutions
    with fewer than ``min_tokens`` distinct identifiers and literals are never called near
    duplicates (short code resembles too much)."""
    index = _Index(samples, n, t0, t1)
    documents = local_corpus() if documents is None else documents
    if client is None:
        docs = tqdm(documents, desc="corpus documents", disable=not progress)
        result = _scan(docs, index, min_tokens)
    else:
        import dask.bag as db

        bag = db.from_sequence(list(documents), npartitions=npartitions)
        parts = bag.map_partitions(lambda docs: [_scan(docs, index, min_tokens)])
        result = _merge(parts.compute(scheduler=client))
    rows = []
    for k, s in enumerate(samples):
        total = len(index.grams[k])
        rows.append(
            {
                "id": s.id,
                "benchmark": s.benchmark,
                "ngrams": total,
                "ngram_overlap": len(result["found"].get(k, ())) / total if total else float("nan"),
                "exact": k in result["exact"],
                "exact_in": result["exact"].get(k, ""),
                "near": k in result["near"],
                "near_in": result["near"].get(k, ""),
            }
        )
    return pd.DataFrame(rows)


def audit_summary(audit: pd.DataFrame, half: float = 0.5) -> pd.DataFrame:
    """Per benchmark: samples, verbatim and near-duplicate matches, samples with at least
    ``half`` of their n-grams found, and the mean n-gram overlap."""
    return audit.groupby("benchmark").agg(
        samples=("id", "size"),
        exact=("exact", "sum"),
        near=("near", "sum"),
        half_ngrams=("ngram_overlap", lambda s: int((s >= half).sum())),
        mean_ngram_overlap=("ngram_overlap", "mean"),
    )


def audit_matches(audit: pd.DataFrame, half: float = 0.5) -> pd.DataFrame:
    """The samples with a verbatim or near match, or at least ``half`` of their n-grams found."""
    found = audit[audit.exact | audit.near | (audit.ngram_overlap >= half)]
    return found[["id", "ngram_overlap", "exact", "exact_in", "near", "near_in"]]


def near_twins(
    pool: Sequence[Sample],
    evaluated: Sequence[Sample],
    t0: float = 0.8,
    t1: float = 0.7,
    min_tokens: int = 10,
) -> pd.DataFrame:
    """Which samples of ``pool`` duplicate an ``evaluated`` sample — its solution the same
    once whitespace-normalised ("exact"), or a near duplicate by Allamanis's rule on the
    solutions' code tokens ("near", the duplication study's rule, MinHash candidates
    verified): one row per pair (id, twin, reason). A calibration set must hold none of them."""
    from srlib.duplication.dedup.neardup import near_pairs

    items = list(pool) + list(evaluated)
    fps = [Fingerprint.of(code_tokens(s.solution)) for s in items]
    norm = [_normalise(s.solution) for s in items]
    pairs = near_pairs(fps, t0, t1, min_tokens)
    rows = []
    by_text: dict[str, list[int]] = {}
    for j in range(len(pool), len(items)):
        by_text.setdefault(norm[j], []).append(j)
    for i in range(len(pool)):
        for j in by_text.get(norm[i], []) if norm[i] else []:
            rows.append((items[i].id, items[j].id, "exact"))
    exact = {(a, b) for a, b, _ in rows}
    for a, b in sorted(pairs):
        i, j = min(a, b), max(a, b)
        if i < len(pool) <= j and (items[i].id, items[j].id) not in exact:
            rows.append((items[i].id, items[j].id, "near"))
    return pd.DataFrame(rows, columns=["id", "twin", "reason"])
