"""The duplication study's costs, side by side in one run on one offline corpus: the frozen
encoder's embedding throughput (contexts/s, all-MiniLM-L6-v2 by default) at the study's
token budget, and the Random Forest's time per fold with and without the differential-
evolution search (the mixed scenario's fold 0, the ``cpu`` profile's budget).

Usage: ``.venv/bin/python bench/duplication_study.py [SIZE [SCANNED_FILES]]``.
"""

from __future__ import annotations

import sys
import tempfile

from _timing import timed

from srlib.duplication.data.corpus import CorpusConfig, make_corpus
from srlib.duplication.impact.classifiers import RandomForestDE
from srlib.duplication.impact.encoders import EmbeddingCache
from srlib.duplication.impact.scenarios import fold_indices
from srlib.duplication.impact.study import PROFILES, prepare

if __name__ == "__main__":
    size = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    scanned = int(sys.argv[2]) if len(sys.argv) > 2 else 300
    config = PROFILES["cpu"]
    records = make_corpus(CorpusConfig(size=size, scanned_files=scanned))
    prepared = prepare(records, config)
    texts = list(dict.fromkeys(prepared.data.texts))
    with tempfile.TemporaryDirectory() as folder:
        cache = EmbeddingCache(folder, config.encoder, config.max_length)
        _, embed_s = timed(lambda: cache.embed(texts))
        _, cached_s = timed(lambda: cache.embed(texts))
    print(
        f"frozen encoder, {len(texts):,} distinct contexts at {config.max_length} tokens: "
        f"{len(texts) / embed_s:.0f} contexts/s; from the cache {len(texts) / cached_s:.0f}/s"
    )
    idx = fold_indices(prepared.folds, "mixed", 0)
    data, train, val = prepared.data, idx["train"], idx["val"]
    tuned, tuned_s = timed(
        lambda: RandomForestDE(config.rf_maxiter, config.rf_popsize).fit(data, train, val)
    )
    _, fixed_s = timed(lambda: RandomForestDE(params=tuned.params).fit(data, train, val))
    print(
        f"Random Forest, mixed fold 0 ({len(train):,} training samples): with DE "
        f"(maxiter {config.rf_maxiter}, popsize {config.rf_popsize}) {tuned_s:.1f} s, with "
        f"the found parameters {fixed_s:.1f} s ({tuned_s / fixed_s:.0f}x); {tuned.params}"
    )
