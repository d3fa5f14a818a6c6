"""A disk cache of model outputs keyed by (model fingerprint, settings, text): re-running a
notebook re-scores nothing, and a run killed midway resumes where it stopped (SQLite, one
committed transaction per batch, so an interruption loses at most the batch in flight)."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable, Sequence
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

from srlib.costs import costed
from srlib.errors import CacheError, NotBuilt
from srlib.execution.progress import tqdm
from srlib.models.base import GenerationSettings, TokenScores
from srlib.store import digest


class DiskCache:
    """A key-value store of JSON values in one SQLite file, safe across threads."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        with self._errors():
            self._db = sqlite3.connect(self.path, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("CREATE TABLE IF NOT EXISTS cache (key TEXT PRIMARY KEY, value TEXT)")
            self._db.execute("SELECT key, value FROM cache LIMIT 1").fetchall()
            self._db.commit()

    @contextmanager
    def _errors(self):
        """Report a damaged or foreign file as a ``CacheError`` naming it."""
        try:
            yield
        except sqlite3.DatabaseError as e:
            raise CacheError(
                f"{self.path}: not a readable score cache ({e}); delete it to start afresh "
                "or pass another cache path"
            ) from e

    @staticmethod
    def key(*parts: Any) -> str:
        """A stable key for any JSON-serialisable parts."""
        return digest(*parts, length=64)

    def get_many(self, keys: Sequence[str]) -> dict[str, Any]:
        """The cached values among ``keys``."""
        out = {}
        with self._lock, self._errors():
            for i in range(0, len(keys), 500):
                chunk = list(keys[i : i + 500])
                marks = ",".join("?" * len(chunk))
                rows = self._db.execute(
                    f"SELECT key, value FROM cache WHERE key IN ({marks})", chunk
                )
                out.update((k, json.loads(v)) for k, v in rows)
        return out

    def put_many(self, items: dict[str, Any]) -> None:
        """Store values and commit (one transaction); a key already stored keeps its value
        (another process computed it first: every reader gets that one)."""
        with self._lock, self._errors():
            self._db.executemany(
                "INSERT OR IGNORE INTO cache VALUES (?, ?)",
                [(k, json.dumps(v)) for k, v in items.items()],
            )
            self._db.commit()

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM cache").fetchone()[0]


class CachedModel:
    """Wrap a model so that every score and generation is computed once, in batches of
    ``chunk`` texts that are committed as they finish (with a progress bar). Where a model's
    scores move with the batch a text is scored in (``batch_size`` > 1), a value is the one
    the first request that computed it got; a request that overlaps another's texts in part,
    and may run beside it, takes a ``namespace`` of its own so that neither's numbers depend
    on which ran first. A model that scores each text alone (``batch_size`` 1) gives a text
    the same scores in any request, so its scores are shared across namespaces (the
    sensitivity chapter's n = ``n_max`` request re-scored the detection chapter's texts).
    Generations are keyed by their whole request (``generate``)."""

    def __init__(
        self,
        model,
        cache: DiskCache | str | Path,
        chunk: int = 64,
        progress: bool = True,
        namespace: str = "",
        read_only: bool = False,
    ):
        self.model = model
        self.cache = cache if isinstance(cache, DiskCache) else DiskCache(cache)
        self.fingerprint = model.fingerprint
        self.namespace = namespace  # values are shared only with wrappers of the same one
        self.alone = getattr(model, "batch_size", None) == 1  # a text's scores: its own
        self.read_only = read_only  # a value not cached is ``NotBuilt``, never computed
        self.chunk, self.progress = chunk, progress
        self.computed = 0  # items computed (not served from the cache) by this wrapper

    def token_logprobs(self, texts: list[str]) -> list[TokenScores]:
        """Cached ``token_logprobs``."""
        values = self._cached(
            texts,
            ("logprobs/f32",),
            lambda xs: [s.to_dict(compact=True) for s in self.model.token_logprobs(xs)],
            shared=self.alone,
        )
        return [TokenScores.from_dict(v) for v in values]

    def generate(self, prompts: list[str], settings: GenerationSettings) -> list[list[str]]:
        """Cached ``generate``, keyed by the settings and by the request's set of prompts:
        prompts decode in padded batches whose partners move the last bits (enough to turn a
        greedy token), so a continuation is the one its whole request gets, never one an
        overlapping request made first, whichever chapter ran first. The batches follow the
        request's order in chunks: callers that ask for one set ask in one order."""
        key = ("generate", settings.__dict__, digest(sorted(set(prompts))))
        return self._cached(prompts, key, lambda xs: self.model.generate(xs, settings))

    def _cached(
        self, items: list[str], what: tuple, compute: Callable[[list[str]], list], shared=False
    ) -> list:
        """``compute`` of the items not cached yet, in this wrapper's namespace (``shared``:
        in every namespace's)."""
        apart = self.namespace and not shared
        scope = (self.fingerprint, self.namespace) if apart else (self.fingerprint,)
        keys = [DiskCache.key(*scope, what, x) for x in items]
        have = self.cache.get_many(keys)
        todo = {k: x for k, x in zip(keys, items, strict=True) if k not in have}
        if todo and self.read_only:
            raise NotBuilt(
                f"{len(todo)} of {len(keys)} {what[0]} calls of model {self.fingerprint[:16]} were "
                "never made, and this model is opened for reading only"
            )
        order = list(todo)
        bar = tqdm(
            total=len(order),
            desc=f"{what[0]} ({self.fingerprint[:24]})",
            disable=not self.progress or not order,
        )
        cost = costed(
            self.cache.path.parent,  # the ledger beside the cache: one line per computed set
            self.cache.path,
            f"model calls: {what[0]}",
            part=f"{what[0]} {digest(order)}",
        )
        with cost if order else nullcontext():
            for i in range(0, len(order), self.chunk):
                batch = order[i : i + self.chunk]
                results = compute([todo[k] for k in batch])
                self.cache.put_many(dict(zip(batch, results, strict=True)))
                have.update(self.cache.get_many(batch))  # the stored value, whoever stored it
                self.computed += len(batch)
                bar.update(len(batch))
        bar.close()
        return [have[k] for k in keys]
