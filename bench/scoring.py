"""Batched scoring against a one-sample-per-forward loop, same model and texts, one run.

The loop is the way mimir and detect-pretrain-code score: one forward per text (with the
loss computed from labels), log-softmax, then each token's log-prob read out with ``.item()``
in a Python loop, and Min-K%++'s μ and σ per text. srlib scores length-sorted padded
batches and reads everything out with vectorised ops. Goal: ≥ 5×. A third line runs srlib's
own path one text at a time, to separate the gain of batching from that of vectorising.

Then the share of what the arithmetic allows: srlib's one-text path (the cpu profiles score
each text alone) in tokens per CPU-second, its model arithmetic per CPU-second (2 FLOPs per
weight per token, plus attention's scores and mixing), against the matmul rate measured in
the same run at the model's own shapes (a text's tokens × width × 4·width, and × the
vocabulary: the feed-forward and the head) on the same threads.

Usage: ``.venv/bin/python bench/scoring.py [BATCH_SIZE [LAYERS WIDTH]]``. The model is a
randomly initialised GPT-2 (speed does not depend on the weights) of the ``cpu`` profile's
shape by default.
"""

from __future__ import annotations

import dataclasses
import sys
import tempfile
import time

import numpy as np
import torch
from _timing import timed

from srlib.benchmarks import load_benchmark
from srlib.models.hf import HFModel
from srlib.models.tiny import TinyConfig
from srlib.testbed.config import profile
from srlib.testbed.train import TrainSettings, train_model


def cpu_timed(fn):
    """``fn()`` and the CPU-seconds this process spent on it (every thread counted)."""
    start = time.process_time()
    result = fn()
    return result, time.process_time() - start


def flops_per_token(config: TinyConfig, length: int) -> float:
    """The forward pass's arithmetic per token of a ``length``-token text: 2 FLOPs per weight of
    the blocks (attention projections 4·W², feed-forward 8·W²) and of the head (W·V), plus
    attention's scores and mixing (2 · 2 · length/2 · W per layer, causal)."""
    w, layers = config.n_embd, config.n_layer
    return 2 * (layers * 12 * w * w + w * config.vocab_size) + layers * 2 * length * w


def matmul_rate(config: TinyConfig, length: int, repeats: int = 30) -> float:
    """FLOPs per CPU-second of the model's two largest matmul shapes, measured here."""
    x = torch.randn(length, config.n_embd)
    shapes = [torch.randn(config.n_embd, 4 * config.n_embd), torch.randn(config.n_embd,
              config.vocab_size)]  # fmt: skip
    work = sum(2 * length * w.shape[0] * w.shape[1] for w in shapes) * repeats
    _, seconds = cpu_timed(lambda: [x @ w for _ in range(repeats) for w in shapes])
    return work / seconds


def peer_loop(hf: HFModel, texts: list[str]) -> list[np.ndarray]:
    """One forward per text and per-token ``.item()`` read-outs (the peers' scoring loop)."""
    out = []
    for text in texts:
        ids = torch.tensor(hf.encode(text)).unsqueeze(0)
        with torch.no_grad():
            logits = hf.model(ids, labels=ids).logits
        logp = torch.log_softmax(logits, dim=-1)
        probs = [logp[0, i, t].item() for i, t in enumerate(ids[0][1:])]
        p = logp[0, :-1].exp()
        mu = (p * logp[0, :-1]).sum(-1)
        _sigma = ((p * logp[0, :-1] ** 2).sum(-1) - mu**2).sqrt()
        out.append(np.array(probs))
    return out


if __name__ == "__main__":
    batch = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    texts = [s.text for s in load_benchmark("humaneval")]
    config = dataclasses.replace(profile("cpu").model, n_positions=1024)  # the peers' loop
    # has no sliding window: every HumanEval text in one context
    if len(sys.argv) > 3:
        config = TinyConfig(
            n_layer=int(sys.argv[2]), n_head=4, n_embd=int(sys.argv[3]), n_positions=1024
        )
    with tempfile.TemporaryDirectory() as tmp:
        folder = str(train_model(texts, tmp, TrainSettings(model=config, steps=0)).path)
        single, batched = HFModel(folder, batch_size=1), HFModel(folder, batch_size=batch)
        peers, peer_s = timed(lambda: peer_loop(single, texts))
        ones, one_s = timed(lambda: [single.token_logprobs([t])[0] for t in texts])
        _, one_cpu = cpu_timed(lambda: [single.token_logprobs([t])[0] for t in texts])
        many, batch_s = timed(lambda: batched.token_logprobs(texts))
    worst = max(float(np.abs(a - b.logprobs).max()) for a, b in zip(peers, many, strict=True))
    tokens = sum(len(s.tokens) + 1 for s in many)
    print(f"{len(texts)} HumanEval texts, {tokens} tokens, {torch.get_num_threads()} CPU threads")
    print(f"peers' per-text loop      : {peer_s:6.2f} s ({tokens / peer_s:7.0f} tokens/s)")
    print(f"srlib, one text at a time : {one_s:6.2f} s ({tokens / one_s:7.0f} tokens/s)")
    print(f"srlib, batches of {batch:<3}     : {batch_s:6.2f} s ({tokens / batch_s:7.0f} tokens/s)")
    print(
        f"speed-up over the peers' loop: {peer_s / batch_s:.1f}x "
        f"(batching alone: {one_s / batch_s:.1f}x); largest log-prob difference {worst:.1e}"
    )
    length = round(tokens / len(texts))
    arithmetic = sum(flops_per_token(config, len(s.tokens) + 1) * (len(s.tokens) + 1) for s in ones)
    peak = matmul_rate(config, length)
    print(
        f"srlib, one text at a time : {tokens / one_cpu:7.0f} tokens per CPU-second, "
        f"{arithmetic / one_cpu / 1e9:.2f} GFLOP per CPU-second of model arithmetic = "
        f"{arithmetic / one_cpu / peak:.0%} of the matmul rate at its shapes "
        f"({peak / 1e9:.1f} GFLOP per CPU-second, {config.n_layer} layers x {config.n_embd}, "
        f"vocabulary {config.vocab_size}, {length} tokens a text)"
    )
