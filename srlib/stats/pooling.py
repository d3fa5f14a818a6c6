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
small-K correction that a few seeds need (a bootstrap over three seeds, however widened, reads
their spread as if it were known; S² on 2 degrees of freedom is anything but). Where the
seeds dominate it is the exact t interval for normal per-seed differences (a few seeds' AUC or
MCC differences are only roughly normal); where the shared problems add much, it is
conservative (Welch–Satterthwaite would give more degrees of freedom there, but it leans on
Var(c) being known, and a bootstrap estimate floored at zero made the far tails that Holm
reads anti-conservative in simulation). Two-sided p-values, equivalence (two one-sided tests
against ±margin) and one-sided p-values come from the same t. ``tests/test_pooling.py``
checks coverage and the family-wise error in both directions by simulation at the book's
own design (its seeds × 664 problems) in two regimes (its ``REGIMES``): the build's, where the
problems carry much of the variance, and one whose seed spread is several times the build's;
its ``RULED_OUT`` says which family-wise rate each check rules out — in the second regime,
not 5%."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy.stats import chi2, t


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
        what Holm spends first) finds with probability ``power`` at this design's variance
        parts and K (``detectable``)."""
        return detectable(self.problem_var, self.seed_sd**2, self.seeds, family, alpha, power)

    def power(self, effect: float, family: int = 1, alpha: float = 0.05) -> float:
        """The probability that a true difference ``effect`` is found at this design
        (``power``)."""
        return power(self.problem_var, self.seed_sd**2, self.seeds, effect, family, alpha)

    def seeds_needed(self, effect: float, family: int = 1, equivalence: bool = False) -> float:
        """``seeds_needed`` at this design's variance parts."""
        return seeds_needed(self.problem_var, self.seed_sd**2, effect, family, equivalence)


def pool(difference: float, seed_values: np.ndarray, problem_var: float) -> Pooled:
    """A ``Pooled`` from the pooled difference, the per-seed ones and Var(c)."""
    values = np.asarray(seed_values, dtype=float)
    if values.size < 2:
        raise ValueError("a pool needs at least 2 seeds")
    return Pooled(float(difference), values, float(problem_var))


_GRID = 400
"""Quantiles of the seeds' variance estimate that ``power`` averages over (midpoints of equal
probability: an integral exact to well under a point of power)."""


@lru_cache(maxsize=256)
def _chi2_grid(df: int) -> np.ndarray:
    """χ²(df)/df at ``_GRID`` midpoint quantiles: the law of S²/σ² (fixed: no RNG)."""
    return chi2.ppf((np.arange(_GRID) + 0.5) / _GRID, df) / df


def power(
    problem_var: float,
    seed_var: float,
    seeds: int,
    effect: float,
    family: int = 1,
    alpha: float = 0.05,
    equivalence: bool = False,
) -> float:
    """The probability that the pooled test at this design decides as hoped, computed
    exactly for its model (D̄ normal around the true difference with variance
    Var(c) + σ²/K, Var(c) known, S² = σ²·χ²(K − 1)/(K − 1) independent of D̄): averaged over
    the law of S², the chance that the size of D̄ exceeds t(K − 1, 1 − α/2m)·√(Var(c) + S²/K)
    for a true difference ``effect`` (two-sided at α/m: Holm's first step, so a lower bound for a
    contrast that is not its family's smallest p); with ``equivalence``, that a true
    difference of 0 is shown within ±``effect`` (two one-sided tests at α/m). Where the seeds
    dominate this is the noncentral t's power; where Var(c) does, the normal's. The sentence
    "detects X with 80% power" reads ``detectable``, which inverts it; ``tests/test_power.py``
    checks it against the family verdicts of simulated testbeds at the book's design.
    The standard normal's and Student's t's functions come from ``scipy.special``, the kernels
    ``scipy.stats.norm`` and ``t`` call (the same numbers) without their per-call checks: the
    simulations call this many thousand times."""
    from scipy.special import ndtr, stdtrit

    if seeds < 2:
        raise ValueError(f"power needs at least 2 seeds, got {seeds}")
    df = seeds - 1
    sd = np.sqrt(problem_var + seed_var / seeds)
    se_hat = np.sqrt(problem_var + seed_var * _chi2_grid(df) / seeds)
    if sd == 0:  # the difference is known: found wherever it is not 0; equivalent inside
        return float(effect > 0) if equivalence else float(effect != 0)
    if equivalence:
        bound = effect - stdtrit(df, 1 - alpha / family) * se_hat
        return float(np.mean(np.clip(ndtr(bound / sd) - ndtr(-bound / sd), 0, 1)))
    cut = stdtrit(df, 1 - alpha / (2 * family)) * se_hat
    return float(np.mean(ndtr(-((cut - effect) / sd)) + ndtr((-cut - effect) / sd)))


