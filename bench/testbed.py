"""Throughput of the testbed's model on this machine, and the time of each testbed stage.

Measures, side by side in one run, the ``cpu`` profile's model (or another profile's):
training tokens/s (optimiser steps on real code), scoring tokens/s (``HFModel`` batched
log-probs) and greedy generation tokens/s, then builds the testbed of ``--profile`` in a
fresh cache folder and times every stage (corpus, variants, base model, reference model, each
continued-pre-training run, scoring of each checkpoint).

Usage: ``.venv/bin/python bench/testbed.py [--profile cpu] [--build]``; without
``--build`` only the throughput is measured (a minute), with it the whole profile is built
(the ``cpu`` profile: tens of minutes). ``--ngram-model FOLDER`` (a trained checkpoint, e.g.
the main run's last under ``.srlib-cache/testbed/runs/``) instead times n-gram accuracy with
generations stopped once their first code tokens are final against full ones.
"""

from __future__ import annotations

import argparse
import dataclasses
import tempfile
import time
from pathlib import Path

from _timing import timed

from srlib.benchmarks import load_benchmark
from srlib.detection.scoring import ngram_accuracy_many
from srlib.localfiles import python_sources
from srlib.models.base import GenerationSettings
from srlib.models.hf import HFModel
from srlib.models.tiny import train_lm
from srlib.testbed.config import profile
from srlib.testbed.train import TrainSettings, train_model


def throughput(name: str) -> None:
    """Training, scoring and generation tokens/s of the profile's model size."""
    config = profile(name)
    texts = python_sources(600_000, seed=1)
    with tempfile.TemporaryDirectory() as tmp:
        settings = TrainSettings(model=config.model, steps=0)
        folder = train_model(texts, tmp, settings).path
        hf = HFModel(str(folder), batch_size=config.score_batch)
        params = sum(p.numel() for p in hf.model.parameters())
        steps = 20
        _, train_s = timed(
            lambda: train_lm(
                hf.model, hf.tokenizer, texts, steps, config.batch_size, config.block_size
            )
        )
        train_tokens = steps * config.batch_size * config.block_size
        samples = load_benchmark("humaneval") + load_benchmark("mbpp", split="test")
        sample_texts = [s.text for s in samples]
        scored, score_s = timed(lambda: hf.token_logprobs(sample_texts))
        score_tokens = sum(len(s.tokens) + 1 for s in scored)
        prompts = [s.prompt for s in samples[:64]]
        settings = GenerationSettings(max_new_tokens=config.max_new_tokens)
        _, gen_s = timed(lambda: hf.generate(prompts, settings))
        gen_tokens = len(prompts) * config.max_new_tokens
    print(f"profile {name!r}: model of {params / 1e6:.2f} M parameters, 2 CPU threads")
    print(f"training  : {train_tokens / train_s:8.0f} tokens/s ({steps} steps)")
    print(f"scoring   : {score_tokens / score_s:8.0f} tokens/s ({len(sample_texts)} texts)")
    print(f"generation: {gen_tokens / gen_s:8.0f} new tokens/s ({len(prompts)} prompts)")
    print(f"mean sample length: {score_tokens / len(sample_texts):.0f} tokens")


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
    args = parser.parse_args()
    if args.ngram_model:
        ngram_stop(args.ngram_model)
        raise SystemExit
    throughput(args.profile)
    if args.build:
        stages(args.profile)
