"""Operating points: where each arm of a contrast puts its threshold, on one part's arrays.

A part (a seed) holds every detector on its **common decided set** (samples every arm can
decide): the leaked model's flags (threshold-free rules) or scores, the clean calibration
split's scores, and, where the seed has one, its **null control** (the same recipe without
benchmark text) on the very problems that are evaluated. The threshold modes:

- ``none``: a threshold-free rule as it decides; ``scores``: the score itself (ranking);
- ``calibrated`` / ``calibrated@r``: flags the share ``fpr`` (or ``r``) of clean calibration
  problems — deployable;
- ``matched:RULE``: flags as many clean calibration problems as RULE flags of them —
  deployable, but the calibration split is MBPP while the evaluated problems are not, and
  thresholds do not carry between them;
- ``null:RULE``: flags as many of the null control's evaluated problems as RULE flags of
  them — the operating point measured where the decisions are made. **Cross-fitted**: the
  problems are split in two halves (by a hash of their id), and each half is judged with the
  rate and threshold learnt on the other half's null-control rows, never on its own;
- ``heldout@r``: flags the share ``r`` of the leaked model's held-out problems, cross-fitted
  like ``heldout``: a score's (or a rule's margin's) true-positive rate at that
  false-positive rate on the model judged;
- ``heldout:RULE``: flags as many of the **leaked model's held-out problems** as RULE flags
  of them — equal false-positive rates on the model that is judged, so that a difference
  in MCC is a difference in how many leaked problems each flags there (an exploratory view
  of discrimination), not
  in how far each one's flags move between a clean and a leaked model (threshold transport,
  the ``null`` point). Cross-fitted like ``null``: each half is judged with the rate and
  threshold learnt on the other half's held-out problems;
- ``oracle``: the MCC-optimal threshold on the evaluated samples themselves (an upper bound).

A matched threshold flags **exactly** as many of the problems it is set on as the rule flags
there (``decide.matched_threshold``). Thresholds read scores with **ties broken at random**
(seeded per detector and problem: each score moved by less than half the smallest gap
between distinct values), so a discrete score
(n-gram accuracy takes a handful of values) can meet a rate instead of stopping at the tie
below it. Ranking (AUC) reads the scores as they are."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import pandas as pd

from srlib.detection.compare import common_decided
from srlib.detection.decide import calibrated_threshold, matched_threshold, oracle_threshold
from srlib.detection.registry import detector


@dataclass
class Part:
    """One part (seed) as arrays on its common decided set."""

    y: np.ndarray
    flags: dict[str, np.ndarray]  # threshold-free detectors
    scores: dict[str, np.ndarray]  # thresholded detectors
    clean: dict[str, np.ndarray]  # their calibration scores, one row per calibration sample
    clean_flags: dict[str, np.ndarray]  # threshold-free rules on those rows (NaN: undecided)
    margins: dict[str, np.ndarray]  # threshold-free rules' scores (their margins), for AUC
    ids: np.ndarray  # the problem of each row (what a resample draws)
    cal_ids: np.ndarray  # the calibration problem of each row of ``clean``
    null: dict[str, np.ndarray] = field(default_factory=dict)  # the null control on each
    # row's problem: a rule's flags (1/0, NaN undecided) and a score's or margin's value
    untied: dict[str, np.ndarray] = field(default_factory=dict)  # scores and margins with
    # ties broken, for thresholds: "name", "clean:name", "null:name"
    fold: np.ndarray = field(default_factory=lambda: np.array([], int))  # cross-fitting half
    copy_step: dict[str, float] = field(default_factory=dict)  # per ``untied`` key: how far
    # a row drawn more than once in a resample is moved per position (``drawn``)

    def values(self, name: str) -> np.ndarray:
        """A score's (or a rule's margin's) values, as they are."""
        return (self.margins if name in self.margins else self.scores)[name]


