"""Overlap audit: which benchmark samples appear in a code corpus — verbatim, through long
shared n-grams, or as near duplicates of a corpus function. Every document is checked for all
three (``_matches``):

- **n-gram overlap**: the share of a sample's n-token runs (n = 13, as in GPT-3's
  contamination check; code tokens of the text a model is scored on and of the sample's
  code, so HumanEval's signature and docstring count; runs a benchmark's format repeats in
  many samples left out: ``OverlapIndex``) that occur anywhere in the corpus;
- **exact**: a document holds a top-level block of a prompt that is code (HumanEval's
  signature and docstring) or the solution under its signature (``_pieces``; short solutions
  included), as whole consecutive lines once each line is stripped and blank lines dropped;
- **near duplicate**: a corpus function (top-level ``def``/``class`` block) passes
  Allamanis's rule against a top-level block of the sample's code (``neardup.NearIndex``:
  MinHash LSH candidates, each verified exactly). Blocks with fewer than ``min_tokens``
  distinct identifiers and literals, on either side, are never called near duplicates: a
  docstring is one token, so many a HumanEval function is too short for this rule and is
  seen by the other two. Code outside any block (a script) is checked by the other two
  only.

The corpus is any iterable of ``(name, text)``: the local one (this machine's Python sources)
by default, JSONL or parquet shards, or a Dask bag when ``client`` is given.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import pandas as pd

from srlib.codetext import code_tokens
from srlib.duplication.dedup.neardup import Fingerprint, NearIndex
from srlib.duplication.dedup.tokens import context_tokens
from srlib.errors import InputError
from srlib.execution.progress import tqdm
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
    return "\n".join(_lines(text))


def _lines(text: str) -> tuple[str, ...]:
    """The non-blank lines of ``text``, each stripped: what "verbatim" compares."""
    return tuple(line.strip() for line in text.splitlines() if line.strip())


def _grams(tokens: list[str], n: int) -> set[tuple[str, ...]]:
    return {tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)}


def _blocks(text: str) -> list[str]:
    starts = [m.start() for m in _BLOCK.finditer(text)] + [len(text)]
    return [text[a:b] for a, b in zip(starts, starts[1:], strict=False)]


def _signature(block: str) -> tuple[str, ...]:
    """The lines of a ``def``/``class`` block up to the colon that ends its header (the first
    ``:`` outside brackets), or nothing where there is none."""
    depth = 0
    for i, ch in enumerate(block):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == ":" and depth == 0:
            return _lines(block[: i + 1])
    return ()


def _pieces(sample: Sample) -> list[tuple[str, ...]]:
    """What a document must not hold verbatim: each top-level block of a prompt that is code
    (HumanEval's signature and docstring, its helper functions), and the solution — under its
    function's signature where it completes a prompt (the prompt's last block's header set
    before it: a body alone, such as one common line ``return x + y``, is no copy of the
    problem), alone where it is a whole program."""
    blocks = _blocks(sample.prompt) if sample.format == "completion" else []
    header = _signature(blocks[-1]) if blocks else ()
    solution = _lines(sample.solution)
    return [p for p in (*map(_lines, blocks), header + solution if solution else ()) if p]


def _functions(sample: Sample) -> list[str]:
    """The sample's code a corpus function may nearly duplicate: each top-level block of its
    code (prompt included when the solution completes it), or the whole code if it has none."""
    return _blocks(sample.code) or [sample.code]


class OverlapIndex:
    """What a corpus scan looks for, per sample: the n-token runs of its scored text and code
    (HumanEval's signature and docstring included) that at most ``common`` samples share — a
    run in more is the benchmark's format (MBPP's prompt template, shared imports), evidence
    of no one sample —, the pieces it must not find verbatim (``_pieces``), and its
    functions' fingerprints (a ``NearIndex``)."""

    def __init__(
        self, samples: Sequence[Sample], n: int = 13, t0: float = 0.8, t1: float = 0.7,
        min_tokens: int = 10, common: int = 10,
    ):  # fmt: skip
        self.n, self.ids = n, [s.id for s in samples]
        grams = [_grams(code_tokens(s.text), n) | _grams(code_tokens(s.code), n) for s in samples]
        owner: dict[tuple[str, ...], list[int]] = {}
        for k, each in enumerate(grams):
            for g in each:
                owner.setdefault(g, []).append(k)
        self.owner = {g: ks for g, ks in owner.items() if len(ks) <= common}
        self.grams = [{g for g in each if g in self.owner} for each in grams]
        self.starts: dict[str, list[tuple[int, tuple[str, ...]]]] = {}
        for k, s in enumerate(samples):
            for piece in _pieces(s):
                self.starts.setdefault(piece[0], []).append((k, piece))
        functions = [(k, f) for k, s in enumerate(samples) for f in _functions(s)]
        self.function_owner = [k for k, _ in functions]
        fps = [Fingerprint.of(context_tokens(f, "python")) for _, f in functions]
        self.near_index = NearIndex(fps, t0, t1, min_tokens)


