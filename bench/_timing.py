"""Shared helper of the benchmark scripts."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def timed(fn: Callable[[], T]) -> tuple[T, float]:
    """``fn()`` and the wall-clock seconds it took."""
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start
