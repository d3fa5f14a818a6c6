"""srlib's greedy decoding against Hugging Face ``generate``, same model, prompts and batches.

The reference is the path the testbed took before ``srlib.models.greedy``: ``generate`` with
a stopping criterion that decodes every row of the batch at every step (``HFModel.lean =
False``). Both run the two requests black-box detection makes, as it makes them: SR's
(``prefix_suffix`` of every problem, the profile's ``max_new_tokens``, no early stop) and
n-gram accuracy's (five prefixes a problem, ``8n`` new tokens, each row stopped once its
first ``n`` code tokens are settled). Printed per request: prompts per CPU-second of each
path, their ratio, and how many continuations are identical (goal: all of them, ≥ 2× on the
whole). One thread; the model is the ``cpu`` profile's shape trained briefly from scratch,
or ``--model FOLDER`` (e.g. a testbed checkpoint under ``.srlib-cache/testbed/runs``).

Usage: ``.venv/bin/python bench/generation.py [--prompts 192] [--steps 200] [--model DIR]``.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time

import numpy as np

from srlib.benchmarks import load_benchmark
from srlib.codetext import CODE_TOKEN
from srlib.detection.scoring import prefix_suffix
from srlib.models.base import GenerationSettings
from srlib.models.hf import HFModel
from srlib.testbed.config import profile
from srlib.testbed.train import TrainSettings, train_model


def requests(samples, config, n: int = 5, starts: int = 5) -> dict[str, tuple[list, object]]:
    """The two black-box requests on ``samples``: (prompts, settings) by name."""
    sr = [prefix_suffix(s)[0] for s in samples]
    accuracy = []
    for s in samples:
        toks = list(CODE_TOKEN.finditer(s.text))
        if len(toks) >= n + 3:
            positions = np.linspace(2, len(toks) - n, starts).astype(int)
            accuracy += [s.text[: toks[p].start()] for p in positions]
    return {
        "SR black-box": (sr, GenerationSettings(max_new_tokens=config.max_new_tokens)),
        "n-gram accuracy": (
            accuracy[: len(sr)],
            GenerationSettings(max_new_tokens=8 * n, settled_code_tokens=n),
        ),
    }


def cpu_timed(fn):
    """``fn()`` and the CPU-seconds this process spent on it."""
    start = time.process_time()
    out = fn()
    return out, time.process_time() - start


def main() -> None:
    """Time both paths on both requests and print rates, ratios and agreement."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=192)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--profile", default="cpu")
    parser.add_argument("--model", default=None, help="a model folder (default: train one)")
    args = parser.parse_args()
    config = profile(args.profile)
    samples = load_benchmark("humaneval") + load_benchmark("mbpp")
    random.Random(0).shuffle(samples)
    samples = samples[: args.prompts]
    with tempfile.TemporaryDirectory() as folder:
        path = args.model
        if path is None:
            texts = [s.text for s in samples]
            settings = TrainSettings(model=config.model, steps=args.steps, threads=1)
            path = str(train_model(texts, folder, settings, name="bench", progress=False).path)
        model = HFModel(path, batch_size=1, generate_batch=config.generate_batch, threads=1)
        totals = {True: 0.0, False: 0.0}
        for name, (prompts, settings) in requests(samples, config).items():
            out, seconds = {}, {}
            for lean in (False, True):
                model.lean = lean
                out[lean], seconds[lean] = cpu_timed(lambda: model.generate(prompts, settings))  # noqa: B023
                totals[lean] += seconds[lean]
            same = sum(a == b for a, b in zip(out[False], out[True], strict=True))
            print(
                f"{name}: generate {len(prompts) / seconds[False]:.0f}, srlib "
                f"{len(prompts) / seconds[True]:.0f} prompts per CPU-second "
                f"({seconds[False] / seconds[True]:.2f}×); {same} of {len(prompts)} identical"
            )
        print(f"both requests: {totals[False] / totals[True]:.2f}× the rate of generate")


if __name__ == "__main__":
    main()
