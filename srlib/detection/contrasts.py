"""Declared contrasts between detectors, each a paired difference with its bootstrap
interval: the one place the book compares two detectors.

A contrast is declared in code (``preregistered``): arm A against arm B, each a detector at
a threshold mode (``operating``: ``none``, ``scores``, ``calibrated``, ``matched`` on the
calibration split, ``null`` — matched on the null controls' evaluated problems, cross-fitted
— or ``oracle``). A threshold-free rule may also be calibrated: its margin is then
thresholded like a score. An arm may name several detectors: it is then the *best* of them,
chosen anew in every resample, so the selection's optimism is part of the interval. The
primary family was changed twice, the first time after a result had been seen; the detection
chapter says when and why.

The interval resamples what the difference depends on, together: the evaluated problems,
the calibration problems (thresholds re-set in every resample) and, pooled over several
parts (seeds, each its own trained models), the parts themselves — a two-stage bootstrap
(``stats.resample.ProblemResampler``) whose spread is widened by √(K/(K − 1)) for K parts,
the small-sample correction of a mean over K units. All detectors are read on one **common
decided set**, so no arm is scored on samples another drops. Each group (each seed alone,
the pool, and the pool without the tuning seed) draws from a random stream of its own.

A contrast of two fixed detectors gets the percentile interval of its resampled
differences. A contrast with selection ("best of A − best of B" = max_i min_j (A_i − B_j))
gets simultaneous bounds instead: every pairwise difference D_ij is widened by the 97.5%
quantile of the largest deviation max_ij |D*_ij − D_ij| in that direction over the resamples
(the bootstrap max-T), and the bounds go through the same max-min (both tested).

A family (``FAMILIES``: the primary contrasts; a researcher's own, role ``"plug-in"``) is
judged family-wise. Each fixed pair gets a two-sided bootstrap p-value (twice the smaller
share of resampled differences on either side of zero, so p < 0.05 exactly where the 95%
percentile interval excludes zero) and an equivalence p-value (two one-sided tests against
±``margin``: the larger share of resamples beyond either bound); each set is Holm-adjusted
across the family within each part, and ``family_verdict`` reads "better" or "worse" where
the difference is significant, else "equivalent" where equivalence is, else "inconclusive".
Beside each: the difference the design detects with 80% power and the seeds a ``margin``
would need (``stats.significance``), and each arm's realised flag rates on the null controls
and the held-out half (``operating.realised``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from srlib.detection.arms import METRICS, Arm, Contrast
from srlib.detection.operating import Part, flags, part, realised
from srlib.stats.metrics import RANKING, count_metric
from srlib.stats.resample import ProblemResampler
from srlib.stats.significance import (
    bootstrap_p,
    detectable,
    equivalence_p,
    holm,
    units_needed,
)
from srlib.stats.verdicts import difference

PAPER_GAIN = {"SR gray": 0.2152, "SR black": 0.1446}
"""The study's reported F1 gains of SR over the threshold baselines (+21.52 and +14.46
points, gray- and black-box), set against the F1 differences at the primary point."""


def preregistered(
    gray: Sequence[str] = ("PPL", "Min-K%", "Min-K%++", "Zlib"),
    black: Sequence[str] = ("NGO", "n-gram acc"),
) -> list[Contrast]:
    """The book's contrasts, fixed in code before any table is computed.

    Primary, one family (Holm across it): the paper's rules (SR gray, SR black) against each
    baseline of their setting **at the rule's own operating point measured where the
    decisions are made** — the baseline's threshold flags as many of the null controls'
    evaluated problems as the rule flags of them, cross-fitted (``operating``) — in MCC.
    (Until this commit the primary point was matched on the MBPP calibration split; a
    threshold does not carry from there to HumanEval and MBPP's test problems, and that
    mismatch alone could favour either side. That match stays, as the deployable condition.)
    The paper's own effect: the same pairs in F1, set against its reported gains
    (``PAPER_GAIN``). Secondary: the same pairs in TPR (same point); matched on the
    calibration split, the deployable point (MCC); SR as it decides against each baseline
    calibrated to ``fpr`` (SR's "no threshold needed" condition); against the oracle
    threshold; the audit's low-FPR regime (the rule's margin and the baseline both
    calibrated to flag 5%, and 1%, of the clean calibration problems; MCC and TPR); ranking
    (AUC of the rule's margin against the baseline's score); the other reference-free SR
    rules against their own score's baseline (null point); and the best self-referential
    rule against the best calibrated baseline, both chosen inside every resample."""
    pairs = [(sr, b) for sr, bs in (("SR gray", gray), ("SR black", black)) for b in bs]
    at_null = lambda sr, b: Arm((b,), "null", matched_to=sr)  # noqa: E731
    matched = lambda sr, b: Arm((b,), "matched", matched_to=sr)  # noqa: E731
    out = [Contrast(f"{sr} − {b}", Arm((sr,)), at_null(sr, b)) for sr, b in pairs]
    out += [
        Contrast(f"{sr} − {b} (F1)", Arm((sr,)), at_null(sr, b), "paper", "f1") for sr, b in pairs
    ]
    out += [
        Contrast(f"{sr} − {b} (TPR)", Arm((sr,)), at_null(sr, b), "secondary", "tpr")
        for sr, b in pairs
    ]
    out += [
        Contrast(
            f"{sr} − {b} (deployable: matched on calibration)",
            Arm((sr,)),
            matched(sr, b),
            "secondary",
        )
        for sr, b in pairs
    ]
    out += [
        Contrast(f"{sr} − {b} (calibrated)", Arm((sr,)), Arm((b,), "calibrated"), "secondary")
        for sr, b in pairs
    ]
    out += [
        Contrast(f"{sr} − {b} (oracle)", Arm((sr,)), Arm((b,), "oracle"), "secondary")
        for sr, b in pairs
    ]
    for rate in (0.05, 0.01):  # the audit's low-FPR regime: both held to one clean rate
        for metric in ("mcc", "tpr"):
            out += [
                Contrast(
                    f"{sr} − {b} ({metric.upper()}, calibrated at {rate:.0%})",
                    Arm((sr,), "calibrated", fpr=rate),
                    Arm((b,), "calibrated", fpr=rate),
                    "secondary",
                    metric,
                )
                for sr, b in pairs
            ]
    out += [
        Contrast(f"{sr} − {b} (AUC)", Arm((sr,), "scores"), Arm((b,), "scores"), "secondary", "auc")
        for sr, b in pairs
    ]
    for sr, b in (("SR Min-K%", "Min-K%"), ("SR Min-K%++", "Min-K%++"), ("SR Zlib", "Zlib")):
        out.append(Contrast(f"{sr} − {b}", Arm((sr,)), at_null(sr, b), "secondary"))
    srs = ("SR gray", "SR black", "SR Min-K%", "SR Min-K%++", "SR Zlib")
    out.append(
        Contrast(
            "best SR − best baseline",
            Arm(srs),
            Arm((*gray, *black), "calibrated"),
            "secondary",
        )
    )
    return out


def _metric(name: str, y: np.ndarray, f: np.ndarray) -> float:
    """MCC, F1 or TPR of flags ``f`` against labels ``y`` (0 where undefined), or the AUC of
    scores ``f`` (a missing score ranks lowest)."""
    if name == "auc":
        return float(RANKING["roc_auc"](y, np.nan_to_num(np.asarray(f, float), nan=-np.inf)))
    f = np.asarray(f, dtype=bool)
    tp, fp = np.count_nonzero(y & f), np.count_nonzero(~y & f)
    fn = np.count_nonzero(y) - tp
    return count_metric(
        METRICS[name], float(tp), float(fp), float(fn), float(y.size - tp - fp - fn)
    )


def _values(parts: list[Part], needed, draws, fpr: float) -> dict:
    """(detector, mode, metric) → the metric on the parts' resamples pooled (a part not drawn
    in this resample, under the two-stage bootstrap, adds no row)."""
    drawn = [(p, d) for p, d in zip(parts, draws, strict=True) if d[0].size]
    y = np.concatenate([p.y[idx] for p, (idx, _) in drawn])
    out = {}
    for name, mode, metric in needed:
        f = np.concatenate([flags(p, name, mode, d, fpr) for p, d in drawn])
        out[name, mode, metric] = _metric(metric, y, f)
    return out


def _pairs(values: dict, c: Contrast) -> np.ndarray:
    """D_ij = A_i − B_j for every member i of arm A and j of arm B, on one draw."""
    a = np.array([values[n, c.a.mode, c.metric] for n in c.a.detectors])
    b = np.array([values[n, c.b.mode, c.metric] for n in c.b.detectors])
    return a[:, None] - b[None, :]


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
    confirmatory: Sequence[str] | None = None,
    margin: float = 0.05,
    each: bool = True,
) -> pd.DataFrame:
    """Each contrast's difference A − B with its paired bootstrap interval and verdict, per
    part (e.g. seed: part name → its long table, calibration long table and, optionally,
    its null control's long table on the same problems, as ``compare.long_table`` makes
    them) and, with ``pooled`` and more than one part, pooled over all parts — resampling
    the parts (the models) as well as the problems — and over the ``confirmatory`` parts
    alone where they are fewer (the seeds the settings were not tuned on); not ``each``: the
    pools only (simulations). Columns: contrast,
    role, part, a, b, metric, a_value, b_value, difference, low, high, n, interval
    ("percentile" or "simultaneous"), verdict, p, se (of the resampled differences),
    detectable (the difference found with 80% power, ``stats.significance.detectable``),
    seeds_needed (for ``margin``), p_equivalent (within ±``margin``), the arms' realised flag
    rates on the null controls and the held-out half (a_null_rate, b_null_rate,
    a_held_out_rate, b_held_out_rate), for the paper's rows its reported gain and whether the
    interval holds it (paper_gain, paper_inside), and, per family (``FAMILIES``), p_holm,
    p_equivalent_holm and family_verdict: better, worse, equivalent (within the margin) or
    inconclusive."""
    contrasts = list(contrasts)
    used = {n for c in contrasts for arm in (c.a, c.b) for n in arm.detectors}
    used |= {arm.matched_to for c in contrasts for arm in (c.a, c.b) if arm.matched_to}
    built = {name: part(*tables[:2], used, *tables[2:]) for name, tables in parts.items()}
    options = {"fpr": fpr, "n_boot": n_boot, "seed": seed, "level": level, "margin": margin}
    return contrast_parts(built, contrasts, pooled, confirmatory, each, **options)


def contrast_parts(
    built: Mapping[str, Part],
    contrasts: Sequence[Contrast],
    pooled: bool = True,
    confirmatory: Sequence[str] | None = None,
    each: bool = True,
    fpr: float = 0.05,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    margin: float = 0.05,
) -> pd.DataFrame:
    """``contrast_table`` on parts already as arrays (``operating.part``,
    ``operating.from_arrays``): what simulations call."""
    needed = {
        (n, arm.mode, c.metric) for c in contrasts for arm in (c.a, c.b) for n in arm.detectors
    }
    groups = [(name, [p], 1) for name, p in built.items()] if each or len(built) == 1 else []
    if pooled and len(built) > 1:
        groups.append(("pooled", list(built.values()), len(built)))
        chosen = [built[n] for n in confirmatory or () if n in built]
        if 1 < len(chosen) < len(built):
            groups.append(("pooled, confirmatory seeds", chosen, len(chosen)))
    family = Counter(c.role for c in contrasts)
    rows = []
    for k, (part_name, members, units) in enumerate(groups):
        rng = np.random.default_rng([seed, k])  # a stream of its own per seed and the pool
        sampler = ProblemResampler(members, models=units > 1)
        full = _values(members, needed, sampler.all(), fpr)
        boots = [_values(members, needed, sampler.draw(rng), fpr) for _ in range(n_boot)]
        for c in contrasts:
            point = _pairs(full, c)
            resampled = np.array([_pairs(v, c) for v in boots])
            if units > 1:  # K models resampled: their spread is (K − 1)/K of the truth's
                resampled = point + np.sqrt(units / (units - 1)) * (resampled - point)
            low, high = _interval(point, resampled, level)
            single = point.size == 1
            a = max(full[n, c.a.mode, c.metric] for n in c.a.detectors)
            b = max(full[n, c.b.mode, c.metric] for n in c.b.detectors)
            se = float(resampled.reshape(len(boots), -1)[:, 0].std()) if single else np.nan
            found = detectable(se, family[c.role] if c.role in FAMILIES else 1)
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
                    "low": float(low),
                    "high": float(high),
                    "n": int(sum(p.y.size for p in members)),
                    "interval": "percentile" if single else "simultaneous",
                    "verdict": difference(c.a.label, c.b.label, a - b, low, high, c.metric.upper()),
                    "p": bootstrap_p(resampled) if single else np.nan,
                    "se": se,
                    "detectable": found,
                    "seeds_needed": units_needed(units, found, margin) if single else np.nan,
                    "p_equivalent": equivalence_p(resampled, margin) if single else np.nan,
                    "margin": margin,
                    **_rates(members, c, fpr),
                }
            )
    table = _family(pd.DataFrame(rows))
    gain = table.a.map(PAPER_GAIN).where(table.role == "paper")
    table["paper_gain"] = gain
    table["paper_inside"] = ((gain >= table.low) & (gain <= table.high)).where(gain.notna())
    return table


def _rates(members: list[Part], c: Contrast, fpr: float) -> dict:
    """Each arm's realised flag rates (``operating.realised``), pooled over the parts: on
    the null controls' evaluated problems and on the leaked run's held-out half. Read for a
    single detector per arm at a decision threshold; NaN otherwise."""
    out = {}
    for side, arm in (("a", c.a), ("b", c.b)):
        fixed = len(arm.detectors) == 1 and arm.threshold != "scores"
        rates = [realised(p, arm.detectors[0], arm.mode, fpr) for p in members] if fixed else []
        for i, what in enumerate(("null", "held_out")):
            got = np.array([r[i] for r in rates], dtype=float)
            got = got[~np.isnan(got)]
            out[f"{side}_{what}_rate"] = float(got.mean()) if got.size else np.nan
    return out


FAMILIES = ("primary", "plug-in")
"""The roles whose contrasts are one family each, Holm-adjusted within each part."""


def _family(table: pd.DataFrame, alpha: float = 0.05) -> pd.DataFrame:
    """Holm-adjusted p-values across each family's contrasts (``FAMILIES``) of each part —
    for a difference and for equivalence within the margin — and the family-wise verdict
    they give: "better" or "worse" where the difference is significant, else "equivalent"
    where equivalence is, else "inconclusive" (no evidence either way: not "no difference").
    Secondary contrasts: their own intervals only."""
    table["p_holm"] = np.nan
    table["p_equivalent_holm"] = np.nan
    table["family_verdict"] = ""
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
