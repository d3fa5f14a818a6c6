"""The duplication study's costs, side by side in one run on one offline corpus: the frozen
encoder's embedding throughput (contexts/s, all-MiniLM-L6-v2 by default) at the study's
token budget, and the Random Forest's time per fold with and without the differential-
evolution search (the mixed scenario's fold 0, the ``cpu`` profile's budget), and the search
as it was (sparse features, the chosen forest fitted again) against as it is (dense features,
the search's own forest kept): seconds of each and whether parameters and predictions agree.

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
    test = idx["test"]
    _, fixed_s = timed(lambda: RandomForestDE(params=tuned.params).fit(data, train, val))
    options = dict(seed=config.seed, max_trees=config.rf_max_trees, max_share=config.rf_max_share)
    options |= dict(max_tfidf=config.rf_max_tfidf, n_jobs=1)
    budget = (config.rf_maxiter, config.rf_popsize)

    def before() -> RandomForestDE:
        """Sparse features; the search's best parameters fitted once more."""
        found = RandomForestDE(*budget, dense_cells=0, **options).fit(data, train, val)
        again = RandomForestDE(params=found.params, dense_cells=0, **options)
        return again.fit(data, train, val)

    old, old_s = timed(before)
    new, new_s = timed(lambda: RandomForestDE(*budget, **options).fit(data, train, val))
    same = (old.predict(data, test) == new.predict(data, test)).all()
    print(
        f"the search, one thread: sparse and refitted {old_s:.1f} s, dense and kept {new_s:.1f} s "
        f"({new_s / old_s:.2f} of the time); same parameters: {old.params == new.params}, "
        f"same test predictions: {bool(same)}"
    )
    print(
        f"Random Forest, mixed fold 0 ({len(train):,} training samples): with DE "
        f"(maxiter {config.rf_maxiter}, popsize {config.rf_popsize}) {tuned_s:.1f} s, with "
        f"the found parameters {fixed_s:.1f} s ({tuned_s / fixed_s:.0f}x); {tuned.params}"
    )
