"""Rates with exact and score intervals: a flag rate against its nominal chance level (exact
Poisson-binomial test) and against an empirical null (Newcombe's intervals for independent
and for paired proportions; Fisher's and McNemar's exact tests). What an audit without
labels reads."""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np
from scipy import stats

from srlib.stats.metrics import decided


def chance_levels(n_variants: int | Sequence[int], size: int) -> np.ndarray:
    """Each sample's nominal chance of being flagged, 1/(n_i + 1) for its own number of
    variants n_i (the rate if the original were exchangeable with its variants)."""
    n = np.broadcast_to(np.asarray(n_variants, dtype=float), (size,))
    if (n < 1).any():
        raise ValueError("chance levels need at least one variant per decided sample")
    return 1.0 / (n + 1.0)


def difference_interval(
    k1: int, n1: int, k2: int, n2: int, level: float = 0.95
) -> tuple[float, float]:
    """Newcombe's hybrid score interval for the difference of two proportions k1/n1 − k2/n2
    (from each one's Wilson interval): well-behaved at rates near 0 or 1 and small n."""
    if n1 == 0 or n2 == 0:
        return (float("nan"), float("nan"))
    p1, p2 = k1 / n1, k2 / n2
    l1, u1 = stats.binomtest(k1, n1).proportion_ci(level, method="wilson")
    l2, u2 = stats.binomtest(k2, n2).proportion_ci(level, method="wilson")
    return (float(_newcombe_low(p1, l1, p2, u2)), float(p1 - p2 + np.hypot(u1 - p1, p2 - l2)))


def _newcombe_low(p1, low1, p2, high2):
    """The low end of Newcombe's interval of p1 − p2 from each proportion's Wilson bounds
    (arrays broadcast: ``detectable_excess`` decides every pair of counts at once)."""
    return (p1 - p2) - np.hypot(p1 - low1, high2 - p2)