@dataclass(frozen=True)
class PowerRange:
    """A design's power where the seeds' SD is itself an estimate on ``df`` degrees of
    freedom (``power_range``): at the estimate (``point``), averaged over what the true SD may
    be given it (``expected``: the number the "a verdict is (not) to be expected" sentences
    read), and at the top of its 95% range (``at_top``)."""

    point: float
    expected: float
    at_top: float
    df: int

    def said(self) -> str:
        """The three powers in words: at the estimated seed SD, expected over its uncertainty
        (with ``df``), at the top of its 95% range."""
        return (
            f"{self.point:.0%} at the estimated seed SD, {self.expected:.0%} expected over its"
            f" uncertainty ({self.df} degrees of freedom), {self.at_top:.0%} at the top of its"
            " 95% range"
        )


def power_range(
    problem_var: float,
    seed_var: float,
    seeds: int,
    effect: float,
    family: int = 1,
    df: int = 2,
    alpha: float = 0.05,
) -> PowerRange:
    """``power`` when ``seed_var`` is an estimate S² on ``df`` degrees of freedom, not the
    true σ²: σ² = S²·df/X with X ~ χ²(df) (the interval a χ² law gives the true variance of
    a normal sample; Var(c), read on many problems, is taken as known). ``expected`` averages
    the power over that law (at ``_GRID`` midpoint quantiles, like ``power`` itself);
    ``at_top`` is the power at σ² = S²·df/χ²(df, 0.025), the top of its 95% interval."""
    if df < 1:
        raise ValueError(f"an estimated SD needs at least 1 degree of freedom, got {df}")
    true_var = seed_var / _chi2_grid(df)  # S²·df/X, X/df at the grid's quantiles
    each = [power(problem_var, v, seeds, effect, family, alpha) for v in true_var]
    top = seed_var * df / chi2.ppf(0.025, df)
    return PowerRange(
        point=power(problem_var, seed_var, seeds, effect, family, alpha),
        expected=float(np.mean(each)),
        at_top=power(problem_var, top, seeds, effect, family, alpha),
        df=df,
    )


def detectable(
    problem_var: float,
    seed_var: float,
    seeds: int,
    family: int = 1,
    alpha: float = 0.05,
    target: float = 0.8,
) -> float:
    """The true difference found with probability ``target`` (``power``) at this design: the
    root of power(effect) = target (0 where both variance parts are 0: every difference is
    then found)."""
    from scipy.optimize import brentq

    sd = np.sqrt(problem_var + seed_var / seeds)
    if sd == 0:
        return 0.0
    hi = sd
    while power(problem_var, seed_var, seeds, hi, family, alpha) < target:
        hi *= 2
    return float(brentq(lambda e: power(problem_var, seed_var, seeds, e, family, alpha) - target,
                        0.0, hi, xtol=sd * 1e-6))  # fmt: skip


def seeds_needed(
    problem_var: float,
    seed_var: float,
    effect: float,
    family: int = 1,
    equivalence: bool = False,
    alpha: float = 0.05,
    target: float = 0.8,
    cap: int = 1000,
) -> float:
    """The fewest seeds K' (≥ 2) at which a difference of ``effect`` is found with probability
    ``target`` (two-sided at α/m), or, with ``equivalence``, a true difference of 0 is shown
    within ±``effect`` with it (two one-sided tests at α/m), the problems' part Var(c) staying
    whatever the seeds (``power`` at K'). Infinite where even ``cap`` seeds do not reach it
    (Var(c) alone is too large: more problems are needed). The test is two-sided: a
    negative ``effect`` needs the seeds its size does."""
    effect = abs(effect)
    if effect == 0:
        return float("inf")

    def enough(k: int) -> bool:
        return power(problem_var, seed_var, k, effect, family, alpha, equivalence) >= target

    k = 2
    while k < cap and not enough(k):
        k = k + 1 if k < 64 else min(k * 2, cap)
    if not enough(k):
        return float("inf")
    if k > 64:  # doubled past the answer: search back between the last two tries
        lo, hi = k // 2, k
        while hi - lo > 1:
            mid = (lo + hi) // 2
            ok = power(problem_var, seed_var, mid, effect, family, alpha, equivalence) >= target
            lo, hi = (lo, mid) if ok else (mid, hi)
        k = hi
    return float(k)
