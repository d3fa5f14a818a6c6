"""General training text that is on every machine, decontaminated against the benchmarks.

- **Code**: the Python standard library and the installed packages' sources;
- **natural-language text**: package descriptions (``METADATA``), licence, authors and
  readme files, ``.md``/``.rst`` documents of the installed packages.

Both are read in a seeded random order, exact-deduplicated (identical content kept once),
and every document that overlaps a benchmark sample (verbatim, a near-duplicate function, or
one shared 13-token run: ``duplication.overlap.contaminated_documents``) is removed, with the
reason recorded. ``Corpus.mixture`` draws a given number of characters at a given
code-to-text ratio, and continued pre-training draws after what base training used, so it
gets fresh text.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from srlib.duplication.overlap import contaminated_documents
from srlib.localfiles import python_files, read_texts, text_files
from srlib.samples import Sample

MAX_DOC_CHARS = 50_000  # longer documents are cut, so no single file dominates the mix


def _body(path: Path, text: str) -> str:
    """A package's ``METADATA`` without its header lines; other files as they are."""
    if path.name == "METADATA" and "\n\n" in text:
        return text.split("\n\n", 1)[1]
    return text


@dataclass(frozen=True)
class Mixture:
    """Documents drawn for one training run, and where in each list the draw ended."""

    texts: list[str]
    end: dict[str, int]  # next unused document index per kind

    @property
    def chars(self) -> int:
        """Characters in all."""
        return sum(len(t) for t in self.texts)


@dataclass
class Corpus:
    """Decontaminated documents ``(name, text)`` of each kind, and what was left out."""

    code: list[tuple[str, str]]
    text: list[tuple[str, str]]
    report: pd.DataFrame  # per kind: files read, duplicates, removed by reason, kept, chars
    removed: pd.DataFrame  # one row per removed document: kind, document, reason, samples

    def mixture(
        self, chars: int, code_to_text: float, seed: int = 0, after: Mixture | None = None
    ) -> Mixture:
        """``chars`` characters of documents, a share ``code_to_text`` of them code, in a
        seeded random order, starting after the documents ``after`` used (so two runs get
        disjoint text); too little text left is an error that says how much there was."""
        if not 0 <= code_to_text <= 1:
            raise ValueError(f"code_to_text must be in [0, 1], got {code_to_text}")
        start = after.end if after else {"code": 0, "text": 0}
        out, end = [], dict(start)
        for kind, want in (("code", chars * code_to_text), ("text", chars * (1 - code_to_text))):
            docs, got = getattr(self, kind), 0
            while got < want:
                if end[kind] >= len(docs):
                    raise ValueError(
                        f"the corpus ran out of {kind}: {got:,} of {int(want):,} characters "
                        f"after document {start[kind]}; ask for fewer characters"
                    )
                text = docs[end[kind]][1][: int(want - got) + 1]
                end[kind] += 1
                out.append(text)
                got += len(text)
        random.Random(seed).shuffle(out)
        return Mixture(out, end)


def build_corpus(
    samples: Sequence[Sample],
    code_chars: int,
    text_chars: int,
    seed: int = 0,
    min_chars: int = 300,
    progress: bool = False,
) -> Corpus:
    """Read at least ``code_chars`` of code and ``text_chars`` of text (after deduplication
    and decontamination against ``samples``), in an order fixed by ``seed``."""
    rng = random.Random(seed)
    kinds, reports, removed = {}, [], []
    for kind, files in (("code", python_files()), ("text", text_files())):
        rng.shuffle(files)
        want = code_chars if kind == "code" else text_chars
        docs, seen, read, duplicates, total = [], set(), 0, 0, 0
        batch: list[tuple[str, str]] = []
        for path, raw in read_texts(files):
            read += 1
            text = _body(path, raw)[:MAX_DOC_CHARS]
            digest = hashlib.sha256(text.encode()).digest()
            if len(text) < min_chars:
                continue
            if digest in seen:
                duplicates += 1
                continue
            seen.add(digest)
            batch.append((str(path), text))
            total += len(text)
            if total >= want * 1.2 or len(batch) >= 2000:
                docs += _clean(batch, samples, kind, removed, progress)
                batch = []
                total = sum(len(t) for _, t in docs)
                if total >= want:
                    break
        docs += _clean(batch, samples, kind, removed, progress)
        kinds[kind] = docs
        gone = [r for r in removed if r["kind"] == kind]
        reports.append(
            {
                "kind": kind,
                "files read": read,
                "exact duplicates": duplicates,
                **{
                    f"removed ({why})": sum(r["reason"] == why for r in gone)
                    for why in ("exact", "near", "ngram")
                },
                "kept": len(docs),
                "characters kept": sum(len(t) for _, t in docs),
            }
        )
    return Corpus(
        kinds["code"],
        kinds["text"],
        pd.DataFrame(reports).set_index("kind"),
        pd.DataFrame(removed, columns=["kind", "document", "reason", "samples", "shared_ngrams"]),
    )


def _clean(batch, samples, kind, removed, progress) -> list[tuple[str, str]]:
    """``batch`` without the documents that overlap a sample (recorded in ``removed``)."""
    if not batch:
        return []
    hits = contaminated_documents(samples, batch, progress=progress)
    removed += [{"kind": kind, **row} for row in hits.to_dict("records")]
    bad = set(hits.document)
    return [(name, text) for name, text in batch if name not in bad]
