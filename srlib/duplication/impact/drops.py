"""How much a model's MCC drops from one scenario to another, net of composition, with
intervals that resample repositories and files.

The folds of a scenario test every one of its testable samples once, so a model's fold
predictions pooled give one prediction per sample and scenario. The scenarios test nested
sets of candidates — Mixed, File and Repository every one, Near-duplicate ``C_dedup``, Unique
its pool — and the sets differ in difficulty (duplicated candidates are easier), so the
study's drop (Mixed on all candidates − Unique on the pool) mixes two things: **composition**
(the pool is harder, whatever the model) and the **net drop** (the Mixed model's own
predictions on the pool − the Unique model's on the same candidates): what having trained on
the test candidates' duplicates, files or repositories was worth. A rule that learns nothing
predicts the same in every scenario, so its net drop is zero by construction and its study's
drop is pure composition.

Composition is not the model's alone, though: the candidates Mixed tests beyond the pool are
those with a duplicate, and a model that memorised its training data scores them through
their twins in its training fold, while the pool's candidates have no twin anywhere; so a
memoriser's gain lands in composition and its net drop over Mixed → Unique is about zero
(``tests/test_duplication_inference.py``: a 1-nearest-neighbour memoriser). The memorisation
test (``duplicate_gain``) reads the duplicated candidates themselves: the same model trained
with their own files (Mixed: twins that share a file in training) against without them
(File), on the same candidates — zero for a rule that learns nothing, clearly positive for
the memoriser on generated and on the vendored data. It reads memorisation of the training
files: File grouping also takes away a candidate's same-file context and leaves twins in
other files, so the same change on the pool's candidates is set beside it, descriptively.

Every interval comes from one ``stats.resample.ClusterBootstrap`` (repositories, then files within
them): the same weights serve every model, scenario and candidate set, so every difference is
paired, and each test's p-value is the two-sided bootstrap p (``stats.significance.
bootstrap_p``). ``family`` adjusts, by Holm, exactly the tests the chapter's verdicts read."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from srlib.stats.resample import ClusterBootstrap
from srlib.stats.significance import bootstrap_p, holm
from srlib.store import digest

STEPS = (
    ("mixed", "near-duplicate"),
    ("near-duplicate", "unique"),
    ("mixed", "unique"),
    ("mixed", "file"),
    ("file", "repository"),
    ("mixed", "repository"),
)
"""The steps the chapter reads: the study's ordering and its Mixed → Unique drop, and the
grouped inflation random → file → repository."""
NO_TRAINING = ("flag everything", "shape rule")
"""References that learn nothing: their net drops are zero whatever the data."""
REFERENCES = (*NO_TRAINING, "context only")
"""Every reference (``references``): reported beside the detectors, never judged as one."""


def fold_predictions(out_dir: str | Path) -> pd.DataFrame:
    """Every test prediction a study run wrote: model, scenario, fold, sample, predicted."""
    frames = []
    for file in sorted(Path(out_dir, "results").glob("*.json")):
        r = json.loads(file.read_text())
        if "test" not in r:
            raise ValueError(f"{file} holds no predictions (written by an older srlib): rerun")
        frames.append(
            pd.DataFrame(
                {
                    "model": r["model"],
                    "scenario": r["scenario"],
                    "fold": r["fold"],
                    "sample": r["test"],
                    "predicted": np.asarray(r["predicted"], dtype=bool),
                }
            )
        )
    columns = ["model", "scenario", "fold", "sample", "predicted"]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)


class Pooled:
    """Each model's pooled predictions per scenario, read under one cluster bootstrap."""

    def __init__(
        self, predictions: pd.DataFrame, labels: Sequence[bool], boot: ClusterBootstrap
    ) -> None:
        self.y = np.asarray(labels, dtype=bool)
        if len(self.y) != boot.n:
            raise ValueError(f"{len(self.y)} labels, {boot.n} candidates in the bootstrap")
        self.boot = boot
        self.flags: dict[tuple[str, str], np.ndarray] = {}  # -1 untested, else 0 / 1
        self.tested: dict[str, np.ndarray] = {}
        for (model, scenario), g in predictions.groupby(["model", "scenario"], sort=False):
            if g["sample"].duplicated().any():
                raise ValueError(f"{model!r} tested a sample twice in scenario {scenario!r}")
            f = np.full(boot.n, -1, dtype=np.int8)
            f[g["sample"].to_numpy()] = g.predicted.to_numpy(bool)
            self.flags[model, scenario] = f
            rows = np.flatnonzero(f >= 0)
            if scenario in self.tested and not np.array_equal(self.tested[scenario], rows):
                raise ValueError(
                    f"the models were tested on different samples in scenario {scenario!r} "
                    "(an unfinished run?): finish it before comparing models"
                )
            self.tested[scenario] = rows
        self.models = list(dict.fromkeys(predictions.model))
        self._cache: dict = {}

    def mcc(self, model: str, scenario: str, on: str | None = None) -> tuple[float, np.ndarray]:
        """``model``'s MCC in ``scenario`` on the candidates scenario ``on`` tested (default:
        its own), and its resampled values."""
        return self.mcc_on(model, scenario, self.tested[on or scenario], on or scenario)

    def mcc_on(
        self, model: str, scenario: str, rows: np.ndarray, named: str | None = None
    ) -> tuple[float, np.ndarray]:
        """``model``'s MCC in ``scenario`` on the candidates ``rows`` (each tested there;
        ``named`` says which they are in the error if not)."""
        key = (model, scenario, digest(rows.tobytes()))
        if key not in self._cache:
            f = self.flags[model, scenario][rows]
            if (f < 0).any():
                which = f"{named!r} tested" if named else "asked for"
                raise ValueError(f"{scenario!r} did not test every candidate {which}")
            self._cache[key] = self.boot.metric(self.y[rows], f.astype(bool), rows)
        return self._cache[key]

    def has(self, model: str, *scenarios: str) -> bool:
        """Whether ``model`` has results in every one of ``scenarios``."""
        return all((model, s) in self.flags for s in scenarios)


