"""Pre-registered contrasts between detectors, each a paired difference with its bootstrap
interval: the one place the book compares two detectors.

A contrast is declared before any score is read (``preregistered``): arm A against arm B,
each a detector at a threshold mode — ``none`` (threshold-free rules as they decide),
``calibrated`` (the threshold that flags ``fpr`` of known-clean samples) or ``oracle`` (the
MCC-optimal threshold on the evaluated samples themselves: an upper bound, not a deployable
rule). An arm may name several detectors: it is then the *best* of them, chosen anew in every
resample, so the selection's optimism is part of the interval.

The interval resamples what the difference depends on, together: the evaluated samples and,
for calibrated arms, the calibration samples (the thresholds are re-set in every resample).
All detectors are read on one **common decided set** (samples every arm can decide), so no
arm is scored on samples another drops. The unit resampled is the **problem**: given several
parts (seeds) that score the same problems, the pooled interval draws problems (and
calibration problems) with replacement and keeps each drawn problem's rows of every seed
together, so a problem that is easy or hard in every seed counts as one unit, not as
independent ones; the pooled metric is computed on the union of the drawn rows. Each group
(each seed alone, and the pool) draws from a random stream of its own.

A contrast of two fixed detectors gets the percentile interval of its resampled
differences. A contrast with selection ("best of A − best of B" = max_i min_j (A_i − B_j))
gets simultaneous bounds instead: every pairwise difference D_ij is widened by the 97.5%
quantile of the largest deviation max_ij |D*_ij − D_ij| in that direction over the resamples
(the bootstrap max-T), and the bounds go through the same max-min. Picking the best of ten
equal detectors then gives a "better" verdict at about the nominal rate, where reusing the
winner's own interval gives it far more often (both tested)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from srlib.detection.decide import calibrated_threshold, oracle_threshold
from srlib.detection.metrics import confusion_metrics
from srlib.detection.registry import detector
from srlib.detection.verdicts import difference

MODES = ("none", "calibrated", "oracle")


@dataclass(frozen=True)
class Arm:
    """One side of a contrast: a detector (or the best of several) at a threshold mode."""

    detectors: tuple[str, ...]
    threshold: str = "none"

    def __post_init__(self) -> None:
        if self.threshold not in MODES:
            raise ValueError(f"threshold mode must be one of {MODES}, got {self.threshold!r}")
        if not self.detectors:
            raise ValueError("an arm needs at least one detector")
        for name in self.detectors:
            entry = detector(name)  # an unknown name lists the known ones
            if entry.threshold_free != (self.threshold == "none"):
                raise ValueError(
                    f"{name!r} is {'threshold-free' if entry.threshold_free else 'thresholded'}"
                    f": it cannot run at threshold mode {self.threshold!r}"
                )

    @property
    def label(self) -> str:
        """How tables name the arm."""
        who = self.detectors[0] if len(self.detectors) == 1 else f"best of {len(self.detectors)}"
        return who if self.threshold == "none" else f"{who} ({self.threshold})"


@dataclass(frozen=True)
class Contrast:
    """A − B on ``metric``, declared before the scores are read."""

    name: str
    a: Arm
    b: Arm
    role: str = "primary"  # "primary" (the claim) or "secondary"
    metric: str = "mcc"  # "mcc" or "f1"


def preregistered(
    gray: Sequence[str] = ("PPL", "Min-K%", "Min-K%++", "Zlib"),
    black: Sequence[str] = ("NGO", "n-gram acc"),
) -> list[Contrast]:
    """The book's contrasts, fixed in code before any table is computed. Primary: the
    paper's rules (SR gray, SR black) against each baseline of their setting at a calibrated
    threshold. Secondary: the same against the oracle threshold; the other reference-free SR
    rules against their own score's baseline (calibrated); and the best self-referential rule
    against the best calibrated baseline, both chosen inside every resample."""
    out = []
    for sr, baselines in (("SR gray", gray), ("SR black", black)):
        for b in baselines:
            out.append(Contrast(f"{sr} − {b}", Arm((sr,)), Arm((b,), "calibrated")))
    for sr, baselines in (("SR gray", gray), ("SR black", black)):
        for b in baselines:
            out.append(
                Contrast(f"{sr} − {b} (oracle)", Arm((sr,)), Arm((b,), "oracle"), "secondary")
            )
    for sr, b in (("SR Min-K%", "Min-K%"), ("SR Min-K%++", "Min-K%++"), ("SR Zlib", "Zlib")):
        out.append(Contrast(f"{sr} − {b}", Arm((sr,)), Arm((b,), "calibrated"), "secondary"))
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


@dataclass
class _Part:
    """One part (seed) as arrays on its common decided set."""

    y: np.ndarray
    flags: dict[str, np.ndarray]  # threshold-free detectors
    scores: dict[str, np.ndarray]  # thresholded detectors
    clean: dict[str, np.ndarray]  # their calibration scores, one row per calibration sample
    ids: np.ndarray  # the problem of each row (what a resample draws)
    cal_ids: np.ndarray  # the calibration problem of each row of ``clean``


def _part(long: pd.DataFrame, calibration: pd.DataFrame | None, used: set[str]) -> _Part:
    """Arrays of the detectors ``used`` over the samples every one of them decides."""
    missing = used - set(long.detector)
    if missing:
        raise ValueError(f"the table has no rows for detector(s) {sorted(missing)}")
    rows = long[long.detector.isin(used)]
    free = rows.detector.map(lambda n: detector(n).threshold_free)
    values = rows.assign(value=rows.flag.astype(object).where(free, rows.score))
    wide = values.pivot(index="id", columns="detector", values="value").dropna()
    labels = rows.drop_duplicates("id").set_index("id").leaked
    ids = wide.index.to_numpy(str)
    part = _Part(labels.loc[wide.index].to_numpy(bool), {}, {}, {}, ids, np.array([], str))
    for name in used:
        if detector(name).threshold_free:
            part.flags[name] = wide[name].to_numpy(bool)
        else:
            part.scores[name] = wide[name].to_numpy(float)
    if calibration is not None and part.scores:
        cal = calibration[calibration.detector.isin(part.scores)]
        table = cal.pivot(index="id", columns="detector", values="score")
        part.clean = {n: table[n].to_numpy(float) for n in part.scores if n in table}
        part.cal_ids = table.index.to_numpy(str)
    return part


def _metric(name: str, y: np.ndarray, f: np.ndarray) -> float:
    """MCC or F1 of flags ``f`` against labels ``y`` (0 where undefined)."""
    return float(confusion_metrics(y, np.asarray(f, dtype=bool))[name])


def _flags(part: _Part, name: str, mode: str, draw, fpr: float) -> np.ndarray:
    """One detector's flags on a part's resampled samples (thresholds set on the resampled
    calibration rows or, for the oracle, on the resample itself)."""
    idx, cal = draw
    if mode == "none":
        return part.flags[name][idx]
    s = part.scores[name][idx]
    if mode == "oracle":
        t, _ = oracle_threshold(s, part.y[idx], "mcc")
        return s >= t
    if name not in part.clean:
        raise ValueError(f"no calibration scores for {name!r}: a calibrated arm needs them")
    clean = part.clean[name] if cal is None else part.clean[name][cal]
    return s > calibrated_threshold(clean, fpr)


def _values(parts: list[_Part], needed, draws, fpr: float) -> dict:
    """(detector, mode, metric) → the metric on the parts' resamples pooled."""
    y = np.concatenate([p.y[idx] for p, (idx, _) in zip(parts, draws, strict=True)])
    out = {}
    for name, mode, metric in needed:
        f = np.concatenate(
            [_flags(p, name, mode, d, fpr) for p, d in zip(parts, draws, strict=True)]
        )
        out[name, mode, metric] = _metric(metric, y, f)
    return out


