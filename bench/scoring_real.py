"""The real model's scoring path against a plain one-text-at-a-time ``transformers`` loop, same
model, texts and threads, measured side by side in one run. Goal: srlib's path at ≥ 0.8× the
loop's speed (it computes more: Min-K%++'s mean and variance over the vocabulary per token).

The plain loop is what a reader would write first: one forward per text, ``log_softmax``, the
text's own tokens gathered, read out as an array. srlib's path is ``HFModel.token_logprobs`` one
text at a time with ``batch_size=1``, as the real-model chapter scores (``RealConfig``). The two
run in turns, ``ROUNDS`` times each, and the medians are compared, so load on the machine
falls on both alike; they must agree on every log-probability.

Usage: ``.venv/bin/python bench/scoring_real.py [MODEL [TEXTS]]`` (default: the locked
``smollm2-135m`` on HumanEval's first 24 problems, one thread).
"""

from __future__ import annotations

import statistics
import sys

import numpy as np
import torch
from _timing import timed

from srlib.benchmarks import load_benchmark
from srlib.models.hf import HFModel
from srlib.testbed.locked import resolve

ROUNDS = 3


def plain_loop(hf: HFModel, texts: list[str]) -> list[np.ndarray]:
    """One forward per text, log-softmax, the next tokens' log-probs gathered."""
    out = []
    with torch.inference_mode():
        for text in texts:
            ids = torch.tensor(hf.encode(text)).unsqueeze(0)
            logp = torch.log_softmax(hf.model(ids).logits[0, :-1].float(), dim=-1)
            out.append(logp.gather(-1, ids[0, 1:, None])[:, 0].numpy())
    return out


if __name__ == "__main__":
    name = sys.argv[1] if len(sys.argv) > 1 else "smollm2-135m"
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 24
    texts = [s.text for s in load_benchmark("humaneval")[:count]]
    hf = HFModel(resolve(name), batch_size=1, threads=1)
    torch.set_num_threads(1)
    loop_s, ours_s = [], []
    for _ in range(ROUNDS):
        plain, seconds = timed(lambda: plain_loop(hf, texts))
        loop_s.append(seconds)
        ours, seconds = timed(lambda: [hf.token_logprobs([t])[0] for t in texts])
        ours_s.append(seconds)
    worst = max(float(np.abs(a - b.logprobs).max()) for a, b in zip(plain, ours, strict=True))
    tokens = sum(len(s.tokens) + 1 for s in ours)
    loop, mine = statistics.median(loop_s), statistics.median(ours_s)
    print(f"{name}: {len(texts)} HumanEval texts, {tokens} tokens, one thread, {ROUNDS} rounds")
    print(f"plain transformers loop : {loop:6.2f} s ({tokens / loop:6.0f} tokens/s)")
    print(f"srlib, one text a time  : {mine:6.2f} s ({tokens / mine:6.0f} tokens/s)")
    print(f"srlib at {loop / mine:.2f}x the plain loop's speed (goal: >= 0.8x); largest "
          f"log-prob difference {worst:.1e}")  # fmt: skip
