"""srlib's greedy decoding against Hugging Face ``generate``, same model, prompts and batches.

The reference is the path the testbed took before ``srlib.models.greedy``: ``generate`` with
a stopping criterion that decodes every row of the batch at every step (``HFModel.lean =
False``); between them, srlib's decoding with a cache that every step copies (before
``srlib.models.kvcache``). All three run the two requests black-box detection makes, as it
makes them: SR's (``prefix_suffix`` of every problem, the profile's ``max_new_tokens``, no
early stop) and n-gram accuracy's (five prefixes a problem, ``8n`` new tokens, each row
stopped once its first ``n`` code tokens are settled), twice: in one order, then the reverse.
Printed per request: prompts per CPU-second of each path, their ratio, and how many
continuations are identical (goal: all of them, ≥ 2× on the whole), then the in-place
cache's rate against the copying one's. One thread; the model is the ``cpu`` profile's shape
trained briefly from scratch, or ``--model FOLDER`` (e.g. a testbed checkpoint under
``.srlib-cache/testbed/runs``).

Usage: ``.venv/bin/python bench/generation.py [--prompts 192] [--steps 200] [--model DIR]``.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from contextlib import contextmanager, nullcontext
from unittest import mock

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


PATHS = ("generate", "srlib, copying cache", "srlib")
"""The reference, srlib's greedy decoding with ``DynamicCache`` as it is (each step copies the
cache), and srlib's as the book runs it (the cache grows in place: ``srlib.models.kvcache``)."""


@contextmanager
def decoding(model: HFModel, path_name: str):
    """``model`` decoding greedily by the path named ``path_name`` inside the block."""
    import srlib.models.kvcache as kvcache

    model.lean = path_name != "generate"
    keep = path_name == "srlib, copying cache"
    with mock.patch.object(kvcache, "roomy", lambda cache, room: cache) if keep else nullcontext():
        try:
            yield
        finally:
            model.lean = True


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
        totals = dict.fromkeys(PATHS, 0.0)
        for name, (prompts, settings) in requests(samples, config).items():
            out, seconds = {}, dict.fromkeys(PATHS, 0.0)
            for order in (PATHS, PATHS[::-1]):  # each path once early, once late in the process
                for path_name in order:
                    with decoding(model, path_name):
                        out[path_name], spent = cpu_timed(
                            lambda: model.generate(prompts, settings)  # noqa: B023
                        )
                    seconds[path_name] += spent
                    totals[path_name] += spent
            reference = out["generate"]
            for path_name in PATHS[1:]:
                same = sum(a == b for a, b in zip(reference, out[path_name], strict=True))
                print(
                    f"{name}: {path_name} {len(prompts) / seconds[path_name]:.0f} prompts per "
                    f"CPU-second ({seconds['generate'] / seconds[path_name]:.2f}× generate's "
                    f"{len(prompts) / seconds['generate']:.0f}); {same} of {len(prompts)} identical"
                )
        for path_name in PATHS[1:]:
            ratio = totals["generate"] / totals[path_name]
            print(f"both requests, {path_name}: {ratio:.2f}× the rate of generate")
        print(
            "the cache that grows in place: "
            f"{totals['srlib, copying cache'] / totals['srlib']:.2f}× the copying one's rate"
        )


if __name__ == "__main__":
    main()