def _pairs(values: dict, c: Contrast) -> np.ndarray:
    """D_ij = A_i − B_j for every member i of arm A and j of arm B, on one draw."""
    a = np.array([values[n, c.a.threshold, c.metric] for n in c.a.detectors])
    b = np.array([values[n, c.b.threshold, c.metric] for n in c.b.detectors])
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


class _Resampler:
    """Draws a group of parts' rows by problem: problems and calibration problems are drawn
    with replacement from the parts' union, each drawn problem bringing its rows of every
    part (as often as it was drawn)."""

    def __init__(self, parts: list[_Part]) -> None:
        self.parts = parts
        problems = np.unique(np.concatenate([p.ids for p in parts]))
        cal = np.unique(np.concatenate([p.cal_ids for p in parts]))
        self.n, self.n_cal = problems.size, cal.size
        self.rows = [np.searchsorted(problems, p.ids) for p in parts]
        self.cal_rows = [np.searchsorted(cal, p.cal_ids) for p in parts]

    def all(self) -> list:
        """Every row of every part, once."""
        return [(np.arange(p.y.size), None) for p in self.parts]

    def draw(self, rng: np.random.Generator) -> list:
        """(row, calibration row) positions of each part for one resample; a draw whose rows
        hold one class only is drawn again."""
        for _ in range(100):
            counts = np.bincount(rng.integers(0, self.n, self.n), minlength=self.n)
            idx = [np.repeat(np.arange(r.size), counts[r]) for r in self.rows]
            y = np.concatenate([p.y[i] for p, i in zip(self.parts, idx, strict=True)])
            if y.any() and not y.all():
                break
        cal = None
        if self.n_cal:
            counts = np.bincount(rng.integers(0, self.n_cal, self.n_cal), minlength=self.n_cal)
            cal = [np.repeat(np.arange(r.size), counts[r]) for r in self.cal_rows]
        return [(i, None if cal is None else c) for i, c in zip(idx, cal or idx, strict=True)]


