"""Shared test helpers."""

import pytest

from srlib.samples import Sample


def program_sample(solution: str, tests: str, entry_point: str = "f", **fields) -> Sample:
    """A small standalone sample (MBPP-shaped) for tests: a solution and assert lines."""
    base = {"id": "toy/1", "benchmark": "toy", "prompt": "", "format": "standalone"}
    return Sample(solution=solution, tests=tests, entry_point=entry_point, **{**base, **fields})


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory):
    """A small GPT-2 and BPE tokenizer trained here on HumanEval text (a few seconds)."""
    from srlib.benchmarks import load_benchmark
    from srlib.models.tiny import TinyConfig, save, tiny_gpt2, train_lm, train_tokenizer

    texts = [s.text for s in load_benchmark("humaneval")]
    tokenizer = train_tokenizer(texts, vocab_size=400)
    model = tiny_gpt2(tokenizer, TinyConfig(n_layer=2, n_head=2, n_embd=32, n_positions=96))
    train_lm(model, tokenizer, texts[:40], steps=20, batch_size=4, block_size=48)
    return save(model, tokenizer, tmp_path_factory.mktemp("tiny-model"))
