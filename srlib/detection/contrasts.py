"""Pre-registered contrasts between detectors, each a paired difference with its bootstrap
interval: the one place the book compares two detectors.

A contrast is declared before any score is read (``preregistered``): arm A against arm B,
each a detector at a threshold mode — ``none`` (threshold-free rules as they decide),
``calibrated`` (the threshold that flags ``fpr`` of known-clean samples), ``matched`` (the
threshold that flags as many known-clean samples as a named threshold-free rule flags of
them: the two compared at one operating point, re-matched in every resample) or ``oracle``
(the MCC-optimal threshold on the evaluated samples themselves: an upper bound, not a
deployable rule), or ``scores`` (no threshold: the score itself, for AUC). A threshold-free
rule may also be calibrated: its margin is then thresholded like a score. An arm may name
several detectors: it is then the *best* of them, chosen anew in every resample, so the
selection's optimism is part of the interval.

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
winner's own interval gives it far more often (both tested).

The primary contrasts are one family, and its verdict is family-wise: each fixed pair's
two-sided bootstrap p-value (twice the smaller share of resampled differences on either
side of zero, so p < 0.05 exactly where the 95% percentile interval excludes zero) is
Holm-adjusted across the family within each part, and ``family_verdict`` says "better" or
"worse" only where the adjusted p-value is below 0.05. A researcher's detectors
(``plugins``) are a family of their own, role ``"plug-in"``
(``plugin_contrasts.contrasts``), adjusted the same way and apart from the primary one,
whose verdicts they cannot move."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from srlib.detection.compare import common_decided
from srlib.detection.decide import calibrated_threshold, oracle_threshold
from srlib.detection.registry import detector
from srlib.stats.metrics import RANKING, confusion_metrics
from srlib.stats.resample import ProblemResampler
from srlib.stats.significance import bootstrap_p, holm
from srlib.stats.verdicts import difference

MODES = ("none", "calibrated", "matched", "oracle", "scores")
METRICS = {"mcc": "mcc", "f1": "f1", "tpr": "recall", "auc": "roc_auc"}


@dataclass(frozen=True)
class Arm:
    """One side of a contrast: a detector (or the best of several) at a threshold mode;
    ``matched`` names the threshold-free rule whose clean flag rate it is matched to; ``fpr``
    sets a calibrated arm's own rate (default: the table's); ``scores`` ranks by the score
    itself (a self-referential rule's margin), for ranking metrics."""

    detectors: tuple[str, ...]
    threshold: str = "none"
    matched_to: str | None = None
    fpr: float | None = None

    def __post_init__(self) -> None:
        if self.threshold not in MODES:
            raise ValueError(f"threshold mode must be one of {MODES}, got {self.threshold!r}")
        if not self.detectors:
            raise ValueError("an arm needs at least one detector")
        if (self.threshold == "matched") != (self.matched_to is not None):
            raise ValueError("a matched arm names the rule it is matched to, and only it does")
        if self.matched_to is not None and not detector(self.matched_to).threshold_free:
            raise ValueError(f"{self.matched_to!r} has a threshold: nothing to match it to")
        if self.fpr is not None and (self.threshold != "calibrated" or not 0 < self.fpr < 1):
            raise ValueError(f"an own fpr (got {self.fpr}) is a calibrated arm's, in (0, 1)")
        for name in self.detectors:
            entry = detector(name)  # an unknown name lists the known ones
            free_ok = ("none", "scores", "calibrated")  # a rule's margin may be calibrated
            thresholded_ok = ("calibrated", "matched", "oracle", "scores")
            if self.threshold not in (free_ok if entry.threshold_free else thresholded_ok):
                raise ValueError(
                    f"{name!r} is {'threshold-free' if entry.threshold_free else 'thresholded'}"
                    f": it cannot run at threshold mode {self.threshold!r}"
                )

    @property
    def label(self) -> str:
        """How tables name the arm."""
        who = self.detectors[0] if len(self.detectors) == 1 else f"best of {len(self.detectors)}"
        if self.threshold == "matched":
            return f"{who} (at {self.matched_to}'s clean rate)"
        if self.fpr is not None:
            return f"{who} (calibrated, {self.fpr:.0%} FPR)"
        return who if self.threshold in ("none", "scores") else f"{who} ({self.threshold})"

    @property
    def mode(self) -> str:
        """The threshold mode as the computation keys it (a matched arm with its rule)."""
        if self.threshold == "matched":
            return f"matched:{self.matched_to}"
        return self.threshold if self.fpr is None else f"calibrated@{self.fpr}"


@dataclass(frozen=True)
class Contrast:
    """A − B on ``metric``, declared before the scores are read."""

    name: str
    a: Arm
    b: Arm
    role: str = "primary"  # "primary" (the claim), "secondary" or "plug-in" (``FAMILIES``)
    metric: str = "mcc"  # "mcc", "f1", "tpr" or "auc" (arms at mode "scores")

    def __post_init__(self) -> None:
        if self.metric not in METRICS:
            raise ValueError(f"metric must be one of {sorted(METRICS)}, got {self.metric!r}")
        ranking = {self.a.threshold == "scores", self.b.threshold == "scores"}
        if ranking != {self.metric == "auc"}:
            raise ValueError("AUC compares arms at threshold mode 'scores', and only AUC does")


def preregistered(
    gray: Sequence[str] = ("PPL", "Min-K%", "Min-K%++", "Zlib"),
    black: Sequence[str] = ("NGO", "n-gram acc"),
) -> list[Contrast]:
    """The book's contrasts, fixed in code before any table is computed.

    Primary, one family (Holm across it): the paper's rules (SR gray, SR black) against each
    baseline of their setting **at the rule's own operating point** — the baseline's
    threshold flags as many clean calibration problems as the rule flags there — in MCC.
    Secondary: the same pairs in TPR (same operating point); SR as it decides against each
    baseline calibrated to ``fpr`` (SR's "no threshold needed" condition, where the baseline
    is held to a low flag rate and SR is not); against the oracle threshold; the audit's
    low-FPR regime (the rule's margin and the baseline both calibrated to flag 5%, and 1%,
    of the clean calibration problems; MCC and TPR); ranking (AUC of the rule's margin
    against the baseline's score, no threshold at all); the other
    reference-free SR rules against their own score's baseline (matched); and the best
    self-referential rule against the best calibrated baseline, both chosen inside every
    resample."""
    pairs = [(sr, b) for sr, bs in (("SR gray", gray), ("SR black", black)) for b in bs]
    matched = lambda sr, b: Arm((b,), "matched", matched_to=sr)  # noqa: E731
    out = [Contrast(f"{sr} − {b}", Arm((sr,)), matched(sr, b)) for sr, b in pairs]
    out += [
        Contrast(f"{sr} − {b} (TPR)", Arm((sr,)), matched(sr, b), "secondary", "tpr")
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
        out.append(Contrast(f"{sr} − {b}", Arm((sr,)), matched(sr, b), "secondary"))
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
    clean_flags: dict[str, np.ndarray]  # threshold-free rules on those rows (NaN: undecided)
    margins: dict[str, np.ndarray]  # threshold-free rules' scores (their margins), for AUC
    ids: np.ndarray  # the problem of each row (what a resample draws)
    cal_ids: np.ndarray  # the calibration problem of each row of ``clean``


def _part(long: pd.DataFrame, calibration: pd.DataFrame | None, used: set[str]) -> _Part:
    """Arrays of the detectors ``used`` over the samples every one of them decides."""
    missing = used - set(long.detector)
    if missing:
        raise ValueError(f"the table has no rows for detector(s) {sorted(missing)}")
    rows = common_decided(long[long.detector.isin(used)], sorted(used))
    free = rows.detector.map(lambda n: detector(n).threshold_free)
    values = rows.assign(value=rows.flag.astype(object).where(free, rows.score))
    wide = values.pivot(index="id", columns="detector", values="value")
    labels = rows.drop_duplicates("id").set_index("id").leaked
    ids = wide.index.to_numpy(str)
    part = _Part(labels.loc[wide.index].to_numpy(bool), {}, {}, {}, {}, {}, ids, np.array([], str))
    margins = rows[free].pivot(index="id", columns="detector", values="score")
    for name in used:
        if detector(name).threshold_free:
            part.flags[name] = wide[name].to_numpy(bool)
            part.margins[name] = margins[name].reindex(wide.index).to_numpy(float)
        else:
            part.scores[name] = wide[name].to_numpy(float)
    if calibration is not None and (part.scores or part.margins):
        cal = calibration[calibration.detector.isin([*part.scores, *part.margins])]
        table = cal.pivot(index="id", columns="detector", values="score")
        scored = [*part.scores, *part.margins]  # baselines' scores, rules' margins
        part.clean = {n: table[n].to_numpy(float) for n in scored if n in table}
        part.cal_ids = table.index.to_numpy(str)
        flags = calibration[calibration.detector.isin(part.flags)]
        if "flag" in flags and len(flags):
            flags = flags.pivot(index="id", columns="detector", values="flag")
            flags = flags.reindex(table.index)
            part.clean_flags = {n: _numeric(flags[n]) for n in part.flags if n in flags}
    return part


def _numeric(flags: pd.Series) -> np.ndarray:
    """Flags as 1.0 / 0.0, undecided (None, NaN or pd.NA) as NaN."""
    return flags.astype("boolean").to_numpy(dtype=float, na_value=np.nan)


def _metric(name: str, y: np.ndarray, f: np.ndarray) -> float:
    """MCC, F1 or TPR of flags ``f`` against labels ``y`` (0 where undefined), or the AUC of
    scores ``f`` (a missing score ranks lowest)."""
    if name == "auc":
        return float(RANKING["roc_auc"](y, np.nan_to_num(np.asarray(f, float), nan=-np.inf)))
    return float(confusion_metrics(y, np.asarray(f, dtype=bool))[METRICS[name]])


def _flags(part: _Part, name: str, mode: str, draw, fpr: float) -> np.ndarray:
    """One detector's flags on a part's resampled samples (thresholds set on the resampled
    calibration rows or, for the oracle, on the resample itself)."""
    idx, cal = draw
    if mode == "none":
        return part.flags[name][idx]
    if mode == "scores":
        return (part.margins if name in part.margins else part.scores)[name][idx]
    s = (part.margins if name in part.margins else part.scores)[name][idx]
    if mode == "oracle":
        t, _ = oracle_threshold(s, part.y[idx], "mcc")
        return s >= t
    if name not in part.clean:
        raise ValueError(f"no calibration scores for {name!r}: a calibrated arm needs them")
    clean = part.clean[name] if cal is None else part.clean[name][cal]
    if mode.startswith("matched:"):
        fpr = _clean_rate(part, mode.partition(":")[2], cal)
    elif mode.startswith("calibrated@"):
        fpr = float(mode.partition("@")[2])
    return s > calibrated_threshold(clean, fpr)


def _clean_rate(part: _Part, rule: str, cal) -> float:
    """The share of (resampled) calibration problems the threshold-free ``rule`` flags."""
    flags = part.clean_flags.get(rule)
    if flags is None:
        raise ValueError(f"no calibration flags for {rule!r}: a matched arm needs them")
    flags = flags if cal is None else flags[cal]
    decided = flags[~np.isnan(flags)]
    if decided.size == 0:
        raise ValueError(f"{rule!r} decides no calibration problem: nothing to match")
    return float(decided.mean())


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
    "simultaneous"), verdict, p, p_holm, family_verdict (primary contrasts)."""
    contrasts = list(contrasts)
    used = {n for c in contrasts for arm in (c.a, c.b) for n in arm.detectors}
    used |= {arm.matched_to for c in contrasts for arm in (c.a, c.b) if arm.matched_to}
    needed = {
        (n, arm.mode, c.metric) for c in contrasts for arm in (c.a, c.b) for n in arm.detectors
    }
    built = {name: _part(long, cal, used) for name, (long, cal) in parts.items()}
    groups = [(name, [p]) for name, p in built.items()]
    if pooled and len(built) > 1:
        groups.append(("pooled", list(built.values())))
    rows = []
    for k, (part_name, members) in enumerate(groups):
        rng = np.random.default_rng([seed, k])  # a stream of its own per seed and the pool
        sampler = ProblemResampler(members)
        full = _values(members, needed, sampler.all(), fpr)
        boots = [_values(members, needed, sampler.draw(rng), fpr) for _ in range(n_boot)]
        for c in contrasts:
            point = _pairs(full, c)
            low, high = _interval(point, np.array([_pairs(v, c) for v in boots]), level)
            p = bootstrap_p(np.array([_pairs(v, c) for v in boots])) if point.size == 1 else np.nan
            a = max(full[n, c.a.mode, c.metric] for n in c.a.detectors)
            b = max(full[n, c.b.mode, c.metric] for n in c.b.detectors)
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
                    "p": p,
                }
            )
    return _family(pd.DataFrame(rows))


FAMILIES = ("primary", "plug-in")
"""The roles whose contrasts are one family each, Holm-adjusted within each part."""


def _family(table: pd.DataFrame, alpha: float = 0.05) -> pd.DataFrame:
    """Holm-adjusted p-values across each family's contrasts (``FAMILIES``) of each part, and
    the family-wise verdict they give (secondary contrasts: their own intervals only)."""
    table["p_holm"] = np.nan
    table["family_verdict"] = ""
    family = table[table.role.isin(FAMILIES) & table.p.notna()]
    for _, g in family.groupby(["role", "part"], sort=False):
        adjusted = holm(g.p.to_numpy())
        table.loc[g.index, "p_holm"] = adjusted
        table.loc[g.index, "family_verdict"] = [
            ("better" if d > 0 else "worse") if q < alpha else "no evidence"
            for d, q in zip(g.difference, adjusted, strict=True)
        ]
    return table