def part(
    long: pd.DataFrame,
    calibration: pd.DataFrame | None,
    used: set[str],
    null: pd.DataFrame | None = None,
) -> Part:
    """Arrays of the detectors ``used`` over the samples every one of them decides (and, with
    ``null``, the null control decides too: the null-matched point needs both)."""
    missing = used - set(long.detector)
    if missing:
        raise ValueError(f"the table has no rows for detector(s) {sorted(missing)}")
    rows = common_decided(long[long.detector.isin(used)], sorted(used))
    present = sorted(used & set(null.detector)) if null is not None else []
    if present:  # the null control decides what it scored (a detector it lacks has no null arm)
        both = common_decided(null[null.detector.isin(present)], present)
        rows = rows[rows.id.isin(set(both.id))]
    free = rows.detector.map(lambda n: detector(n).threshold_free)
    values = rows.assign(value=rows.flag.astype(object).where(free, rows.score))
    wide = values.pivot(index="id", columns="detector", values="value")
    labels = rows.drop_duplicates("id").set_index("id").leaked
    ids = wide.index.to_numpy(str)
    out = Part(labels.loc[wide.index].to_numpy(bool), {}, {}, {}, {}, {}, ids, np.array([], str))
    margins = rows[free].pivot(index="id", columns="detector", values="score")
    for name in used:
        if detector(name).threshold_free:
            out.flags[name] = wide[name].to_numpy(bool)
            out.margins[name] = margins[name].reindex(wide.index).to_numpy(float)
        else:
            out.scores[name] = wide[name].to_numpy(float)
    if calibration is not None and (out.scores or out.margins):
        cal = calibration[calibration.detector.isin([*out.scores, *out.margins])]
        table = cal.pivot(index="id", columns="detector", values="score")
        scored = [*out.scores, *out.margins]  # baselines' scores, rules' margins
        out.clean = {n: table[n].to_numpy(float) for n in scored if n in table}
        out.cal_ids = table.index.to_numpy(str)
        flags = calibration[calibration.detector.isin(out.flags)]
        if "flag" in flags and len(flags):
            flags = flags.pivot(index="id", columns="detector", values="flag")
            flags = flags.reindex(table.index)
            out.clean_flags = {n: numeric(flags[n]) for n in out.flags if n in flags}
    if present:
        own = null[null.detector.isin(present) & null.id.isin(set(ids))]
        scores = own.pivot(index="id", columns="detector", values="score").reindex(wide.index)
        flags = own.pivot(index="id", columns="detector", values="flag").reindex(wide.index)
        for name in present:
            rule = detector(name).threshold_free
            out.null[name] = numeric(flags[name]) if rule else scores[name].to_numpy(float)
            if rule:
                out.null[f"margin:{name}"] = scores[name].to_numpy(float)
    return finish(out)


def from_arrays(
    ids: np.ndarray,
    y: np.ndarray,
    flags: dict[str, np.ndarray],
    scores: dict[str, np.ndarray],
    null: dict[str, np.ndarray] | None = None,
    margins: dict[str, np.ndarray] | None = None,
) -> Part:
    """A part straight from arrays on one common decided set (simulations): rules' flags,
    baselines' scores and, optionally, the null control's flags and scores on the same rows
    and the rules' margins (their scores, for ranking and held-out rates; the null control's
    as ``null["margin:RULE"]``)."""
    empty = np.array([], str)
    out = Part(np.asarray(y, bool), dict(flags), dict(scores), {}, {}, {}, np.asarray(ids), empty)
    out.margins = {k: np.asarray(v, float) for k, v in (margins or {}).items()}
    out.null = {k: np.asarray(v, float) for k, v in (null or {}).items()}
    return finish(out)


def finish(p: Part) -> Part:
    """Give a part its cross-fitting halves (by a hash of each problem's id) and its scores
    with ties broken."""
    p.fold = _fold(tuple(p.ids.tolist()))
    _untie(p)
    return p


def numeric(flags: pd.Series) -> np.ndarray:
    """Flags as 1.0 / 0.0, undecided (None, NaN or pd.NA) as NaN."""
    return flags.astype("boolean").to_numpy(dtype=float, na_value=np.nan)


@lru_cache(maxsize=1 << 16)
def _hash(text: str) -> int:
    """A stable 64-bit hash (not Python's salted ``hash``), remembered: the same problems'
    keys recur in every part and every simulated testbed."""
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")


@lru_cache(maxsize=256)
def _fold(ids: tuple[str, ...]) -> np.ndarray:
    """Each problem's cross-fitting half, remembered for the tuple of ids (a part's ids
    recur in every resampled and simulated testbed of the same problems)."""
    out = np.array([_hash(f"fold:{i}") % 2 for i in ids], dtype=int)
    out.setflags(write=False)
    return out


def halves(ids) -> np.ndarray:
    """Each problem's cross-fitting half (0 or 1), by a hash of its id: the one rule every
    cross-fitted threshold of the book uses."""
    return _fold(tuple(str(i) for i in ids))


