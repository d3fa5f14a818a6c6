"""Verdict sentences that follow intervals: the one place where the book turns numbers into
words. A difference is "better" or "worse" only when its interval excludes zero; otherwise
the sentence says there is no evidence of a difference — a result, not a failure."""

from __future__ import annotations

import math


def difference(
    a: str, b: str, value: float, low: float, high: float, metric: str = "MCC", digits: int = 2
) -> str:
    """One sentence on ``a − b`` with its interval: better, worse, or no evidence."""
    if any(math.isnan(x) for x in (value, low, high)):
        return f"{a} − {b}: no interval could be computed for the {metric} difference."
    interval = f"[{low:+.{digits}f}, {high:+.{digits}f}]"
    text = f"{a} − {b} = {value:+.{digits}f} {metric} (95% interval {interval})"
    if low > 0:
        return f"{text}: {a} is better."
    if high < 0:
        return f"{text}: {a} is worse."
    return f"{text}: no evidence of a difference."


def above_chance(name: str, value: float, low: float, high: float, chance: float = 0.5) -> str:
    """Whether a score separates better than chance (an AUC and its interval)."""
    text = f"{name} reaches AUC {value:.2f} [{low:.2f}, {high:.2f}] ({chance:g} is chance)"
    if low > chance:
        return f"{text}: it separates the classes better than chance."
    if high < chance:
        return f"{text}: it ranks them the wrong way round."
    return f"{text}: no evidence that it separates them better than chance."


def rate_holds(name: str, rate: float, low: float, high: float, nominal: float) -> str:
    """Whether a false-positive rate (with its interval) is consistent with its nominal level."""
    text = f"{name}: {rate:.0%} [{low:.0%}, {high:.0%}]"
    if low > nominal:
        return f"{text}, above the nominal {nominal:g}: the level does not hold."
    return f"{text}: consistent with the nominal {nominal:g}."
