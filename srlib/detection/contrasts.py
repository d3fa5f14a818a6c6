"""Declared contrasts between detectors, each a paired difference with its interval: the one
place the book compares two detectors (which contrasts, and why: ``declared``).

A contrast is arm A against arm B on one metric, each arm a detector at a threshold mode
(``operating``: ``none``, ``scores``, ``calibrated``, ``matched`` on the calibration split,
``null`` — matched on the null controls' evaluated problems — ``heldout`` — matched on the
leaked model's held-out half — both cross-fitted, or ``oracle``). A threshold-free rule may
also be calibrated: its margin is then thresholded like a score. An arm of several detectors
is the *best* of them, chosen anew in every resample (the selection's optimism is then part
of the interval), or their *mean* (the paper's average over baselines). All detectors are
read on one **common decided set**, so no arm is scored on samples another drops.

**One part** (a seed): the percentile interval of the differences over resamples of the
problems, the calibration problems drawn alongside (thresholds re-set and re-matched inside
every resample); two-sided p twice the smaller share of resampled differences on either side
of zero (< 0.05 exactly where the 95% interval excludes zero), equivalence p by two one-sided
tests against ±``margin`` (the larger share beyond either bound).

**Several parts pooled** (seeds, each its own trained models, scoring the same problems):
the pooled difference D̄, the **mean of the K per-seed differences** (each arm's value the
mean of its per-seed values: a metric computed on all seeds' rows at once would rank one
seed's problems against another's, so a shift of scale between models would enter even an
AUC), ± t(K − 1)·√(Var(c) + S²/K) (``stats.pooling``): Var(c) what the shared problems add to
every seed alike (the covariance between seeds' differences over problem resamples, seeds
held fixed), S² the spread of the K per-seed differences; p-values, equivalence and the
paper's one-sided tests from the same t. A contrast with selection ("best of A − best of B" =
max_i min_j (A_i − B_j)) gets simultaneous bounds instead, on all seeds' rows: every pairwise
difference D_ij widened by the 97.5% quantile of the largest deviation ``max_ij |D*_ij − D_ij|``
in that direction over a two-stage bootstrap (seeds, then problems; spread widened by
√(K/(K − 1))), the bounds through the same max-min. Each group (each seed alone, the pool,
each named sub-pool) draws from a random stream of its own.

A family (``declared.FAMILIES``) is judged family-wise: each set of p-values Holm-adjusted
across the family within each part, and ``family_verdict`` reads "better" or "worse" where
the difference is significant, else "equivalent" where equivalence is, else
"inconclusive". The paper's rows (role ``paper``) are tested one-sided against the paper's
gain (``declared.PAPER_GAIN``) and against zero, Holm across them, and read as
``PAPER_VERDICTS`` says. Beside each:
the difference the design detects with 80% power (``stats.pooling.detectable``), the seeds
a ``margin`` would need to be detected and to be shown equivalent (Var(c) does not shrink
with seeds), the per-seed spread, and each arm's realised flag rates on the null controls and
on the leaked model's held-out and leaked halves (``operating.realised``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from srlib.detection.arms import METRICS, Arm, Contrast
from srlib.detection.declared import FAMILIES, PAPER_GAIN
from srlib.detection.operating import Part, flags, part, realised
from srlib.detection.verdicts import POOLED
from srlib.stats.metrics import RANKING, count_metric
from srlib.stats.pooling import pool, problem_variance
from srlib.stats.resample import ProblemResampler
from srlib.stats.significance import (
    NO_VERDICT,
    bootstrap_p,
    collapsed,
    detectable,
    equivalence_p,
    holm,
    testable,
)
from srlib.stats.verdicts import difference


def _metric(name: str, y: np.ndarray, f: np.ndarray) -> float:
    """MCC, F1 or TPR of flags ``f`` against labels ``y`` (0 where undefined), or the AUC of
    scores ``f`` (a missing score ranks lowest)."""
    if name == "auc":
        return float(RANKING["roc_auc"](y, np.nan_to_num(np.asarray(f, float), nan=-np.inf)))
    return count_metric(METRICS[name], *_counts(y, f))


def _counts(y: np.ndarray, f: np.ndarray) -> tuple[float, float, float, float]:
    """TP, FP, FN, TN of flags ``f`` against labels ``y``."""
    f = np.asarray(f, dtype=bool)
    tp, fp = np.count_nonzero(y & f), np.count_nonzero(~y & f)
    fn = np.count_nonzero(y) - tp
    return float(tp), float(fp), float(fn), float(y.size - tp - fp - fn)


def _values(parts: list[Part], needed, draws, fpr: float, each: bool = False, pool: bool = True):
    """(detector, mode, metric) → the metric on the parts' resamples pooled (a part not drawn
    in this resample, under the two-stage bootstrap, adds no row; not ``pool``: skipped) and,
    with ``each``, per part: (pooled, [per part]). Each detector's flags are computed once per
    mode."""
    drawn = [(i, p, d) for i, (p, d) in enumerate(zip(parts, draws, strict=True)) if d[0].size]
    ys = [p.y[d[0]] for _, p, d in drawn]
    y = np.concatenate(ys)
    made: dict = {}
    memos: list[dict] = [{} for _ in drawn]  # per part: what its draw's thresholds share
    pooled, per = {}, [{} for _ in parts]
    for name, mode, metric in needed:
        if (name, mode) not in made:
            made[name, mode] = [
                flags(p, name, mode, d, fpr, memo)
                for (_, p, d), memo in zip(drawn, memos, strict=True)
            ]
        got, key = made[name, mode], (name, mode, metric)
        if metric == "auc":
            if pool:
                pooled[key] = _metric("auc", y, np.concatenate(got))
            counts = None
        else:
            counts = [_counts(yi, fi) for yi, fi in zip(ys, got, strict=True)]
            if pool:
                pooled[key] = count_metric(METRICS[metric], *np.sum(counts, axis=0))
        for j, ((i, _, _), yi, fi) in enumerate(zip(drawn, ys, got, strict=True)):
            if each:
                per[i][key] = _metric("auc", yi, fi) if counts is None else count_metric(
                    METRICS[metric], *counts[j])  # fmt: skip
    return pooled, per


def _arm(values: dict, arm: Arm, metric: str) -> np.ndarray:
    """An arm's members' values on one draw (their mean, for a ``mean`` arm)."""
    v = np.array([values[n, arm.mode, metric] for n in arm.detectors])
    return v.mean(keepdims=True) if arm.pool == "mean" else v


def _pairs(values: dict, c: Contrast) -> np.ndarray:
    """D_ij = A_i − B_j for every member i of arm A and j of arm B, on one draw."""
    return _arm(values, c.a, c.metric)[:, None] - _arm(values, c.b, c.metric)[None, :]


def _interval(point: np.ndarray, boots: np.ndarray, level: float) -> tuple[float, float]:
    """Bounds of max_i min_j D_ij from the pairwise differences and their resamples: the
    percentile interval for one pair, simultaneous (max-T) bounds for a selection."""
    if point.size == 1:
        lo, hi = np.quantile(boots.reshape(len(boots)), [(1 - level) / 2, (1 + level) / 2])
        return float(lo), float(hi)
    q = (1 + level) / 2
    over = np.quantile((boots - point).reshape(len(boots), -1).max(axis=1), q)
    under = np.quantile((point - boots).reshape(len(boots), -1).max(axis=1), q)
    return float((point - over).min(axis=1).max()), float((point + under).min(axis=1).max())


def contrast_table(
    parts: Mapping[str, tuple],
    contrasts: Sequence[Contrast],
    fpr: float = 0.05,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    pooled: bool = True,
    subsets: Mapping[str, Sequence[str]] | None = None,
    margin: float = 0.05,
    each: bool = True,
) -> pd.DataFrame:
    """Each contrast's difference A − B with its paired interval and verdict, per part (e.g.
    seed: part name → its long table, calibration long table and, optionally, its null
    control's long table on the same problems, as ``compare.long_table`` makes them) and,
    with ``pooled`` and more than one part, pooled over all parts and over each of the named
    ``subsets`` of them that has at least two parts and fewer than all (e.g. the seeds the
    settings were not tuned on); not ``each``: the pools only (simulations). Columns:
    contrast, role, part, a, b, metric, a_value, b_value, difference, low, high, n, interval
    ("percentile", "t" or "simultaneous"), verdict, p, se, df, detectable (the difference
    found with 80% power), seeds_needed and seeds_needed_equivalence (for ``margin``),
    p_equivalent (within ±``margin``), seed_sd (the spread of the per-seed differences) and
    problem_se (√Var(c)), the arms' realised flag rates (a/b_null_rate, a/b_held_out_rate,
    a/b_leaked_rate), for the paper's rows its reported gain, the one-sided p-values
    p_below_gain and p_above_zero, and, per family (``declared.FAMILIES``) and for the paper's
    rows, p_holm, p_equivalent_holm and family_verdict."""
    contrasts = list(contrasts)
    used = {n for c in contrasts for arm in (c.a, c.b) for n in arm.detectors}
    used |= {arm.matched_to for c in contrasts for arm in (c.a, c.b) if arm.matched_to}
    built = {name: part(*tables[:2], used, *tables[2:]) for name, tables in parts.items()}
    options = {"fpr": fpr, "n_boot": n_boot, "seed": seed, "level": level, "margin": margin}
    return contrast_parts(built, contrasts, pooled, subsets, each, **options)


def contrast_parts(
    built: Mapping[str, Part],
    contrasts: Sequence[Contrast],
    pooled: bool = True,
    subsets: Mapping[str, Sequence[str]] | None = None,
    each: bool = True,
    fpr: float = 0.05,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    margin: float = 0.05,
) -> pd.DataFrame:
    """``contrast_table`` on parts already as arrays (``operating.part``,
    ``operating.from_arrays``): what simulations call."""
    if not contrasts:
        return pd.DataFrame(columns=COLUMNS)
    if n_boot < 2:
        raise ValueError(f"n_boot must be at least 2 (a spread needs two resamples), got {n_boot}")
    needed = {
        (n, arm.mode, c.metric) for c in contrasts for arm in (c.a, c.b) for n in arm.detectors
    }
    groups = [(name, [p]) for name, p in built.items()] if each or len(built) == 1 else []
    if pooled and len(built) > 1:
        groups.append((POOLED, list(built.values())))
        for label, names in (subsets or {}).items():
            chosen = [built[n] for n in names if n in built]
            if 1 < len(chosen) < len(built):
                groups.append((label, chosen))
    family = Counter(c.role for c in contrasts)
    rows = []
    for k, (part_name, members) in enumerate(groups):
        rng = np.random.default_rng([seed, k])  # a stream of its own per seed and pool
        sampler, many = ProblemResampler(members), len(members) > 1
        full, seeds_full = _values(members, needed, sampler.all(), fpr, many)
        boots = [  # a pool's resamples are read per seed only (its selections: ``_two_stage``)
            _values(members, needed, sampler.draw(rng), fpr, many, pool=not many)
            for _ in range(n_boot)
        ]
        chosen = [c for c in contrasts if _pairs(full, c).size > 1]
        two_stage = _two_stage(members, chosen, rng, n_boot, fpr) if many and chosen else []
        for c in contrasts:
            point = _pairs(full, c)
            m = family[c.role] if c.role in FAMILIES or c.role == "paper" else 1
            gain = PAPER_GAIN.get(c.a.detectors[0], np.nan) if c.role == "paper" else np.nan
            if point.size > 1:
                stats = _selected(point, two_stage or [b[0] for b in boots], c, level, len(members))
            elif many:
                each_seed = [_pairs(v, c).item() for v in seeds_full]
                draws = [[_pairs(v, c).item() for v in b[1]] for b in boots]
                stats = _pooled(float(np.mean(each_seed)), each_seed, draws, gain, level, margin, m)
            else:
                resampled = np.array([_pairs(b[0], c).item() for b in boots])
                stats = _percentile(point.item(), resampled, gain, level, margin, m)
            if many and point.size == 1:  # the mean of the seeds' values
                a = float(np.mean([_arm(v, c.a, c.metric).item() for v in seeds_full]))
                b = float(np.mean([_arm(v, c.b, c.metric).item() for v in seeds_full]))
            else:
                a, b = _arm(full, c.a, c.metric).max(), _arm(full, c.b, c.metric).max()
            rows.append(
                {
                    "contrast": c.name,
                    "role": c.role,
                    "part": part_name,
                    "a": c.a.label,
                    "b": c.b.label,
                    "metric": c.metric,
                    "a_value": a,
                    "b_value": b,
                    "difference": a - b,
                    **stats,
                    "n": int(sum(p.y.size for p in members)),
                    "seeds": len(members),
                    "verdict": difference(
                        c.a.label,
                        c.b.label,
                        a - b,
                        stats["low"],
                        stats["high"],
                        c.metric.upper(),
                        tested=not collapsed(stats["se"]),
                    ),
                    "margin": margin,
                    "paper_gain": gain,
                    **_rates(members, c, fpr),
                }
            )
    return _paper(_family(pd.DataFrame(rows)))


def _two_stage(members: list[Part], chosen: list[Contrast], rng, n_boot: int, fpr: float):
    """Values of the selection contrasts' detectors over a two-stage bootstrap (seeds, then
    problems), with their spread widened by √(K/(K − 1)) where they are read."""
    needed = {(n, arm.mode, c.metric) for c in chosen for arm in (c.a, c.b) for n in arm.detectors}
    sampler = ProblemResampler(members, models=True)
    return [_values(members, needed, sampler.draw(rng), fpr)[0] for _ in range(n_boot)]


def _selected(point: np.ndarray, boots: list[dict], c: Contrast, level: float, units: int):
    """Simultaneous bounds of a selection contrast (no p-value: it is in no family)."""
    resampled = np.array([_pairs(v, c) for v in boots])
    if units > 1:  # K parts resampled: their spread is (K − 1)/K of the truth's
        resampled = point + np.sqrt(units / (units - 1)) * (resampled - point)
    low, high = _interval(point, resampled, level)
    return {"low": low, "high": high, "interval": "simultaneous", **_NO_TEST}


_NO_TEST = {
    "p": np.nan,
    "se": np.nan,
    "df": np.nan,
    "detectable": np.nan,
    "seeds_needed": np.nan,
    "seeds_needed_equivalence": np.nan,
    "p_equivalent": np.nan,
    "seed_sd": np.nan,
    "problem_se": np.nan,
    "p_below_gain": np.nan,
    "p_above_zero": np.nan,
}


def _percentile(point, resampled, gain: float, level: float, margin: float, m: int) -> dict:
    """One part: the percentile interval and bootstrap p-values of a single pair (one-sided
    against the paper's ``gain`` where it has one)."""
    low, high = _interval(np.array([[point]]), resampled.reshape(-1, 1, 1), level)
    se = float(resampled.std())
    if not testable(se):  # a collapsed bootstrap: no test (``testable``)
        return {**_NO_TEST, "low": low, "high": high, "interval": "percentile", "se": se}
    return {
        **_NO_TEST,
        "low": low,
        "high": high,
        "interval": "percentile",
        "p": bootstrap_p(resampled),
        "se": se,
        "detectable": detectable(se, m),
        "p_equivalent": equivalence_p(resampled, margin),
        "p_below_gain": float(np.mean(resampled >= gain)) if gain == gain else np.nan,
        "p_above_zero": float(np.mean(resampled <= 0)) if gain == gain else np.nan,
    }


def _pooled(point, each_seed, draws, gain: float, level: float, margin: float, m: int) -> dict:
    """Several parts: the t interval of ``stats.pooling`` and its tests (one-sided against the
    paper's ``gain`` where it has one)."""
    pooled = pool(point, np.array(each_seed), problem_variance(np.array(draws)))
    low, high = pooled.interval(level)
    if not testable(pooled.se):  # every seed and resample the same: no test (``testable``)
        return {**_NO_TEST, "low": low, "high": high, "interval": "t", "se": pooled.se}
    return {
        "low": low,
        "high": high,
        "interval": "t",
        "p": pooled.p(),
        "se": pooled.se,
        "df": pooled.df,
        "detectable": pooled.detectable(m),
        "seeds_needed": pooled.seeds_needed(margin, m),
        "seeds_needed_equivalence": pooled.seeds_needed(margin, m, equivalence=True),
        "p_equivalent": pooled.p_equivalent(margin),
        "seed_sd": pooled.seed_sd,
        "problem_se": float(np.sqrt(pooled.problem_var)),
        "p_below_gain": pooled.p_below(gain) if gain == gain else np.nan,
        "p_above_zero": pooled.p_above(0.0) if gain == gain else np.nan,
    }


def _rates(members: list[Part], c: Contrast, fpr: float) -> dict:
    """Each arm's realised flag rates (``operating.realised``), the mean over the parts: on
    the null controls' evaluated problems, on the leaked run's held-out half and on its
    leaked half. Read for a single detector per arm at a decision threshold; NaN otherwise."""
    out = {}
    for side, arm in (("a", c.a), ("b", c.b)):
        fixed = len(arm.detectors) == 1 and arm.threshold != "scores"
        rates = [realised(p, arm.detectors[0], arm.mode, fpr) for p in members] if fixed else []
        for i, what in enumerate(("null", "held_out", "leaked")):
            got = np.array([r[i] for r in rates], dtype=float)
            got = got[~np.isnan(got)]
            out[f"{side}_{what}_rate"] = float(got.mean()) if got.size else np.nan
    return out


def _family(table: pd.DataFrame, alpha: float = 0.05) -> pd.DataFrame:
    """Holm-adjusted p-values across each family's contrasts (``declared.FAMILIES``) of each
    part — for a difference and for equivalence within the margin — and the family-wise
    verdict they give: "better" or "worse" where the difference is significant, else
    "equivalent" where equivalence is, else "inconclusive" (no evidence either way: not "no
    difference"). A family's or the paper's contrast with a difference but no test
    (``testable``) gets ``NO_VERDICT`` and is left out of its Holm step. Secondary contrasts:
    their own intervals only."""
    table["p_holm"] = np.nan
    table["p_equivalent_holm"] = np.nan
    table["family_verdict"] = ""
    untested = table.role.isin((*FAMILIES, "paper")) & table.p.isna() & table.difference.notna()
    table.loc[untested & (table.interval != "simultaneous"), "family_verdict"] = NO_VERDICT
    family = table[table.role.isin(FAMILIES) & table.p.notna()]
    for _, g in family.groupby(["role", "part"], sort=False):
        adjusted = holm(g.p.to_numpy())
        equivalent = holm(g.p_equivalent.to_numpy())
        table.loc[g.index, "p_holm"] = adjusted
        table.loc[g.index, "p_equivalent_holm"] = equivalent
        table.loc[g.index, "family_verdict"] = [
            ("better" if d > 0 else "worse")
            if q < alpha
            else ("equivalent" if e < alpha else "inconclusive")
            for d, q, e in zip(g.difference, adjusted, equivalent, strict=True)
        ]
    return table


def _paper(table: pd.DataFrame, alpha: float = 0.05) -> pd.DataFrame:
    """The paper's rows, one-sided, Holm-adjusted once across both directions of every row of
    a part (2m tests): "smaller but positive" where the gain is shown both below the paper's
    and above zero; "not reproduced here" where it is shown below the paper's only;
    "reproduced" where it is shown above zero only (a weak reproduction of a large claim: the
    interval says how weak); else "inconclusive"."""
    table["p_above_zero_holm"] = np.nan
    paper = table[(table.role == "paper") & table.p_below_gain.notna()]
    for _, g in paper.groupby("part", sort=False):
        both = holm(np.concatenate([g.p_below_gain.to_numpy(), g.p_above_zero.to_numpy()]))
        below, above = both[: len(g)], both[len(g) :]
        table.loc[g.index, "p_holm"] = below
        table.loc[g.index, "p_equivalent_holm"] = np.nan
        table.loc[g.index, "family_verdict"] = [
            PAPER_VERDICTS[b < alpha, a < alpha] for b, a in zip(below, above, strict=True)
        ]
        table.loc[g.index, "p_above_zero_holm"] = above
    return table


PAPER_VERDICTS = {
    (True, True): "smaller but positive",
    (True, False): "not reproduced here",
    (False, True): "reproduced",
    (False, False): "inconclusive",
}
"""(shown below the paper's gain, shown above zero) → the paper row's verdict."""

COLUMNS = (
    *("contrast", "role", "part", "a", "b", "metric", "a_value", "b_value", "difference"),
    *("low", "high", "interval", *_NO_TEST, "n", "seeds", "verdict", "margin", "paper_gain"),
    *(f"{arm}_{what}_rate" for arm in "ab" for what in ("null", "held_out", "leaked")),
    *("p_holm", "p_equivalent_holm", "family_verdict", "p_above_zero_holm"),
)
"""Every column a contrast table has (a table of rows that could not be computed has them
too, empty, so that what reads it selects them as it would)."""