@lru_cache(maxsize=1024)
def _jitter(tag: str, keys: tuple[str, ...]) -> np.ndarray:
    """``_hash(tag + key) / 2⁶⁴`` for every key: each row's seeded amount in [0, 1),
    remembered for the tuple of keys (hashing them one by one was a seventh of a simulated
    testbed's time)."""
    out = np.array([_hash(f"{tag}{i}") / 2.0**64 for i in keys])
    out.setflags(write=False)
    return out


def _untie(p: Part) -> None:
    """Fill ``p.untied``: every score and margin (evaluated, calibration, null control) moved
    by a seeded amount below half the smallest gap between its distinct values, so that
    thresholds break ties at random and order nothing else differently."""
    for name in [*p.scores, *p.margins]:
        null = p.null.get(f"margin:{name}", p.null.get(name)) if p.null else None
        arrays = {"": p.values(name), "clean:": p.clean.get(name), "null:": null}
        arrays = {k: v for k, v in arrays.items() if v is not None}
        every = np.concatenate([v[~np.isnan(v)] for v in arrays.values()])
        gaps = np.diff(np.unique(every))
        step = 0.5 * gaps.min() if gaps.size else 1.0
        for prefix, values in arrays.items():
            keys = p.cal_ids if prefix == "clean:" else p.ids
            u = _jitter(f"{name}:{prefix}", tuple(np.asarray(keys).tolist()))
            p.untied[f"{prefix}{name}"] = values + step * u
        moved = np.concatenate([p.untied[f"{k}{name}"] for k in arrays])
        gaps = np.diff(np.unique(moved[~np.isnan(moved)]))
        for prefix in arrays:
            p.copy_step[f"{prefix}{name}"] = 0.5 * gaps.min() if gaps.size else 1.0


def drawn(p: Part, key: str, idx: np.ndarray | None) -> np.ndarray:
    """``p.untied[key]`` at the drawn rows (all of them for ``None``), each row moved by its
    position in the draw times less than half the smallest gap between the untied values
    over the draw's length: the copies of a problem a resample draws twice are then told
    apart (in the draw's random order), so that a matched threshold flags exactly its count
    of a resample too, and nothing else is ordered differently."""
    values = p.untied[key]
    if idx is None:
        return values
    return values[idx] + p.copy_step[key] * np.arange(idx.size) / idx.size


def thresholds(p: Part, name: str, mode: str, draw, fpr: float, memo=None) -> np.ndarray:
    """The threshold each resampled row of ``p`` is judged at (flag when score > t; the
    oracle flags at t and above: its threshold is returned as the next float below t).
    ``memo``: a dict kept for one draw of ``p``, where the cross-fitted modes keep what every
    detector of the draw shares (its halves, and each rule's rate on them)."""
    idx, cal = draw
    memo = {} if memo is None else memo
    if mode == "oracle":
        t, _ = oracle_threshold(drawn(p, name, idx), p.y[idx], "mcc")
        return np.full(idx.size, np.nextafter(t, -np.inf))
    if mode.startswith("null:"):
        return _cross_fitted(p, name, mode.partition(":")[2], idx, memo)
    if mode.startswith("heldout:"):
        return _held_out(p, name, mode.partition(":")[2], idx, memo)
    if mode.startswith("heldout@"):
        return _held_out(p, name, None, idx, memo, float(mode.partition("@")[2]))
    if name not in p.clean:
        raise ValueError(f"no calibration scores for {name!r}: a calibrated arm needs them")
    clean = drawn(p, f"clean:{name}", cal)
    if mode.startswith("matched:"):
        return np.full(idx.size, matched_threshold(clean, _clean_rate(p, mode[8:], cal)))
    if mode.startswith("calibrated@"):
        fpr = float(mode.partition("@")[2])
    return np.full(idx.size, calibrated_threshold(clean, fpr))


def _halves(p: Part, idx: np.ndarray, memo: dict) -> tuple[np.ndarray, ...]:
    """The resampled rows' halves (in half 0, in half 1) and the rows of the leaked model's
    held-out problems, once per draw."""
    if "halves" not in memo:
        fold = p.fold[idx]
        memo["halves"] = (fold == 0, fold == 1, ~p.y[idx])
    return memo["halves"]