def contrast_table(
    parts: Mapping[str, tuple[pd.DataFrame, pd.DataFrame | None]],
    contrasts: Sequence[Contrast],
    fpr: float = 0.05,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    pooled: bool = True,
) -> pd.DataFrame:
    """Each contrast's difference A − B with its paired bootstrap interval and verdict, per
    part (e.g. seed: part name → its long table and calibration long table, as
    ``compare.long_table`` makes them) and, with ``pooled`` and more than one part, pooled
    over all parts. Columns: contrast, role, part, a, b, metric, a_value, b_value,
    difference, low, high, n (common decided samples), interval ("percentile" or
    "simultaneous"), verdict."""
    contrasts = list(contrasts)
    used = {n for c in contrasts for arm in (c.a, c.b) for n in arm.detectors}
    needed = {
        (n, arm.threshold, c.metric) for c in contrasts for arm in (c.a, c.b) for n in arm.detectors
    }
    built = {name: _part(long, cal, used) for name, (long, cal) in parts.items()}
    groups = [(name, [p]) for name, p in built.items()]
    if pooled and len(built) > 1:
        groups.append(("pooled", list(built.values())))
    rows = []
    for k, (part_name, members) in enumerate(groups):
        rng = np.random.default_rng([seed, k])  # a stream of its own per seed and the pool
        sampler = _Resampler(members)
        full = _values(members, needed, sampler.all(), fpr)
        boots = [_values(members, needed, sampler.draw(rng), fpr) for _ in range(n_boot)]
        for c in contrasts:
            point = _pairs(full, c)
            low, high = _interval(point, np.array([_pairs(v, c) for v in boots]), level)
            a = max(full[n, c.a.threshold, c.metric] for n in c.a.detectors)
            b = max(full[n, c.b.threshold, c.metric] for n in c.b.detectors)
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
                    "interval": "percentile" if point.size == 1 else "simultaneous",
                    "verdict": difference(c.a.label, c.b.label, a - b, low, high, c.metric.upper()),
                }
            )
    return pd.DataFrame(rows)
