"""srlib's greedy decoding gives ``generate``'s continuations, token for token."""

from __future__ import annotations

from collections import Counter

import pytest

from srlib.benchmarks import load_benchmark
from srlib.models.base import GenerationSettings
from srlib.models.hf import HFModel


@pytest.fixture(scope="module")
def prompts():
    """Prompts of many lengths (a padded batch), two of them the memorised problems' heads."""
    texts = [s.text for s in load_benchmark("humaneval")]
    return [t[: 40 + 23 * i] for i, t in enumerate(texts[:14])] + [texts[2][:150], texts[3][:200]]


def both(model: HFModel, prompts: list[str], settings: GenerationSettings):
    """(reference, srlib) continuations of the same request."""
    model.lean = False
    try:
        reference = model.generate(prompts, settings)
    finally:
        model.lean = True
    return reference, model.generate(prompts, settings)


@pytest.mark.parametrize("batch", [1, 5, 16])
def test_the_continuations_are_generates_in_every_batch_shape(memorised, prompts, batch):
    before, memorised.generate_batch = memorised.generate_batch, batch
    try:
        reference, lean = both(memorised, prompts, GenerationSettings(max_new_tokens=24))
    finally:
        memorised.generate_batch = before
    assert lean == reference
    assert len({c[0] for c in lean}) > 5  # not one repeated continuation


def test_rows_that_settle_early_leave_the_batch_without_moving_the_others(memorised, prompts):
    settings = GenerationSettings(max_new_tokens=40, settled_code_tokens=3)
    reference, lean = both(memorised, prompts, settings)
    assert lean == reference
    lengths = {len(c[0]) for c in lean}
    assert len(lengths) > 3  # rows stopped at different steps: the batch shrank between them


def test_an_end_of_sequence_token_stops_its_row_as_generate_stops_it(memorised, prompts):
    settings = GenerationSettings(max_new_tokens=30)
    whole = memorised.generate(prompts, settings)
    counts = Counter(t for c in whole for t in memorised.encode(c[0])[1:12])
    common = counts.most_common(1)[0][0]  # a token many rows make early: they stop on it
    config = memorised.model.generation_config
    eos, config.eos_token_id = config.eos_token_id, common
    try:
        reference, lean = both(memorised, prompts, settings)
    finally:
        config.eos_token_id = eos
    assert lean == reference
    stopped = [c[0] for c, w in zip(lean, whole, strict=True) if len(c[0]) < len(w[0])]
    piece = memorised.tokenizer.decode([common])
    assert len(stopped) > 3 and all(c.endswith(piece) for c in stopped)


def test_a_config_that_processes_logits_keeps_generate(memorised, prompts, monkeypatch):
    import srlib.models.hf as hf

    def refuse(*args, **kwargs):
        raise AssertionError("greedy ran under a repetition penalty")

    monkeypatch.setattr(hf, "greedy", refuse)
    monkeypatch.setattr(memorised.model.generation_config, "repetition_penalty", 1.3)
    reference, lean = both(memorised, prompts[:4], GenerationSettings(max_new_tokens=8))
    assert lean == reference


def test_sampling_keeps_generate(tiny_model_dir, monkeypatch):
    import srlib.models.hf as hf

    model = HFModel(str(tiny_model_dir))
    monkeypatch.setattr(hf, "greedy", lambda *a, **k: pytest.fail("greedy ran for sampling"))
    out = model.generate(["def f(x):"], GenerationSettings(max_new_tokens=5, temperature=0.8))
    assert len(out[0]) == 1


def test_stopped_rows_kept_in_the_batch_give_the_same_continuations(memorised, prompts):
    """The path a GPU takes: stopped rows stay, fed the pad token, as ``generate`` keeps them."""
    from srlib.models.greedy import greedy

    settings = GenerationSettings(max_new_tokens=40, settled_code_tokens=3)
    reference, _ = both(memorised, prompts, settings)
    tok = memorised.tokenizer
    sides, tok.padding_side = tok.padding_side, "left"
    try:
        enc = tok(prompts, return_tensors="pt", padding=True)
        kept = greedy(memorised.model, tok, enc, 40, settle=3, drop=False)
    finally:
        tok.padding_side = sides
    assert [[t] for t in tok.batch_decode(kept, skip_special_tokens=True)] == reference


