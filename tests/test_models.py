"""HF backend against hand computations, sliding windows, generation, the disk cache."""

import numpy as np
import pytest
import torch

from srlib.benchmarks import load_benchmark
from srlib.codetext import code_tokens, code_tokens_settled
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


def test_a_text_scored_alone_has_the_same_bits_whatever_is_scored_with_it(tiny_model_dir, texts):
    """With ``batch_size=1`` (the CPU profiles') a text's scores are a function of the model and
    the text: the same bits in any request, in any order, beside any other texts."""
    model = HFModel(str(tiny_model_dir), batch_size=1)
    alone = model.token_logprobs(texts[2:3])[0]
    for request in (texts, texts[::-1], texts[2:] + texts[:1]):
        scored = dict(zip(request, model.token_logprobs(request), strict=True))[texts[2]]
        for field in ("logprobs", "mean", "var"):
            assert np.array_equal(getattr(scored, field), getattr(alone, field)), field


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
    with pytest.raises(ModelNotFound, match="no-such-model: no such model folder"):
        HFModel(str(tmp_path / "no-such-model"))
    with pytest.raises(ModelNotFound, match="not a model"):
        HFModel(str(tmp_path))
    with pytest.raises(ModelNotFound, match="not a local folder nor in the Hugging Face cache"):
        HFModel("srlib-tests/no-such-model")


def test_generation_leaves_global_rng_and_tokenizer_alone(hf, texts, monkeypatch):
    torch.manual_seed(123)
    state = torch.get_rng_state()
    sampled = GenerationSettings(max_new_tokens=4, temperature=0.9, seed=7)
    first = hf.generate(texts[:1], sampled)
    assert torch.equal(torch.get_rng_state(), state)
    assert hf.generate(texts[:1], sampled) == first  # seeded all the same
    sides = hf.tokenizer.padding_side, hf.tokenizer.truncation_side

    def fails(**_):
        raise RuntimeError("generation failed")

    monkeypatch.setattr(hf.model, "generate", fails)
    with pytest.raises(RuntimeError, match="generation failed"):
        hf.generate(texts[:1], sampled)
    assert (hf.tokenizer.padding_side, hf.tokenizer.truncation_side) == sides
    assert torch.equal(torch.get_rng_state(), state)


def test_cache_tells_checkpoints_apart_by_content_not_folder_name(tmp_path):
    from srlib.models.tiny import TinyConfig, save, tiny_gpt2, train_tokenizer

    texts = [s.text for s in load_benchmark("humaneval")[:20]]
    tok = train_tokenizer(texts, 300)
    net = tiny_gpt2(tok, TinyConfig(n_layer=6, n_head=2, n_embd=128, n_positions=128))
    folder = tmp_path / "checkpoint"
    save(net, tok, folder)
    weights = folder / "model.safetensors"
    size = weights.stat().st_size
    assert size > 4 << 20  # the changed layer lies past the first and before the last MiB
    cache = tmp_path / "scores.sqlite"
    base = CachedModel(HFModel(str(folder)), cache, progress=False)
    before = base.token_logprobs(texts[:2])
    with torch.no_grad():
        net.transformer.h[3].mlp.c_fc.weight[:4] += 5.0  # a middle layer only
    save(net, tok, folder)  # the same folder, a file of the same size
    assert weights.stat().st_size == size
    tuned = HFModel(str(folder))
    assert tuned.fingerprint != base.fingerprint
    cached = CachedModel(tuned, cache, progress=False)
    after = cached.token_logprobs(texts[:2])
    assert cached.computed == 2
    np.testing.assert_allclose(after[0].logprobs, tuned.token_logprobs(texts[:1])[0].logprobs)
    assert not np.allclose(after[0].logprobs, before[0].logprobs)
    assert HFModel(str(folder), max_length=64).fingerprint != tuned.fingerprint
    assert HFModel(str(folder), stride=16).fingerprint != tuned.fingerprint