def _cross_fitted(p: Part, name: str, rule: str, idx: np.ndarray, memo: dict) -> np.ndarray:
    """Per resampled row: the threshold that flags, on the *other* half's null-control rows,
    the share of them ``rule`` flags there."""
    if rule not in p.null or f"null:{name}" not in p.untied:
        raise ValueError(f"no null-control rows for {rule!r} and {name!r}: a null arm needs them")
    halves, scores = _halves(p, idx, memo)[:2], drawn(p, f"null:{name}", idx)
    if ("null", rule) not in memo:
        learnt = [p.null[rule][idx][~half] for half in halves]  # each half learns on the other
        decided = [f[~np.isnan(f)] for f in learnt]
        memo["null", rule] = [float(d.mean()) if d.size else None for d in decided]
    out = np.full(idx.size, np.inf)
    for half, rate in zip(halves, memo["null", rule], strict=True):
        other = scores[~half]
        clean = other[~np.isnan(other)]
        if rate is not None and clean.size:
            out[half] = matched_threshold(clean, rate)
    return out


def _held_out(
    p: Part, name: str, rule: str | None, idx: np.ndarray, memo: dict, rate: float = 0.0
) -> np.ndarray:
    """Per resampled row: the threshold that flags, on the *other* half's held-out problems
    of the leaked model, the share of them ``rule`` flags there (no ``rule``: the share
    ``rate``)."""
    first, second, unseen = _halves(p, idx, memo)
    if rule is None:
        scores = drawn(p, name, idx)
        out = np.full(idx.size, np.inf)
        for half, learn in ((first, second & unseen), (second, first & unseen)):
            if learn.any():
                out[half] = matched_threshold(scores[learn], rate)
        return out
    if rule not in p.flags:
        raise ValueError(f"no flags of {rule!r}: a held-out arm is matched to a rule's flags")
    if ("heldout", rule) not in memo:
        rule_flags = p.flags[rule][idx]
        learns = (second & unseen, first & unseen)  # each half learns on the other one
        memo["heldout", rule] = [(learn, float(rule_flags[learn].mean()) if learn.any() else None)
                                 for learn in learns]  # fmt: skip
    scores = drawn(p, name, idx)
    out = np.full(idx.size, np.inf)
    for half, (learn, rate) in zip((first, second), memo["heldout", rule], strict=True):
        if rate is not None:
            out[half] = matched_threshold(scores[learn], rate)
    return out


def _clean_rate(p: Part, rule: str, cal) -> float:
    """The share of (resampled) calibration problems the threshold-free ``rule`` flags."""
    flags = p.clean_flags.get(rule)
    if flags is None:
        raise ValueError(f"no calibration flags for {rule!r}: a matched arm needs them")
    flags = flags if cal is None else flags[cal]
    decided = flags[~np.isnan(flags)]
    if decided.size == 0:
        raise ValueError(f"{rule!r} decides no calibration problem: nothing to match")
    return float(decided.mean())


def flags(p: Part, name: str, mode: str, draw, fpr: float, memo=None) -> np.ndarray:
    """One detector's flags on a part's resampled rows (or, at mode ``scores``, its values);
    ``memo``: ``thresholds``' dict for this draw of ``p``."""
    idx, _ = draw
    if mode == "none":
        return p.flags[name][idx]
    if mode == "scores":
        return p.values(name)[idx]
    return drawn(p, name, idx) > thresholds(p, name, mode, draw, fpr, memo)


def realised(p: Part, name: str, mode: str, fpr: float) -> tuple[float, float, float]:
    """The share of the null control's problems, of the leaked run's held-out problems and
    of its leaked problems an arm flags, at the thresholds it is judged at (NaN where the
    part has no null control, or no problem of the kind)."""
    draw = (np.arange(p.y.size), None)
    own = flags(p, name, mode, draw, fpr)
    held_out = float(own[~p.y].mean()) if (~p.y).any() else float("nan")
    leaked = float(own[p.y].mean()) if p.y.any() else float("nan")
    if mode == "none" and name in p.null:
        null = p.null[name]
        rate = float(np.nanmean(null)) if (~np.isnan(null)).any() else float("nan")
        return rate, held_out, leaked
    if mode == "none" or f"null:{name}" not in p.untied:
        return float("nan"), held_out, leaked
    null = drawn(p, f"null:{name}", draw[0]) > thresholds(p, name, mode, draw, fpr)
    return float(null.mean()), held_out, leaked
