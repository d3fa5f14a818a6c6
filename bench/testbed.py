"""Throughput of the testbed's model on this machine, and the time of each testbed stage.

Measures, side by side in one run, the ``cpu`` profile's model (or another profile's):
training tokens/s (``train_lm``) in float32 (the book's pinned kernels) and bfloat16 (the
machine's own, as the ``cpu-bf16`` profile runs; ``--bf16-pinned``: the pinned ones) beside a
plain fp32 eager loop of the same shapes, and scoring tokens/s (``HFModel`` batched
log-probs) in both precisions, each with its FLOP/s as a fraction of a matmul of the
model's shape in the same precision; then builds the testbed of ``--profile`` in a fresh
cache folder and times every stage (corpus, variants, base model, reference model, each
continued-pre-training run, scoring of each checkpoint).

Usage: ``.venv/bin/python bench/testbed.py [--profile cpu] [--build]``; without
``--build`` only the throughput is measured (a few minutes), with it the whole profile is built
(the ``cpu`` profile: tens of minutes). ``--ngram-model FOLDER`` (a trained checkpoint, e.g.
the main run's last under ``.srlib-cache/testbed/runs/``) instead times n-gram accuracy with
generations stopped once their first code tokens are final against full ones.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from _timing import timed

from srlib.benchmarks import load_benchmark
from srlib.detection.scoring import ngram_accuracy_many
from srlib.localfiles import python_sources
from srlib.models.base import GenerationSettings
from srlib.models.hf import HFModel
from srlib.models.tiny import tiny_gpt2, train_lm, train_tokenizer
from srlib.testbed.config import profile
from srlib.testbed.train import TrainSettings, train_model


def _plain_step_loop(config, batch) -> float:
    """Tokens/s of a plain fp32 eager loop: HF GPT-2 of the profile's size as HF builds it
    (its own GELU, eager attention), AdamW, clipping, no allocator or precision settings."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    size = config.model
    cfg = GPT2Config(
        vocab_size=size.vocab_size,
        n_positions=size.n_positions,
        n_embd=size.n_embd,
        n_layer=size.n_layer,
        n_head=size.n_head,
        attn_implementation="eager",
    )
    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = GPT2LMHeadModel(cfg).train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)

    def step():
        loss = model(input_ids=batch, labels=batch).loss
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()

    step()
    _, s = timed(lambda: [step() for _ in range(STEPS)])
    return STEPS * batch.numel() / s


def _measure(name: str, what: str, dtype: str) -> float:
    """One measurement in a fresh process: tokens/s of ``what`` (plain, train, score) or the
    GFLOP/s of a matmul of the model's MLP shape (matmul), in ``dtype``."""
    import torch

    from srlib.models.cpu import keep_freed_memory

    config = profile(name)
    tokens = config.batch_size * config.block_size
    batch = torch.randint(0, config.model.vocab_size, (config.batch_size, config.block_size))
    if what == "plain":
        return _plain_step_loop(config, batch)
    keep_freed_memory()
    torch.set_num_threads(1)
    if what == "matmul":
        d, kind = config.model.n_embd, getattr(torch, dtype)
        a, b = torch.randn(tokens, d, dtype=kind), torch.randn(d, 4 * d, dtype=kind)

        def products():
            for _ in range(200):
                a @ b

        products()
        _, s = timed(products)
        return 200 * 2 * tokens * d * 4 * d / s / 1e9
    texts = python_sources(400_000, seed=1)
    if what == "score":
        with tempfile.TemporaryDirectory() as tmp:
            folder = train_model(texts, tmp, TrainSettings(model=config.model, steps=0)).path
            hf = HFModel(str(folder), batch_size=config.score_batch, threads=1, dtype=dtype)
            sample_texts = [s.text for s in load_benchmark("mbpp", split="test")[:160]]
            hf.token_logprobs(sample_texts[:16])
            scored, s = timed(lambda: hf.token_logprobs(sample_texts))
            return sum(len(x.tokens) + 1 for x in scored) / s
    tokenizer = train_tokenizer(texts, config.model.vocab_size)
    model = tiny_gpt2(tokenizer, config.model)  # as ``train_model`` builds it
    args = (tokenizer, texts, 1, config.batch_size, config.block_size)
    _, one = timed(lambda: train_lm(model, *args, dtype=dtype))
    _, more = timed(lambda: train_lm(model, *args[:2], 1 + STEPS, *args[3:], dtype=dtype))
    return STEPS * tokens / (more - one)  # the steps alone: tokenizing the texts cancels


STEPS = 12  # timed optimiser steps per training measurement


