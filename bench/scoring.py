"""Batched scoring against a one-sample-per-forward loop, same model and texts, one run.

The loop is the way mimir and detect-pretrain-code score: one forward per text (with the
loss computed from labels), log-softmax, then each token's log-prob read out with ``.item()``
in a Python loop, and Min-K%++'s μ and σ per text. srlib scores length-sorted padded
batches and reads everything out with vectorised ops. Goal: ≥ 5×. A third line runs srlib's
own path one text at a time, to separate the gain of batching from that of vectorising.

Usage: ``.venv/bin/python bench/scoring.py [BATCH_SIZE [LAYERS WIDTH]]``. The model is a
randomly initialised GPT-2 (speed does not depend on the weights), 4 layers × 128 wide by
default.
"""

from __future__ import annotations

import sys
import tempfile

import numpy as np
import torch
from _timing import timed

from srlib.benchmarks import load_benchmark
from srlib.models.hf import HFModel
from srlib.models.tiny import TinyConfig
from srlib.testbed.train import TrainSettings, train_model


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
    layers, width = (int(a) for a in (sys.argv[2:4] if len(sys.argv) > 3 else (4, 128)))
    config = TinyConfig(n_layer=layers, n_head=4, n_embd=width, n_positions=1024)
    with tempfile.TemporaryDirectory() as tmp:
        folder = str(train_model(texts, tmp, TrainSettings(model=config, steps=0)).path)
        single, batched = HFModel(folder, batch_size=1), HFModel(folder, batch_size=batch)
        peers, peer_s = timed(lambda: peer_loop(single, texts))
        ones, one_s = timed(lambda: [single.token_logprobs([t])[0] for t in texts])
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