def paired_difference_interval(
    both: int, only_first: int, only_second: int, neither: int, level: float = 0.95
) -> tuple[float, float]:
    """Newcombe's method 10 for the difference of two paired proportions (the same samples
    under two models): p1 − p2 = (only_first − only_second) / n, from each proportion's
    Wilson interval and the correlation of the pairs. For the audit's excess over a null
    model scored on the same samples, where an unpaired interval ignores the pairing."""
    n = both + only_first + only_second + neither
    if n == 0:
        return (float("nan"), float("nan"))
    k1, k2 = both + only_first, both + only_second
    p1, p2 = k1 / n, k2 / n
    l1, u1 = stats.binomtest(k1, n).proportion_ci(level, method="wilson")
    l2, u2 = stats.binomtest(k2, n).proportion_ci(level, method="wilson")
    margins = [(both + only_first), (only_second + neither), (both + only_second)]
    margins.append(only_first + neither)
    den = float(np.sqrt(np.prod(np.asarray(margins, dtype=float))))
    phi = (both * neither - only_first * only_second) / den if den else 0.0
    d = p1 - p2
    low = d - np.sqrt(max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
    high = d + np.sqrt(max(0.0, (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2))
    return float(low), float(high)


@functools.lru_cache(maxsize=64)
def _wilson_table(m: int, level: float) -> np.ndarray:
    """Wilson's interval (low, high) of k/m for every k in 0..m, as ``difference_interval``
    computes each (read-only: it is shared)."""
    table = np.array(
        [stats.binomtest(k, m).proportion_ci(level, method="wilson") for k in range(m + 1)]
    )
    table.flags.writeable = False
    return table


def detectable_excess(
    null_rate: float, n: int, n_null: int, power: float = 0.8, level: float = 0.95
) -> float:
    """The smallest excess d of a flag rate over an independent null's rate p₀ = ``null_rate``
    that the audit's own rule finds with probability ``power``: Newcombe's interval of the
    excess (``difference_interval``) above zero, ``n`` samples flagged at p₀ + d beside
    ``n_null`` at p₀. Exact: the rule is decided for every pair of counts once, and its
    probability summed over both binomials (a normal approximation promises 80% where the
    rule finds 70% at rates near 0.05 and 50 samples). What the audit's sizes can tell apart,
    whatever the benchmark's rate turns out to be; NaN where no rate up to 1 is found that
    often."""
    from scipy.optimize import brentq

    ks, ks_null = np.arange(n + 1), np.arange(n_null + 1)
    wilson, wilson_null = _wilson_table(n, level), _wilson_table(n_null, level)
    p1, p2 = (ks / n)[:, None], ks_null / n_null
    low = _newcombe_low(p1, wilson[:, :1], p2, wilson_null[:, 1])
    above = (low > 0) @ stats.binom.pmf(ks_null, n_null, null_rate)  # P(above | k flagged)

    def short(d: float) -> float:  # how far the rule's power at d falls short of ``power``
        return float(stats.binom.pmf(ks, n, min(1.0, null_rate + d)) @ above) - power

    top = 1 - null_rate
    if top <= 0 or short(top) < 0:
        return float("nan")
    return float(brentq(short, 0.0, top, xtol=1e-9)) if short(0.0) < 0 else 0.0


def flag_rate(
    flags: Sequence[bool | None],
    n_variants: int | Sequence[int],
    null_flags: Sequence[bool | None] | None = None,
    paired: bool = False,
) -> dict:
    """An audit without labels: the flag rate among decided samples, the nominal chance level
    (the mean of each decided sample's own 1/(n_i + 1)) with an exact Poisson-binomial test
    against it, the number of undecided samples, and, given flags from an empirical null,
    that null's rate and the excess over it. ``paired``: the null flags are a null model's on
    the same samples, in the same order — the excess is read on the samples both decide,
    with Newcombe's paired interval and McNemar's exact test (one-sided: more flags than the
    null); otherwise (control samples) Newcombe's interval for independent proportions and
    Fisher's exact test. Exchangeability rarely holds — an original's own names tend to be
    the most natural — so the nominal level alone overstates leakage; the empirical null is
    the comparison to trust."""
    values = list(flags)
    keep = decided(values)
    f = np.asarray([bool(v) for v, k in zip(values, keep, strict=True) if k], dtype=bool)
    if np.ndim(n_variants):
        n = np.asarray(n_variants)
        if len(n) != len(values):
            raise ValueError(f"{len(n)} variant counts for {len(values)} flags")
        n = n[keep]
    else:
        n = n_variants
    chances = chance_levels(n, int(f.size))
    out = {
        "flagged": int(f.sum()),
        "samples": len(values),
        "decided": int(f.size),
        "undecided": int((~keep).sum()),
        "rate": float(f.mean()) if f.size else float("nan"),
        "chance": float(chances.mean()) if f.size else float("nan"),
        "p_vs_chance": float(stats.poisson_binom(chances).sf(int(f.sum()) - 1))
        if f.size
        else float("nan"),
    }
    if null_flags is not None and paired:
        out.update(_paired_null(values, list(null_flags)))
    elif null_flags is not None:
        null = list(null_flags)
        g = np.asarray([bool(v) for v, k in zip(null, decided(null), strict=True) if k])
        table = [[int(f.sum()), int(f.size - f.sum())], [int(g.sum()), int(g.size - g.sum())]]
        low, high = difference_interval(int(f.sum()), int(f.size), int(g.sum()), int(g.size))
        out.update(
            null_rate=float(g.mean()) if g.size else float("nan"),
            null_undecided=int(len(null) - g.size),
            excess=out["rate"] - float(g.mean()) if g.size else float("nan"),
            excess_low=low,
            excess_high=high,
            p_vs_null=float(stats.fisher_exact(table, alternative="greater").pvalue),
            null_test="Fisher (independent samples)",
            excess_detectable=detectable_excess(float(g.mean()), int(f.size), int(g.size))
            if g.size and f.size
            else float("nan"),
        )
    return out


def _paired_null(values: list, null: list) -> dict:
    """The excess over a null model on the same samples: McNemar and the paired interval."""
    if len(null) != len(values):
        raise ValueError(f"{len(null)} null flags for {len(values)} flags: pairs need both")
    keep = decided(values) & decided(null)
    f = np.asarray([bool(v) for v, k in zip(values, keep, strict=True) if k], dtype=bool)
    g = np.asarray([bool(v) for v, k in zip(null, keep, strict=True) if k], dtype=bool)
    cells = [int(np.sum(f & g)), int(np.sum(f & ~g)), int(np.sum(~f & g)), int(np.sum(~f & ~g))]
    low, high = paired_difference_interval(*cells)
    discordant = cells[1] + cells[2]
    p = stats.binomtest(cells[1], discordant, 0.5, "greater").pvalue if discordant else 1.0
    return {
        "null_rate": float(g.mean()) if g.size else float("nan"),
        "null_undecided": int(len(null) - int(decided(null).sum())),
        "paired": int(f.size),
        "excess": float(f.mean() - g.mean()) if f.size else float("nan"),
        "excess_low": low,
        "excess_high": high,
        "p_vs_null": float(p),
        "null_test": "McNemar (paired)",
    }
