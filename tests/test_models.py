"""HF backend against hand computations, sliding windows, generation, the disk cache."""

import numpy as np
import pytest
import torch

from srlib.benchmarks import load_benchmark
from srlib.models.base import GenerationSettings, LanguageModel, TokenScores
from srlib.models.cache import CachedModel, DiskCache
from srlib.models.hf import HFModel, ModelNotFound, _windows


@pytest.fixture(scope="module")
def hf(tiny_model_dir):
    return HFModel(str(tiny_model_dir), batch_size=4)


@pytest.fixture(scope="module")
def texts():
    return [s.prompt[:150] for s in load_benchmark("humaneval")[:6]]


def direct(hf, text):
    """Hand computation: one forward pass, log-softmax, gather, μ and σ² by definition."""
    ids = torch.tensor([hf.encode(text)])
    with torch.no_grad():
        logp = torch.log_softmax(hf.model(input_ids=ids).logits[0, :-1].double(), -1)
    actual = logp[torch.arange(ids.shape[1] - 1), ids[0, 1:]].numpy()
    p = logp.exp()
    mu = (p * logp).sum(-1).numpy()
    var = (p * logp**2).sum(-1).numpy() - mu**2
    return actual, mu, var


def test_is_a_language_model(hf):
    assert isinstance(hf, LanguageModel) and hf.fingerprint.startswith("hf:")


def test_token_logprobs_match_hand_computation(hf, texts):
    for text, got in zip(texts, hf.token_logprobs(texts), strict=True):
        actual, mu, var = direct(hf, text)
        assert len(got.tokens) == len(hf.encode(text)) - 1
        np.testing.assert_allclose(got.logprobs, actual, atol=1e-4)
        np.testing.assert_allclose(got.mean, mu, atol=1e-4)
        np.testing.assert_allclose(got.var, var, atol=1e-3)


def test_batching_does_not_change_scores(tiny_model_dir, texts):
    one = HFModel(str(tiny_model_dir), batch_size=1).token_logprobs(texts)
    many = HFModel(str(tiny_model_dir), batch_size=6).token_logprobs(texts)
    for a, b in zip(one, many, strict=True):
        np.testing.assert_allclose(a.logprobs, b.logprobs, atol=1e-4)


def test_windows_score_every_token_once():
    for n in (1, 2, 10, 96, 97, 250, 1000):
        wins = _windows(n, 96, 48)
        scored = [p for start, end, first in wins for p in range(first, end)]
        assert scored == list(range(1, n))
        assert all(end - start <= 96 for start, end, _ in wins)


def test_long_text_is_scored_with_a_sliding_window(tiny_model_dir):
    text = "\n".join(s.prompt for s in load_benchmark("humaneval")[:3])
    small = HFModel(str(tiny_model_dir), max_length=32, stride=16)
    full = small.token_logprobs([text])[0]
    assert len(full.tokens) == len(small.encode(text)) - 1 > 96
    head = text[:110]  # within the model's own context: compare the first window directly
    np.testing.assert_allclose(
        small.token_logprobs([head])[0].logprobs[:31], direct(small, head)[0][:31], atol=1e-4
    )
    assert not np.allclose(small.token_logprobs([head])[0].logprobs, direct(small, head)[0])


def test_greedy_generation_matches_argmax_decoding(hf, texts):
    out = hf.generate(texts[:2], GenerationSettings(max_new_tokens=6))
    for text, (gen,) in zip(texts[:2], out, strict=True):
        ids = hf.encode(text)
        with torch.no_grad():
            for _ in range(6):
                ids.append(int(hf.model(input_ids=torch.tensor([ids])).logits[0, -1].argmax()))
        assert gen == hf.tokenizer.decode(ids[-6:], skip_special_tokens=True)


def test_sampling_is_reproducible_with_a_seed(hf, texts):
    s = GenerationSettings(max_new_tokens=8, temperature=0.9, num_samples=3, seed=5)
    assert hf.generate(texts[:1], s) == hf.generate(texts[:1], s)
    assert len(hf.generate(texts[:1], s)[0]) == 3


def test_missing_model_is_a_clear_error(tmp_path):
    with pytest.raises(ModelNotFound, match="not a local folder"):
        HFModel(str(tmp_path / "no-such-model"))


class Flaky:
    """Delegates to a model but dies after ``fail_after`` calls (a killed run)."""

    def __init__(self, model, fail_after):
        self.model, self.fail_after, self.calls = model, fail_after, 0
        self.fingerprint = model.fingerprint

    def token_logprobs(self, texts):
        self.calls += 1
        if self.calls > self.fail_after:
            raise KeyboardInterrupt("killed")
        return self.model.token_logprobs(texts)


def test_cache_resumes_an_interrupted_run_and_rescoring_is_free(hf, texts, tmp_path):
    path = tmp_path / "cache.sqlite"
    first = CachedModel(Flaky(hf, fail_after=1), path, chunk=2, progress=False)
    with pytest.raises(KeyboardInterrupt):
        first.token_logprobs(texts)
    assert len(DiskCache(path)) == 2
    second = CachedModel(hf, path, chunk=2, progress=False)
    resumed = second.token_logprobs(texts)
    assert second.computed == len(texts) - 2
    again = CachedModel(hf, path, progress=False)
    assert [s.to_dict() for s in again.token_logprobs(texts)] == [s.to_dict() for s in resumed]
    assert again.computed == 0
    fresh = hf.token_logprobs(texts)
    for a, b in zip(resumed, fresh, strict=True):
        np.testing.assert_allclose(a.logprobs, b.logprobs)


def test_cache_keys_generation_settings(hf, texts, tmp_path):
    cached = CachedModel(hf, tmp_path / "c.sqlite", progress=False)
    a = cached.generate(texts[:2], GenerationSettings(max_new_tokens=4))
    b = cached.generate(texts[:2], GenerationSettings(max_new_tokens=5))
    assert cached.computed == 4 and a != b


def test_token_scores_validate_shapes():
    with pytest.raises(ValueError, match="shape"):
        TokenScores(["a", "b"], np.zeros(2), np.zeros(1), np.zeros(2))
