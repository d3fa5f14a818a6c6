"""The suite's costly inputs, each built by one function into a folder: the quick book's
process builds them ahead of time while the first tests run (``quickbook.py``), and a
fixture builds its own only when that process is not running (``conftest.py``). Every
builder is deterministic, so either way the tests see the same thing."""

from __future__ import annotations

import pickle
from pathlib import Path


def small_model(folder, texts, tokenizer_texts, vocab, n_embd, n_positions, **settings) -> Path:
    """A two-layer GPT-2 trained on ``texts`` with the library's one training recipe."""
    from srlib.models.tiny import TinyConfig
    from srlib.testbed.train import TrainSettings, train_model

    size = TinyConfig(vocab, n_layer=2, n_head=2, n_embd=n_embd, n_positions=n_positions)
    return train_model(texts, folder, TrainSettings(model=size, **settings), tokenizer_texts).path


def tiny(folder: Path) -> Path:
    """A small GPT-2 and BPE tokenizer trained on HumanEval text (a few seconds)."""
    from srlib.benchmarks import load_benchmark

    texts = [s.text for s in load_benchmark("humaneval")]
    settings = {"steps": 20, "batch_size": 4, "block_size": 48}
    return small_model(folder, texts[:40], texts, 400, 32, 96, **settings)


def memorised(folder: Path) -> Path:
    """A tiny model trained on HumanEval/2 and /3 until it knows them by heart."""
    from srlib.benchmarks import load_benchmark

    samples = load_benchmark("humaneval")
    leaked = [samples[2].text, samples[3].text] * 20
    settings = {"steps": 150, "block_size": 192, "lr": 5e-3}
    return small_model(folder, leaked, [s.text for s in samples], 500, 64, 256, **settings)


def study_records(folder: Path) -> Path:
    """The duplication study's small offline corpus (600 records, 40 scanned files)."""
    from srlib.duplication.corpus import CorpusConfig, make_corpus

    folder.mkdir(parents=True, exist_ok=True)
    file = folder / "records.pkl"
    file.write_bytes(pickle.dumps(make_corpus(CorpusConfig(size=600, scanned_files=40, seed=3))))
    return file


BUILDERS = {"tiny": tiny, "memorised": memorised, "study-records": study_records}
"""Name → builder (folder → the path the fixture uses)."""
