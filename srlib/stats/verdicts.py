"""Verdict sentences that follow intervals: the one place where the book turns numbers into
words. A difference is "better" or "worse" only when its interval excludes zero; otherwise
the sentence says there is no evidence of a difference — a result, not a failure."""

from __future__ import annotations

import math

from srlib.stats.significance import NO_VERDICT


def difference(
    a: str,
    b: str,
    value: float,
    low: float,
    high: float,
    metric: str = "MCC",
    digits: int = 2,
    tested: bool = True,
) -> str:
    """One sentence on ``a − b`` with its interval: better, worse, or no evidence; not
    ``tested`` (``significance.testable``: every resample gave the same difference), no
    verdict at all."""
    if any(math.isnan(x) for x in (value, low, high)):
        return f"{a} − {b}: no interval could be computed for the {metric} difference."
    if not tested:
        return (
            f"{a} − {b} = {value:+.{digits}f} {metric}, the same in every resample: {NO_VERDICT}."
        )
    interval = f"[{low:+.{digits}f}, {high:+.{digits}f}]"
    text = f"{a} − {b} = {value:+.{digits}f} {metric} (95% interval {interval})"
    said = {"better": f"{a} is better", "worse": f"{a} is worse"}
    return f"{text}: {said.get(direction(low, high), 'no evidence of a difference')}."


def above_chance(name: str, value: float, low: float, high: float, chance: float = 0.5) -> str:
    """Whether a score separates better than chance (an AUC and its interval)."""
    text = f"{name} reaches AUC {value:.2f} [{low:.2f}, {high:.2f}] ({chance:g} is chance)"
    if low > chance:
        return f"{text}: it separates the classes better than chance."
    if high < chance:
        return f"{text}: it ranks them the wrong way round."
    return f"{text}: no evidence that it separates them better than chance."


def rate_holds(
    name: str, k: int, n: int, nominal: float, level: float = 0.95, calibrated_on: int | None = None
) -> str:
    """Whether ``k`` flags in ``n`` clean trials are consistent with the ``nominal`` rate,
    two-sided. Without ``calibrated_on``: the exact (Clopper-Pearson) interval of the rate
    must hold the nominal level. With it — a threshold set on that many clean samples, as
    ``decide.calibrated_threshold`` sets it — the threshold's own noise counts too: on
    exchangeable data the count of flags is beta-binomial (the threshold's true rate is
    Beta-distributed around the nominal one), and ``k`` must lie inside its central
    ``level`` range. Too few flags fails as surely as too many."""
    if n == 0:
        return f"{name}: no trials, so the nominal {nominal:g} cannot be checked."
    from scipy import stats

    text = f"{name}: {k} of {n} ({k / n:.1%}"
    if calibrated_on:
        m = int(calibrated_on)
        j = int(math.ceil((1 - nominal) * (m - 1))) + 1  # the order statistic it cuts at
        law = stats.betabinom(n, m - j + 1, j)
        low, high = (int(x) for x in law.ppf([(1 - level) / 2, (1 + level) / 2]))
        text += f"; a threshold set on {m} clean samples flags {low}–{high} of {n} in {level:.0%}"
        text += " of draws, its own noise counted)"
        below, above = k < low, k > high
    else:
        low, high = stats.binomtest(k, n).proportion_ci(level, method="exact")
        text += f"; exact {level:.0%} interval [{low:.1%}, {high:.1%}])"
        below, above = high < nominal, low > nominal
    if above:
        return f"{text}, above the nominal {nominal:g}: the level does not hold."
    if below:
        return f"{text}, below the nominal {nominal:g}: the level does not hold (too few)."
    return f"{text}: consistent with the nominal {nominal:g}."


def direction(low: float, high: float) -> str:
    """What an interval of a difference says: "better", "worse" or "no evidence"."""
    if low > 0:
        return "better"
    if high < 0:
        return "worse"
    return "no evidence"
