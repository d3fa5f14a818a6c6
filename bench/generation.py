"""Greedy generation of the testbed's model in batches of 16 and of 32 prompts, side by side.

Decoding a small model on a CPU is bound by the overhead of each step, not by its arithmetic,
so more prompts per batch cost little more per step. This trains the ``cpu`` profile's model
briefly (its shapes are what matter, not its weights), then generates continuations of 48
tokens for the second halves of HumanEval and MBPP problems, once per batch size, and prints
the seconds of each, their ratio, and how many continuations the two batch sizes agree on.

Usage: ``.venv/bin/python bench/generation.py [--prompts 320] [--steps 40]`` (about a minute).
"""

from __future__ import annotations

import argparse
import random
import tempfile

from _timing import timed

from srlib.benchmarks import load_benchmark
from srlib.models.base import GenerationSettings
from srlib.models.hf import HFModel
from srlib.testbed.config import profile
from srlib.testbed.train import TrainSettings, train_model


def main() -> None:
    """Train a short model of the profile's shape, then time both batch sizes on one prompt set."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=320)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--profile", default="cpu")
    args = parser.parse_args()
    config = profile(args.profile)
    texts = [s.text for s in load_benchmark("humaneval") + load_benchmark("mbpp")]
    prompts = [t[: len(t) // 2] for t in texts]
    random.Random(0).shuffle(prompts)
    prompts = prompts[: args.prompts]
    settings = TrainSettings(model=config.model, steps=args.steps, threads=1)
    with tempfile.TemporaryDirectory() as folder:
        trained = train_model(texts, folder, settings, name="bench", progress=False)
        outputs, seconds = {}, {}
        for batch in (16, 32):
            model = HFModel(str(trained.path), batch_size=16, generate_batch=batch, threads=1)
            run = lambda m=model: m.generate(prompts, GenerationSettings(max_new_tokens=48))  # noqa: E731
            outputs[batch], seconds[batch] = timed(run)
            print(f"batch {batch}: {seconds[batch]:.1f} s for {len(prompts)} prompts")
    same = sum(a == b for a, b in zip(outputs[16], outputs[32], strict=True))
    print(f"32 against 16: {seconds[32] / seconds[16]:.2f} of the time; "
          f"{same} of {len(prompts)} continuations identical")  # fmt: skip


if __name__ == "__main__":
    main()
