"""General training text from the pinned sources, decontaminated against the benchmarks.

The documents are the members of the locked source distributions (``testbed.sources``):
**code** (``.py`` files) and **natural-language text** (their documentation), in a
canonical order (sources as the lock lists them, members sorted), exact-deduplicated
(identical content kept once), cut to ``MAX_DOC_CHARS``, and every document that overlaps a
benchmark or calibration sample by ``duplication.dedup.overlap``'s rules (verbatim, a
near-duplicate function, or one shared 13-token run) is removed, with the reason recorded.
The whole corpus is read, so it depends on the lock and the samples only — not on how much a
run needs — and its digest can be recorded in the lock and checked on every build.

``Corpus.mixture`` draws documents for one *use* (``base``, ``cpt``, ``reference`` …) in an
order of its own: each document's rank is the hash of the use, the seed, the kind and the
document's name, so every kind and use is its own seeded stream, and adding or changing a
source only inserts or removes that source's documents in each stream. A draw can exclude
the documents earlier draws took (continued pre-training never sees base-training text).
"""

from __future__ import annotations

import hashlib
import os
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import pandas as pd

from srlib.duplication.dedup.overlap import OverlapIndex, contaminated_documents
from srlib.errors import SrlibError
from srlib.execution.progress import tqdm
from srlib.samples import Sample
from srlib.store import text_digest
from srlib.testbed import sources as sources_module
from srlib.testbed.sources import KINDS, Source

MAX_DOC_CHARS = 50_000  # longer documents are cut, so no single file dominates the mix
BATCH = 2000  # documents decontaminated at a time


@dataclass(frozen=True)
class Mixture:
    """Documents drawn for one training run: their texts, in training order, and names."""

    texts: list[str]
    documents: frozenset[str] = field(default_factory=frozenset)

    @property
    def chars(self) -> int:
        """Characters in all."""
        return sum(len(t) for t in self.texts)


def rank(use: str, seed: int, kind: str, name: str) -> bytes:
    """A document's place in the stream of one use, seed and kind: a hash, so it does not
    depend on which other documents exist."""
    return hashlib.sha256(f"{use}\0{seed}\0{kind}\0{name}".encode()).digest()


@dataclass
class Corpus:
    """Decontaminated documents ``(name, text)`` of each kind, and what was left out."""

    code: list[tuple[str, str]]
    text: list[tuple[str, str]]
    report: pd.DataFrame  # per kind: files read, duplicates, removed by reason, kept, chars
    removed: pd.DataFrame  # one row per removed document: kind, document, reason, samples
    sources: pd.DataFrame = field(default_factory=pd.DataFrame)  # per source: licence, sizes
    check: dict = field(default_factory=dict)  # how it compared with the lock (``verify``)

    def listing(self) -> list[tuple[str, str, str]]:
        """``(kind, name, content digest)`` of every document, in corpus order."""
        return [
            (kind, name, hashlib.sha256(text.encode("utf-8")).hexdigest()[:16])
            for kind in KINDS
            for name, text in getattr(self, kind)
        ]

    def digest(self) -> str:
        """The digest of the ordered corpus: every document's kind, name and content."""
        return text_digest(["\t".join(row) for row in self.listing()])

    def mixture(
        self,
        chars: int,
        code_to_text: float,
        seed: int = 0,
        use: str = "base",
        exclude: Mixture | Iterable[Mixture] = (),
    ) -> Mixture:
        """``chars`` characters of documents, a share ``code_to_text`` of them code, drawn in
        the stream of ``use`` and ``seed`` and shuffled by them, leaving out the documents of
        ``exclude`` (so two runs get disjoint text); too little text is an error saying how
        much there was."""
        if not 0 <= code_to_text <= 1:
            raise ValueError(f"code_to_text must be in [0, 1], got {code_to_text}")
        mixes = [exclude] if isinstance(exclude, Mixture) else list(exclude)
        taken = frozenset().union(*(m.documents for m in mixes))
        out, names = [], set()
        for kind, want in (("code", chars * code_to_text), ("text", chars * (1 - code_to_text))):
            docs = [d for d in getattr(self, kind) if d[0] not in taken]
            docs.sort(key=lambda d, k=kind: rank(use, seed, k, d[0]))
            got = 0
            for name, text in docs:
                if got >= want:
                    break
                out.append(text[: int(want - got) + 1])
                names.add(name)
                got += len(out[-1])
            if got < want:
                raise ValueError(
                    f"the corpus ran out of {kind}: {got:,} of {int(want):,} characters for "
                    f"{use!r} (seed {seed}) beside {len(taken)} documents already drawn; "
                    "ask for fewer characters or add a source to the lock"
                )
        random.Random(f"{use}:{seed}").shuffle(out)
        return Mixture(out, frozenset(names))


class CorpusChanged(SrlibError):
    """The corpus built here is not the one the lock records; names the first difference."""


ALLOW_ENV = "SRLIB_ALLOW_CORPUS_CHANGE"  # "1": a differing corpus is reported, not an error