@contextlib.contextmanager
def _numerics(native: bool) -> Iterator[None]:
    """The environment a measurement's process starts from: the book's pinned kernels, or
    (``native``) the machine's own, as the ``cpu-bf16`` profile runs with SRLIB_NUMERICS=native."""
    from srlib.models.numerics import OPT_OUT, PINNED

    saved = dict(os.environ)
    if native:
        for key in PINNED:
            os.environ.pop(key, None)
        os.environ[OPT_OUT] = "native"
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def throughput(name: str, rounds: int = 2, bf16_native: bool = True) -> None:
    """Training and scoring tokens/s in float32 and bfloat16 beside a plain fp32 eager loop,
    each as a fraction of a matmul of the model's own shapes in the same precision; every
    measurement in a fresh process, the rounds interleaved, the best of each kept. float32
    runs on the book's pinned (portable) kernels; bfloat16 on the machine's own
    (``bf16_native``, as the ``cpu-bf16`` profile) or pinned (what AVX2 gives it)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from srlib.models.cpu import bf16_units
    from srlib.models.numerics import said

    config = profile(name)
    cases = [
        ("matmul", "float32"),
        ("matmul", "bfloat16"),
        ("plain", "float32"),
        ("train", "float32"),
        ("train", "bfloat16"),
        ("score", "float32"),
        ("score", "bfloat16"),
    ]
    best: dict[tuple[str, str], float] = {}
    spawn = multiprocessing.get_context("spawn")
    for _ in range(rounds):
        for case in cases:
            native = bf16_native and case[1] == "bfloat16"
            with _numerics(native), ProcessPoolExecutor(1, mp_context=spawn) as pool:
                value = pool.submit(_measure, name, *case).result()
            best[case] = max(best.get(case, 0.0), value)
    size = config.model
    n = 12 * size.n_layer * size.n_embd**2 + size.vocab_size * size.n_embd  # matmul weights
    attention = 2 * size.n_layer * config.block_size * size.n_embd  # per token, forward
    forward = 2 * n + attention  # FLOP per token
    print(f"profile {name!r}: {size}, batch {config.batch_size} x {config.block_size}, 1 thread")
    print(f"CPU bf16 units: {bf16_units()}")
    print(f"float32: {said()}; bfloat16: {'native' if bf16_native else 'pinned'} kernels")
    print(
        f"matmul {config.batch_size * config.block_size} x {size.n_embd} x {4 * size.n_embd}: "
        f"fp32 {best['matmul', 'float32']:.0f} GFLOP/s, bf16 {best['matmul', 'bfloat16']:.0f}"
    )
    plain = best["plain", "float32"]
    rows = [
        ("plain fp32 eager loop", "plain", "float32", 3),
        ("train_lm float32", "train", "float32", 3),
        ("train_lm bfloat16", "train", "bfloat16", 3),
        ("scoring float32", "score", "float32", 1),
        ("scoring bfloat16", "score", "bfloat16", 1),
    ]
    for label, what, dtype, passes in rows:
        rate = best[what, dtype]
        gflops = rate * forward * passes / 1e9
        peak = best["matmul", dtype]
        ratio = f"  {rate / plain:.2f}x plain" if what == "train" else ""
        print(
            f"{label:24s} {rate:8.0f} tokens/s  {gflops:6.1f} GFLOP/s "
            f"({gflops / peak:5.1%} of the {dtype} matmul){ratio}"
        )


class FullGeneration:
    """A model whose generations never stop early (``settled_code_tokens`` ignored)."""

    def __init__(self, model: HFModel) -> None:
        self.model = model

    def generate(self, prompts: list[str], settings: GenerationSettings) -> list[list[str]]:
        return self.model.generate(prompts, dataclasses.replace(settings, settled_code_tokens=0))


def ngram_stop(folder: str, samples: int = 96) -> None:
    """n-gram accuracy of a checkpoint with rows stopped once their code tokens are final,
    against full generations, side by side: the ratio, and whether the scores agree."""
    hf = HFModel(folder, batch_size=profile("cpu").score_batch, threads=1)
    texts = [s.text for s in load_benchmark("mbpp", split="test")[:samples]]
    ngram_accuracy_many(hf, texts[:8])  # warm-up: the first generation pays one-off costs
    full, full_s = timed(lambda: ngram_accuracy_many(FullGeneration(hf), texts))
    fast, fast_s = timed(lambda: ngram_accuracy_many(hf, texts))
    same = [a.raw for a in fast] == [b.raw for b in full]
    print(f"n-gram accuracy: stopped {fast_s:.1f} s, full {full_s:.1f} s")
    print(f"  ratio {full_s / fast_s:.2f}x, scores equal: {same} ({samples} texts)")


def stages(name: str) -> None:
    """Build the profile in a fresh cache and time each stage from the artefacts' order."""
    from srlib.testbed import build as build_module
    from srlib.testbed import experiment

    times = {}
    for fn in ("build_corpus", "cached_variants", "_base", "_reference", "continue_training"):
        real = getattr(build_module, fn)

        def wrapped(*a, _real=real, _fn=fn, **k):
            start = time.perf_counter()
            out = _real(*a, **k)
            label = _fn if _fn != "continue_training" else f"run {Path(a[4]).name.split('-')[0]}"
            times[label] = time.perf_counter() - start
            return out

        setattr(build_module, fn, wrapped)
    with tempfile.TemporaryDirectory() as tmp:
        tb, total = timed(lambda: build_module.build(profile(name), tmp, progress=False))
        for stage in experiment.stages(tb):
            _, s = timed(lambda st=stage: tb.scores(st.path))
            times[f"score {stage.label}"] = s
    for label, s in times.items():
        print(f"{label:28s} {s:8.1f} s")
    print(f"{'build (all of the above)':28s} {total:8.1f} s")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="cpu")
    parser.add_argument("--build", action="store_true", help="also build and time every stage")
    parser.add_argument("--ngram-model", help="a trained checkpoint: n-gram accuracy stopped/full")
    parser.add_argument(
        "--bf16-pinned", action="store_true", help="bfloat16 on the pinned AVX2 kernels too"
    )
    args = parser.parse_args()
    if args.ngram_model:
        ngram_stop(args.ngram_model)
        raise SystemExit
    throughput(args.profile, bf16_native=not args.bf16_pinned)
    if args.build:
        stages(args.profile)