def test_weights_are_hashed_once_until_they_change(tmp_path, monkeypatch):
    import os

    from srlib.models import digest

    monkeypatch.setenv("SRLIB_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(digest, "_MEMO", {})
    calls = []
    real = digest.sha256_file
    monkeypatch.setattr(digest, "sha256_file", lambda p: calls.append(p) or real(p))
    f = tmp_path / "w.bin"
    f.write_bytes(b"a" * 1000)
    first = digest.file_digest(f)
    monkeypatch.setattr(digest, "_MEMO", {})  # a new process: the memo file remembers
    assert digest.file_digest(f) == first and len(calls) == 1
    f.write_bytes(b"b" * 1000)
    os.utime(f, ns=(1, 1))
    assert digest.file_digest(f) != first and len(calls) == 2


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
        np.testing.assert_allclose(a.logprobs, b.logprobs, rtol=1e-6)


def test_cache_keys_generation_settings(hf, texts, tmp_path):
    cached = CachedModel(hf, tmp_path / "c.sqlite", progress=False)
    a = cached.generate(texts[:2], GenerationSettings(max_new_tokens=4))
    b = cached.generate(texts[:2], GenerationSettings(max_new_tokens=5))
    assert cached.computed == 4 and a != b


class PartnerMinded:
    """A backend whose continuation of a prompt names the prompts decoded beside it."""

    fingerprint = "partner-minded"

    def generate(self, prompts, settings):
        return [[f"{p} beside {sorted(set(prompts) - {p})}"] for p in prompts]


def test_a_continuation_is_its_whole_requests_whatever_ran_first(tmp_path):
    """Batch partners move the last bits of a decoding: a request overlapping an earlier one
    gets what it gets alone, not the earlier request's continuations of the shared prompts."""
    settings = GenerationSettings(max_new_tokens=4)
    first = CachedModel(PartnerMinded(), tmp_path / "a.sqlite", progress=False)
    first.generate(["a", "b", "c"], settings)
    after = first.generate(["a", "d"], settings)
    alone = CachedModel(PartnerMinded(), tmp_path / "b.sqlite", progress=False)
    assert after == alone.generate(["a", "d"], settings)
    assert first.generate(["d", "a", "a"], settings) == [after[1], after[0], after[0]]
    assert first.computed == 5  # the same set of prompts, in any order, is served


def test_token_scores_validate_shapes():
    with pytest.raises(ValueError, match="shape"):
        TokenScores(["a", "b"], np.zeros(2), np.zeros(1), np.zeros(2))


def test_generation_order_does_not_change_outputs(hf, texts):
    prompts = [t[: 20 + 17 * i] for i, t in enumerate(texts[:5])]  # distinct lengths
    settings = GenerationSettings(max_new_tokens=5)
    forward = hf.generate(prompts, settings)
    assert hf.generate(prompts[::-1], settings) == forward[::-1]
    assert [hf.generate([p], settings)[0] for p in prompts[:2]] == forward[:2]


def test_settled_generation_is_a_prefix_with_the_same_first_code_tokens(memorised):
    """The fast path (stop once k code tokens are final) against the full generation."""
    known = [s.text for s in load_benchmark("humaneval")[2:4]]
    prompts = [t[:cut] for t in known for cut in (90, 160, 230, 300)]
    full = memorised.generate(prompts, GenerationSettings(max_new_tokens=40))
    fast = memorised.generate(prompts, GenerationSettings(max_new_tokens=40, settled_code_tokens=3))
    for (a,), (b,) in zip(fast, full, strict=True):
        assert b.startswith(a) and code_tokens(a)[:3] == code_tokens(b)[:3]
    assert sum(len(a) for (a,) in fast) < sum(len(b) for (b,) in full) / 2


class Counting:
    """A scoring double that counts the texts it scores (``batch_size`` as a backend's)."""

    fingerprint = "counting"

    def __init__(self, batch_size: int):
        self.batch_size, self.scored = batch_size, 0

    def token_logprobs(self, texts):
        self.scored += len(texts)
        return [
            TokenScores([t], np.array([-1.0]), np.array([-2.0]), np.array([0.5])) for t in texts
        ]


@pytest.mark.parametrize("batch_size", [1, 4])
def test_scores_of_texts_scored_alone_are_shared_across_namespaces(tmp_path, batch_size):
    """One text per forward pass gives a text the same scores in any request: another
    namespace reads them; with batches it scores them again (partners move the bits)."""
    path = tmp_path / "c.sqlite"
    CachedModel(Counting(batch_size), path, progress=False).token_logprobs(["a", "b"])
    model = Counting(batch_size)
    apart = CachedModel(model, path, progress=False, namespace="n=10")
    assert [s.tokens for s in apart.token_logprobs(["a", "b", "c"])] == [["a"], ["b"], ["c"]]
    assert model.scored == (1 if batch_size == 1 else 3)


def test_settled_code_tokens():
    assert not code_tokens_settled("x = 3.", 3)  # "3." may become "3.5"
    assert not code_tokens_settled("x = 3.5", 3)  # too close to the end
    assert code_tokens_settled("x = 3.5 + y", 3)
    assert not code_tokens_settled("x = do n", 3)  # " n't" may still be cleaned to "don't"
    assert not code_tokens_settled("a b", 5)
    assert not code_tokens_settled("x = 1 + 2 \ufffd", 3)  # half a character


class Echo:
    """A model double that continues every prompt with its own text."""

    fingerprint = "echo"

    def generate(self, prompts, settings):
        return [[p] for p in prompts]


def test_a_namespace_shares_values_only_within_itself(tmp_path):
    prompts, settings = ["a", "bb", "ccc"], GenerationSettings(max_new_tokens=2)
    path = tmp_path / "c.sqlite"
    shared = CachedModel(Echo(), path, progress=False)
    shared.generate(prompts, settings)
    apart = CachedModel(Echo(), path, progress=False, namespace="n=10")
    assert apart.generate(prompts, settings) == [["a"], ["bb"], ["ccc"]]
    assert apart.computed == 3  # nothing taken from the shared namespace
    again = CachedModel(Echo(), path, progress=False, namespace="n=10")
    again.generate(prompts, settings)
    assert again.computed == 0
    assert len(DiskCache(path)) == 6