def first_difference(here: list[tuple], locked: list[tuple]) -> str:
    """Where two document listings ``(kind, name, digest)`` part, first in corpus order."""
    for i, (a, b) in enumerate(zip(here, locked, strict=False)):
        if a != b:
            if a[:2] == b[:2]:
                return f"{a[0]} document {i} {a[1]} has other content ({a[2]} vs {b[2]} locked)"
            return f"{a[0]} document {i} is {a[1]} here, {b[1]} ({b[0]}) in the lock"
    if len(here) > len(locked):
        return f"{here[len(locked)][1]} is here and not in the lock"
    return f"{locked[len(here)][1]} is in the lock and not here"


def verify(corpus: Corpus, key: str, allow: bool | None = None, lock=None) -> dict:
    """Compare ``corpus`` with the digest the lock records for ``key``: ``status`` is
    ``matches``, ``not recorded`` (a configuration of the user's own) or ``differs``; a
    difference is an error naming the first differing document unless ``allow`` (default:
    ``SRLIB_ALLOW_CORPUS_CHANGE=1``), when it is returned for the appendix to say."""
    got = corpus.digest()
    out = {"corpus": key, "digest": got, "status": "not recorded", "first difference": ""}
    found = sources_module.recorded(key, lock)
    if found is None:
        return out
    entry, listing = found
    if entry["digest"] == got:
        return out | {"status": "matches"}
    where = first_difference(corpus.listing(), listing)
    allow = os.environ.get(ALLOW_ENV) == "1" if allow is None else allow
    if not allow:
        raise CorpusChanged(
            f"the training corpus {key} differs from the lock's ({got[:16]} vs "
            f"{entry['digest'][:16]}): {where}; set {ALLOW_ENV}=1 (srlib book "
            "--allow-corpus-change) to go on, or `srlib corpus --record` to lock this one"
        )
    return out | {"status": "differs (allowed)", "first difference": where}


def build_corpus(
    samples: Sequence[Sample],
    sources: Sequence[Source] | None = None,
    folders: Sequence[str] | None = None,
    min_chars: int = 300,
    progress: bool = False,
) -> Corpus:
    """Every document of the locked ``sources`` (default: the lock's), deduplicated and
    decontaminated against ``samples``; archives come from ``folders`` (default
    ``SRLIB_SOURCES``), the cache, or a hash-checked download."""
    sources = list(sources if sources is not None else sources_module.read_lock()["sources"])
    kinds: dict[str, list[tuple[str, str]]] = {k: [] for k in KINDS}
    read = dict.fromkeys(KINDS, 0)
    short = dict.fromkeys(KINDS, 0)
    duplicates = dict.fromkeys(KINDS, 0)
    seen: set[bytes] = set()
    per_source = []
    for source in sources:
        path = sources_module.archive(source, folders)
        for kind, name, raw in sources_module.documents(source, path):
            read[kind] += 1
            text = raw[:MAX_DOC_CHARS]
            if len(text) < min_chars:
                short[kind] += 1
                continue
            digest = hashlib.sha256(text.encode()).digest()
            if digest in seen:
                duplicates[kind] += 1
                continue
            seen.add(digest)
            kinds[kind].append((name, text))
        per_source.append(
            {"source": source.label, "licence": source.license, "sha256": source.sha256[:16]}
        )
    removed: list[dict] = []
    reports = []
    index = OverlapIndex(samples)
    for kind in KINDS:
        kept = []
        batches = range(0, len(kinds[kind]), BATCH)
        for start in tqdm(batches, desc=f"decontaminating {kind}", disable=not progress):
            kept += _clean(kinds[kind][start : start + BATCH], index, kind, removed)
        kinds[kind] = kept
        gone = [r for r in removed if r["kind"] == kind]
        reports.append(
            {
                "kind": kind,
                "files read": read[kind],
                "too short": short[kind],
                "exact duplicates": duplicates[kind],
                **{
                    f"removed ({why})": sum(r["reason"] == why for r in gone)
                    for why in ("exact", "near", "ngram")
                },
                "kept": len(kept),
                "characters kept": sum(len(t) for _, t in kept),
            }
        )
    return Corpus(
        kinds["code"],
        kinds["text"],
        pd.DataFrame(reports).set_index("kind"),
        pd.DataFrame(removed, columns=["kind", "document", "reason", "samples", "shared_ngrams"]),
        _source_table(per_source, kinds),
    )


def _source_table(per_source: list[dict], kinds: dict[str, list]) -> pd.DataFrame:
    """Per source: its licence, hash, and the documents and characters of each kind kept."""
    table = pd.DataFrame(per_source).set_index("source")
    for kind in KINDS:
        docs = pd.DataFrame(kinds[kind], columns=["name", "text"])
        by = docs.groupby(docs.name.str.split("/").str[0]).text
        table[f"{kind} documents kept"] = by.size().reindex(table.index, fill_value=0)
        table[f"{kind} characters kept"] = by.apply(lambda t: t.str.len().sum()).reindex(
            table.index, fill_value=0
        )
    return table


def _clean(batch, index: OverlapIndex, kind, removed) -> list[tuple[str, str]]:
    """``batch`` without the documents that overlap a sample (recorded in ``removed``)."""
    if not batch:
        return []
    hits = contaminated_documents(index, batch, progress=False)
    removed += [{"kind": kind, **row} for row in hits.to_dict("records")]
    bad = set(hits.document)
    return [(name, text) for name, text in batch if name not in bad]