def test_the_guard_refuses_what_generate_would_decode_otherwise(memorised, monkeypatch):
    from srlib.models.greedy import applies

    model, enc = memorised.model, {"input_ids": None, "attention_mask": None}
    assert applies(model, enc, settle=3)
    assert not applies(model, {**enc, "token_type_ids": None})
    with monkeypatch.context() as m:
        m.setattr(model.generation_config, "use_cache", False)
        assert not applies(model, enc)
    with monkeypatch.context() as m:
        m.setattr(model.generation_config, "eos_token_id", None)
        assert applies(model, enc) and not applies(model, enc, settle=3)
    with monkeypatch.context() as m:
        own = lambda self, *a, **k: None  # noqa: E731
        m.setattr(type(model), "prepare_inputs_for_generation", own)
        assert not applies(model, enc)


def test_the_cache_that_grows_in_place_holds_what_the_copying_one_holds():
    """Outgrowing its room and dropping rows on the way, the in-place layer hands attention
    the same keys and values as ``DynamicLayer``."""
    import torch
    from transformers.cache_utils import DynamicLayer

    from srlib.models.kvcache import RoomyLayer

    gen = torch.Generator().manual_seed(0)
    plain, roomy = DynamicLayer(), RoomyLayer(room=2)
    rows = 5
    for step, new in enumerate([7, 1, 1, 1, 3, 1, 1]):  # a prefill, then steps past the room
        k, v = (torch.randn(rows, 2, new, 4, generator=gen) for _ in range(2))
        expected, got = plain.update(k, v), roomy.update(k, v)
        for a, b in zip(expected, got, strict=True):
            assert a.shape == b.shape and torch.equal(a, b)
        assert roomy.get_seq_length() == plain.get_seq_length()
        if step == 3:  # two rows stop: both layers keep the others, in order
            keep = torch.tensor([0, 2, 4])
            plain.reorder_cache(keep)
            roomy.reorder_cache(keep)
            rows = 3
    assert roomy.get_seq_length() > 7 + 2  # it outgrew the prefill's buffer and its room


@pytest.mark.parametrize(
    "change",
    [
        lambda layer: layer.crop(-1),
        lambda layer: layer.reset(),
        lambda layer: layer.batch_select_indices([2, 0]),
        lambda layer: layer.batch_repeat_interleave(2),
    ],
    ids=["crop", "reset", "batch_select_indices", "batch_repeat_interleave"],
)
@pytest.mark.parametrize("reorder", [False, True], ids=["update", "reorder, then update"])
def test_the_in_place_layer_is_a_drop_in_for_the_methods_it_inherits(change, reorder):
    """After an inherited method changes the keys and values, the next position lands where
    ``DynamicLayer`` puts it: three positions, ``crop(-1)``, one more is ``[0, 1, 9]``, not the
    dropped position brought back from the buffer — also where rows are reordered first."""
    import torch
    from transformers.cache_utils import DynamicLayer

    from srlib.models.kvcache import RoomyLayer

    plain, roomy = DynamicLayer(), RoomyLayer(room=4)

    def position(k: int, rows: int = 3):  # position k, its rows told apart
        return torch.full((rows, 1, 1, 2), float(k)) + 100 * torch.arange(rows).view(-1, 1, 1, 1)

    for k in range(3):
        plain.update(position(k), position(k))
        roomy.update(position(k), position(k))
    change(plain)
    change(roomy)
    rows = 3 if plain.keys is None else plain.keys.shape[0]
    if reorder and plain.get_seq_length() > 0:
        backwards = torch.arange(rows - 1, -1, -1)
        plain.reorder_cache(backwards)
        roomy.reorder_cache(backwards)
        assert torch.equal(plain.keys, roomy.keys) and torch.equal(plain.values, roomy.values)
    last = position(9, rows)
    expected, got = plain.update(last, last), roomy.update(last, last)
    for a, b in zip(expected, got, strict=True):
        assert a.shape == b.shape and torch.equal(a, b), (a[0, 0, :, 0], b[0, 0, :, 0])
    assert roomy.get_seq_length() == plain.get_seq_length()