def percentile_interval(values: np.ndarray, level: float) -> tuple[float, float]:
    """The percentile interval; NaN where any resample is undefined."""
    if np.isnan(values).any():
        return float("nan"), float("nan")
    lo, hi = np.quantile(values, [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi)


def mcc_table(pooled: Pooled, level: float = 0.95) -> pd.DataFrame:
    """Per model and scenario: pooled MCC with its cluster-resampled interval and the
    candidates tested."""
    rows = []
    for (model, scenario), _ in pooled.flags.items():
        value, boots = pooled.mcc(model, scenario)
        lo, hi = percentile_interval(boots, level)
        rows.append(
            {"model": model, "scenario": scenario, "mcc": value, "low": lo, "high": hi}
            | {"candidates": pooled.tested[scenario].size}
        )
    return _indexed(rows, ["model", "scenario"])


def _relative(drop: np.ndarray, start: np.ndarray) -> np.ndarray:
    """The drop as a share of the start MCC; NaN where that MCC is not above 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(start > 0, drop / np.where(start > 0, start, 1), np.nan)


def step_table(
    pooled: Pooled,
    steps: Sequence[tuple[str, str]] = STEPS,
    reference: str = "shape rule",
    level: float = 0.95,
) -> pd.DataFrame:
    """Per model and step start → end: the study's drop (start on its candidates − end on
    its own), the net drop (start's predictions on end's candidates − end's) and the
    composition between them, the study's relative drop, and the net drop beyond
    ``reference``'s (a rule that learns nothing: its net drop is zero), each with its
    interval; ``p`` is the net drop's beyond the reference."""
    rows = []
    for start, end in steps:
        if end not in pooled.tested or start not in pooled.tested:
            continue
        if np.setdiff1d(pooled.tested[end], pooled.tested[start]).size:
            raise ValueError(f"{end!r} tests candidates {start!r} does not: no paired step")
        ref = _net(pooled, reference, start, end) if pooled.has(reference, start, end) else None
        for model in pooled.models:
            if not pooled.has(model, start, end):
                continue
            a, a_boot = pooled.mcc(model, start)
            same, same_boot = pooled.mcc(model, start, on=end)
            b, b_boot = pooled.mcc(model, end)
            row = {"model": model, "step": f"{start} → {end}", "from": a, "from, same": same}
            row |= {"to": b}
            for name, value, boots in (
                ("study's drop", a - b, a_boot - b_boot),
                ("composition", a - same, a_boot - same_boot),
                ("net drop", same - b, same_boot - b_boot),
                ("relative drop", _relative(a - b, a), _relative(a_boot - b_boot, a_boot)),
            ):
                row[name] = float(value)
                row[f"{name} low"], row[f"{name} high"] = percentile_interval(boots, level)
            beyond = same_boot - b_boot - (ref[1] if ref else 0)
            row["beyond reference"] = same - b - (ref[0] if ref else 0.0)
            row["beyond low"], row["beyond high"] = percentile_interval(beyond, level)
            row["p"] = bootstrap_p(beyond) if model not in REFERENCES else np.nan
            rows.append(row)
    return _indexed(rows, ["model", "step"])


def duplicate_gain(
    pooled: Pooled,
    grouped: tuple[str, str] = ("mixed", "file"),
    pool: str = "unique",
    level: float = 0.95,
) -> pd.DataFrame:
    """The memorisation test, per trained model: on the candidates with a duplicate (those the
    start scenario tests and ``pool`` does not), its MCC trained with their own files (Mixed:
    twins that share a file in training) minus its MCC trained without them (``grouped``:
    the file-grouped split), paired, with its interval and p (one of the family's). File
    grouping also removes a candidate's same-file context and keeps twins in other files, so
    the same change on the pool's candidates (no twin anywhere) is set beside it,
    descriptively (``pool gain``): what any candidate gets from its own file. A rule that
    learns nothing predicts the same either way: exactly zero."""
    start, end = grouped
    rows = []
    if not {start, end, pool} <= set(pooled.tested):
        return _indexed(rows, ["model"])
    duplicated = np.setdiff1d(pooled.tested[start], pooled.tested[pool])
    unique = np.intersect1d(pooled.tested[pool], pooled.tested[end])
    if duplicated.size == 0 or np.setdiff1d(duplicated, pooled.tested[end]).size:
        return _indexed(rows, ["model"])
    for model in pooled.models:
        if model in REFERENCES or not pooled.has(model, start, end):
            continue
        a, a_boot = pooled.mcc_on(model, start, duplicated)
        b, b_boot = pooled.mcc_on(model, end, duplicated)
        lo, hi = percentile_interval(a_boot - b_boot, level)
        row = {"model": model, "candidates": duplicated.size, start: a, end: b, "gain": a - b}
        row |= {"low": lo, "high": hi, "p": bootstrap_p(a_boot - b_boot)}
        c, c_boot = pooled.mcc_on(model, start, unique)
        d, d_boot = pooled.mcc_on(model, end, unique)
        row["pool gain"] = c - d
        row["pool gain low"], row["pool gain high"] = percentile_interval(c_boot - d_boot, level)
        rows.append(row)
    return _indexed(rows, ["model"])


def _net(pooled: Pooled, model: str, start: str, end: str) -> tuple[float, np.ndarray]:
    same, same_boot = pooled.mcc(model, start, on=end)
    b, b_boot = pooled.mcc(model, end)
    return same - b, same_boot - b_boot


def against_reference(
    pooled: Pooled, reference: str = "shape rule", level: float = 0.95
) -> pd.DataFrame:
    """Per model and scenario: its pooled MCC minus ``reference``'s on the same candidates,
    with a paired interval and p: does a trained detector beat a rule that learns nothing?"""
    rows = []
    for model, scenario in pooled.flags:
        if model in REFERENCES or not pooled.has(reference, scenario):
            continue
        mcc, boot = pooled.mcc(model, scenario)
        ref, ref_boot = pooled.mcc(reference, scenario)
        lo, hi = percentile_interval(boot - ref_boot, level)
        rows.append(
            {"model": model, "scenario": scenario, "mcc": mcc, reference: ref}
            | {"difference": mcc - ref, "low": lo, "high": hi, "p": bootstrap_p(boot - ref_boot)}
        )
    return _indexed(rows, ["model", "scenario"])


def net_differences(
    pooled: Pooled, model: str, step: tuple[str, str] = ("mixed", "unique"), level: float = 0.95
) -> pd.DataFrame:
    """``model``'s net drop over ``step`` minus each other trained model's, paired (the
    study found Random Forest dropping most)."""
    if not pooled.has(model, *step):
        raise ValueError(f"no {step[0]} and {step[1]} results for {model!r} in these predictions")
    mine, mine_boot = _net(pooled, model, *step)
    rows = []
    for other in pooled.models:
        if other == model or other in REFERENCES or not pooled.has(other, *step):
            continue
        theirs, theirs_boot = _net(pooled, other, *step)
        d = mine_boot - theirs_boot
        lo, hi = percentile_interval(d, level)
        rows.append(
            {"other": other, "net drop": mine, "other's": theirs, "difference": mine - theirs}
            | {"low": lo, "high": hi, "p": bootstrap_p(d)}
        )
    return _indexed(rows, ["other"])


def _indexed(rows: list[dict], index: list[str]) -> pd.DataFrame:
    """The rows as a table indexed by ``index`` (an empty one with a ``p`` column when there
    are none: a run without the scenarios a table compares)."""
    if not rows:
        return pd.DataFrame({"p": []}, index=pd.MultiIndex.from_tuples([], names=index))
    return pd.DataFrame(rows).set_index(index)


def family(*tables: pd.DataFrame, alpha: float = 0.05) -> int:
    """Holm-adjust, across ``tables`` together, every p-value they hold (the tests the
    verdicts read), writing ``p (Holm)`` and ``family-wise`` ("yes" below ``alpha``) into
    each; returns the family's size."""
    ps = np.concatenate([t["p"].to_numpy(float) for t in tables]) if tables else np.zeros(0)
    tested = ~np.isnan(ps)
    adjusted = np.full(ps.shape, np.nan)
    adjusted[tested] = holm(ps[tested])
    at = 0
    for t in tables:
        t["p (Holm)"] = adjusted[at : at + len(t)]
        t["family-wise"] = np.where(t["p (Holm)"] < alpha, "yes", "")
        at += len(t)
    return int(tested.sum())


def interval_widths(
    pooled_by_level: dict[str, Pooled], model: str, scenario: str, level: float = 0.95
) -> pd.DataFrame:
    """One model's MCC in one scenario with the interval each resampling level gives: how
    much narrower resampling candidates one by one makes it."""
    rows = []
    for name, pooled in pooled_by_level.items():
        value, boots = pooled.mcc(model, scenario)
        lo, hi = percentile_interval(boots, level)
        rows.append({"resampled": name, "mcc": value, "low": lo, "high": hi, "width": hi - lo})
    return pd.DataFrame(rows).set_index("resampled")
