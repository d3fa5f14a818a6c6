"""A difference pooled over K seeds whose models differ and whose problems are shared: its
standard error, degrees of freedom, tests and the seeds a margin needs.

Each seed k gives a difference D_k = θ + c + s_k: c is what the problems add, **the same in
every seed** (every seed scores the same evaluated problems), and s_k what the seed adds on
its own (its trained models, its leaked/held-out split, the problem noise that split brings).
The pooled difference D̄ then varies as Var(c) + Var(s)/K, and more seeds shrink only the
second part. Both parts are estimated, each from what repeats:

- the problems' part ``problem_var`` = Var(c): the mean covariance between two seeds'
  differences over resamples of the problems, every seed held fixed and each drawn problem
  bringing its rows of every seed (``problem_variance``); what the seeds share;
- the seeds' part S²/K: S² the sample variance of the K per-seed differences (c cancels in
  it), on K − 1 degrees of freedom.

The interval is D̄ ± t(K − 1)·√(Var(c) + S²/K): the t of K − 1 degrees of freedom, the
small-K correction that three seeds need (a bootstrap over three seeds, however widened, reads
their spread as if it were known; S² on 2 degrees of freedom is anything but). Where the
seeds dominate it is the exact t interval; where the shared problems add much, it is
conservative (Welch–Satterthwaite would give more degrees of freedom there, but it leans on
Var(c) being known, and a bootstrap estimate floored at zero made the far tails that Holm
reads anti-conservative in simulation). Two-sided p-values, equivalence (two one-sided tests
against ±margin) and one-sided p-values come from the same t. ``tests/test_pooling.py``
checks coverage and the family-wise error in both directions by simulation at the book's
own design (3 seeds × 664 problems), with a seed spread as large as the build's own."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy.stats import t


def problem_variance(seed_draws: np.ndarray) -> float:
    """Var(c) from per-seed differences over problem resamples (draws × K, seeds fixed): the
    mean covariance between two seeds' columns, floored at 0 (what the shared problems move
    in every seed alike)."""
    d = np.asarray(seed_draws, dtype=float)
    if d.ndim != 2 or d.shape[1] < 2 or d.shape[0] < 2:
        raise ValueError(f"need draws × seeds with ≥ 2 of each, got shape {d.shape}")
    cov = np.cov(d, rowvar=False)
    return max(float(cov[~np.eye(d.shape[1], dtype=bool)].mean()), 0.0)


@dataclass(frozen=True)
class Pooled:
    """A pooled difference, the K per-seed ones and the variance parts its tests read."""

    difference: float
    seed_values: np.ndarray  # D_k, one per seed
    problem_var: float  # Var(c): the shared problems' part

    @property
    def seeds(self) -> int:
        """K."""
        return len(self.seed_values)

    @property
    def seed_sd(self) -> float:
        """S: the spread of the per-seed differences."""
        return float(np.std(self.seed_values, ddof=1))

    @property
    def se(self) -> float:
        """√(Var(c) + S²/K)."""
        return float(np.sqrt(self.problem_var + self.seed_sd**2 / self.seeds))

    @property
    def df(self) -> int:
        """K − 1."""
        return self.seeds - 1

    def _z(self, bound: float = 0.0) -> float:
        """(D̄ − bound) / se, ±inf where se is 0 and they differ."""
        gap = self.difference - bound
        if self.se > 0:
            return gap / self.se
        return 0.0 if gap == 0 else float(np.sign(gap) * np.inf)

    def interval(self, level: float = 0.95) -> tuple[float, float]:
        """D̄ ± t(K − 1, (1 + level)/2)·se."""
        half = float(t.ppf((1 + level) / 2, self.df)) * self.se
        return self.difference - half, self.difference + half

    def p(self) -> float:
        """Two-sided p of no difference."""
        return float(min(1.0, 2 * t.sf(abs(self._z()), self.df)))

    def p_equivalent(self, margin: float) -> float:
        """Two one-sided tests that the difference lies within ±margin: the larger p."""
        return float(max(t.sf(self._z(-margin), self.df), t.cdf(self._z(margin), self.df)))

    def p_below(self, bound: float) -> float:
        """One-sided p of "the difference is at least ``bound``" (small: it is below)."""
        return float(t.cdf(self._z(bound), self.df))

    def p_above(self, bound: float = 0.0) -> float:
        """One-sided p of "the difference is at most ``bound``" (small: it is above)."""
        return float(t.sf(self._z(bound), self.df))

    def detectable(self, family: int = 1, alpha: float = 0.05, power: float = 0.8) -> float:
        """The true difference a two-sided test at α (Bonferroni-split across ``family``,
        what Holm spends first) finds with probability ``power`` at this design:
        (t(K − 1, 1 − α/2m) + t(K − 1, power))·se."""
        df = self.df
        return float((t.ppf(1 - alpha / (2 * family), df) + t.ppf(power, df)) * self.se)

    def seeds_needed(self, effect: float, family: int = 1, equivalence: bool = False) -> float:
        """``seeds_needed`` at this design's variance parts."""
        return seeds_needed(self.problem_var, self.seed_sd**2, effect, family, equivalence)


def pool(difference: float, seed_values: np.ndarray, problem_var: float) -> Pooled:
    """A ``Pooled`` from the pooled difference, the per-seed ones and Var(c)."""
    values = np.asarray(seed_values, dtype=float)
    if values.size < 2:
        raise ValueError("a pool needs at least 2 seeds")
    return Pooled(float(difference), values, float(problem_var))


@lru_cache(maxsize=64)
def _quantiles(family: int, equivalence: bool, alpha: float, power: float, cap: int) -> np.ndarray:
    """The t quantiles ``seeds_needed`` multiplies se(K') by, for K' = 2 … cap (the same for
    every contrast of a family: computed once)."""
    df = np.arange(1, cap)
    if equivalence:
        return t.ppf(1 - alpha / family, df) + t.ppf((1 + power) / 2, df)
    return t.ppf(1 - alpha / (2 * family), df) + t.ppf(power, df)


def seeds_needed(
    problem_var: float,
    seed_var: float,
    effect: float,
    family: int = 1,
    equivalence: bool = False,
    alpha: float = 0.05,
    power: float = 0.8,
    cap: int = 10_000,
) -> float:
    """The fewest seeds K' (≥ 2) at which a difference of ``effect`` is found with ``power``
    (two-sided at α/m), or, with ``equivalence``, a true difference of 0 is shown within
    ±``effect`` with ``power`` (two one-sided tests at α/m), the problems' part Var(c) staying
    whatever the seeds: se(K') = √(Var(c) + S²/K'), t on K' − 1. Infinite where even
    ``cap`` seeds do not reach it (Var(c) alone is too large: more problems are needed)."""
    k = np.arange(2, cap + 1)
    se = np.sqrt(problem_var + seed_var / k)
    ok = np.flatnonzero(_quantiles(family, equivalence, alpha, power, cap) * se <= effect)
    return float(k[ok[0]]) if ok.size else float("inf")