def _matches(text: str, index: OverlapIndex) -> tuple[dict[int, set], set, set]:
    """One document against the index: per sample the n-grams it shares, and the samples it
    holds verbatim (a piece's lines, whole and consecutive) or as a near-duplicate function.
    Every document is checked for all three, whether or not it shares an n-gram."""
    shared: dict[int, set] = {}
    for g in _grams(code_tokens(text), index.n):
        for k in index.owner.get(g, ()):
            shared.setdefault(k, set()).add(g)
    lines = _lines(text)
    exact = {
        k
        for i, line in enumerate(lines)
        for k, piece in index.starts.get(line, ())
        if lines[i : i + len(piece)] == piece
    }
    blocks = [Fingerprint.of(context_tokens(b, "python")) for b in _blocks(text)]
    near = {index.function_owner[j] for hits in index.near_index.near(blocks) for j in hits}
    return shared, exact, near


def _scan(documents: Iterable[tuple[str, str]], index: OverlapIndex) -> dict:
    """Per sample: n-grams found, exact matches and near-duplicate matches in ``documents``."""
    found: dict[int, set] = {}
    exact: dict[int, str] = {}
    near: dict[int, str] = {}
    for name, text in documents:
        shared, verbatim, similar = _matches(text, index)
        for k, grams in shared.items():
            found.setdefault(k, set()).update(grams)
        for k in verbatim:
            exact.setdefault(k, name)
        for k in similar:
            near.setdefault(k, name)
    return {"found": found, "exact": exact, "near": near}


def contaminated_documents(
    samples: Sequence[Sample] | OverlapIndex,
    documents: Iterable[tuple[str, str]],
    n: int = 13,
    t0: float = 0.8,
    t1: float = 0.7,
    min_tokens: int = 10,
    progress: bool = False,
) -> pd.DataFrame:
    """One row per document that overlaps any sample: ``document``, ``reason`` (the
    strongest of ``exact``, ``near``, ``ngram``: it holds a piece of a sample verbatim, a
    near-duplicate function, or shares an n-token run — ``_matches`` says what each is), the
    ``samples`` it overlaps and the number of ``shared_ngrams``: what a decontaminated
    training corpus leaves out. ``samples`` may be an ``OverlapIndex`` built once for many
    calls (its own ``n``, ``t0``, ``t1`` and ``min_tokens`` then apply, not these)."""
    index = samples if isinstance(samples, OverlapIndex) else OverlapIndex(
        samples, n, t0, t1, min_tokens
    )  # fmt: skip
    ids = index.ids
    rows = []
    for name, text in tqdm(documents, desc="decontaminate", disable=not progress):
        shared, exact, near = _matches(text, index)
        if shared or exact or near:
            reason = "exact" if exact else "near" if near else "ngram"
            rows.append(
                {
                    "document": name,
                    "reason": reason,
                    "samples": sorted({ids[k] for k in (*shared, *exact, *near)}),
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
    ``near_in``), by the module's three rules."""
    index = OverlapIndex(samples, n, t0, t1, min_tokens)
    documents = local_corpus() if documents is None else documents
    if client is None:
        docs = tqdm(documents, desc="corpus documents", disable=not progress)
        result = _scan(docs, index)
    else:
        import dask.bag as db

        bag = db.from_sequence(list(documents), npartitions=npartitions)
        parts = bag.map_partitions(lambda docs: [_scan(docs, index)])
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
