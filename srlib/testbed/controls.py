"""The controls the membership-inference literature asks for, as tables: detection against
the number of exposures, a leak of paraphrases instead of originals, benchmark-level pooled
tests with their power and false-positive rate, and thresholds calibrated under shift."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from srlib.detection import registry
from srlib.detection.compare import evaluate_detectors
from srlib.detection.decide import calibrated_threshold, threshold_decide
from srlib.detection.metrics import metric_table
from srlib.detection.pooled import contrast_test, contrasts, control_test, rejection_rate
from srlib.testbed import experiment as ex
from srlib.testbed.build import EXPOSURE, NULL, PARAPHRASE
from srlib.testbed.report import stage_calibration, stage_detectors
from srlib.testbed.testbed import Testbed


def last_stage(tb: Testbed, run: str) -> ex.Stage:
    """The last checkpoint of ``run``; a run the configuration did not train is an error."""
    if run not in tb.runs:
        raise ValueError(f"the testbed has no {run!r} run; its runs: {sorted(tb.runs)}")
    checkpoints = tb.runs[run].checkpoints
    return ex.Stage(run, len(checkpoints), checkpoints[-1])


def exposure_table(tb: Testbed) -> pd.DataFrame:
    """Every detector on the exposure-sweep run, once per exposure group: that group's
    leaked samples against all held-out ones (tidy metrics with an ``exposures`` column)."""
    stage = last_stage(tb, EXPOSURE)
    long = stage_detectors(tb, stage)
    cal = stage_calibration(tb, stage)
    groups = tb.exposure_groups()
    frames = []
    for copies in tb.config.exposure_sweep:
        ids = {i for i, c in groups.items() if c == copies}
        frame = long[~long.leaked | long.id.isin(ids)]
        m = evaluate_detectors(frame, cal, tb.config.fpr, tb.config.n_boot, groups=False)
        frames.append(m.assign(exposures=copies, leaked_samples=len(ids)))
    return pd.concat(frames, ignore_index=True)


def exposure_memorisation(tb: Testbed) -> pd.DataFrame:
    """Per exposure group: mean gain in token log-probability over the base model (nats)
    of its leaked samples and of the held-out ones, with the one-sided Mann-Whitney p."""
    base = tb.scores(tb.base, 0).set_index("id").gray_scores.str[0]
    table = tb.scores(last_stage(tb, EXPOSURE).path, 0).set_index("id")
    gain = table.gray_scores.str[0] - base.reindex(table.index)
    groups = pd.Series(tb.exposure_groups()).reindex(gain.index)
    held = gain[groups.isna()]
    rows = []
    for copies in tb.config.exposure_sweep:
        leaked = gain[groups == copies]
        test = stats.mannwhitneyu(leaked, held, alternative="greater")
        rows.append(
            {
                "exposures": copies,
                "leaked samples": len(leaked),
                "leaked gain (nats)": float(leaked.mean()),
                "held-out gain (nats)": float(held.mean()),
                "p (Mann-Whitney)": float(test.pvalue),
            }
        )
    return pd.DataFrame(rows)


def paraphrase_table(tb: Testbed) -> pd.DataFrame:
    """Every detector on the paraphrase-leak run (each leaked sample seen only as an
    unscored variant) beside the main run, where the originals leaked: flag rate on the
    leaked half (recall), on the held-out half (FPR), MCC and AUC. Leaked samples without a
    spare variant are left out of both."""
    keep = set(tb.paraphrases())
    frames = []
    for run in (tb.main, PARAPHRASE):
        stage = last_stage(tb, run)
        long = stage_detectors(tb, stage)
        long = long[~long.leaked | long.id.isin(keep)]
        m = evaluate_detectors(
            long, stage_calibration(tb, stage), tb.config.fpr, tb.config.n_boot, groups=False
        )
        frames.append(m.assign(run=run, leaked="original" if run == tb.main else "paraphrase"))
    return pd.concat(frames, ignore_index=True)


@dataclass(frozen=True)
class PooledSet:
    """One set the pooled test runs on: per-sample contrasts of the target against the
    reference model, the same contrasts on the clean control samples, and whether the
    target saw the set."""

    contrasts: np.ndarray
    control: np.ndarray
    saw: bool


def _pooled_set(tb: Testbed, target, reference, saw: bool, ids=None) -> PooledSet:
    """Contrasts (``pooled.contrasts``) of checkpoint ``target`` against ``reference`` on the
    testbed's samples (or those in ``ids``) and on the calibration samples with variants."""
    n = tb.config.n
    t, r = tb.scores(target, n).set_index("id"), tb.scores(reference, n).set_index("id")
    index = t.index if ids is None else t.index[t.index.isin(ids)]
    ct, cr = tb.calibration_scores(target), tb.calibration_scores(reference)
    control = contrasts(list(ct.gray_scores), list(cr.gray_scores))
    return PooledSet(
        contrasts(list(t.gray_scores[index]), list(r.gray_scores[index])),
        control[np.isfinite(control)],
        saw,
    )


def pooled_conditions(tb: Testbed) -> dict[str, PooledSet]:
    """The sets the pooled tests run on, by name. Leaked sets under the exposure sweep (each
    group) and the main run; clean sets: the main run's held-out half, the null-control
    model against the base model, and the base model against the unrelated reference
    (neither saw any benchmark)."""
    split = tb.split.set_index("id").leaked
    leaked, held = set(split.index[split]), set(split.index[~split])
    main = last_stage(tb, tb.main).path
    out = {}
    if EXPOSURE in tb.runs:
        sweep = last_stage(tb, EXPOSURE).path
        groups = tb.exposure_groups()
        for copies in tb.config.exposure_sweep:
            ids = {i for i, c in groups.items() if c == copies}
            out[f"leaked, seen {copies}×"] = _pooled_set(tb, sweep, tb.base, True, ids)
    seen = tb.config.repeats * tb.config.epochs
    out[f"leaked, seen {seen}× (main run)"] = _pooled_set(tb, main, tb.base, True, leaked)
    out["held out (main run)"] = _pooled_set(tb, main, tb.base, False, held)
    if NULL in tb.runs:
        out["null control vs base"] = _pooled_set(tb, last_stage(tb, NULL).path, tb.base, False)
    out["base vs unrelated"] = _pooled_set(tb, tb.base, tb.reference, False)
    return out


def pooled_table(tb: Testbed, method: str = "wilcoxon") -> pd.DataFrame:
    """Both pooled tests per condition on all its samples: the paired test against the
    reference (``method``) and the empirical null against the clean control samples
    (Mann-Whitney); mean contrasts and sizes."""
    rows = []
    for name, ps in pooled_conditions(tb).items():
        d = ps.contrasts[np.isfinite(ps.contrasts)]
        paired = contrast_test(d, method, seed=tb.config.seed)
        control = control_test(d, ps.control)
        rows.append(
            {
                "set": name,
                "saw it": ps.saw,
                "samples": paired.n,
                "control samples": ps.control.size,
                "mean contrast (nats)": paired.effect,
                "control mean (nats)": float(ps.control.mean()) if ps.control.size else np.nan,
                "p (vs reference)": paired.p_value,
                "p (vs control)": control.p_value,
            }
        )
    return pd.DataFrame(rows)


def power_table(
    tb: Testbed, sizes=(5, 10, 20, 40, 80, 160), draws: int = 200, alpha: float = 0.01
) -> pd.DataFrame:
    """How often each pooled test rejects at ``alpha`` on random subsets of each size, per
    condition and design ("vs reference": paired Wilcoxon; "vs control": the empirical
    null): power on sets the model saw, the false-positive rate on clean ones."""
    frames = []
    for name, ps in pooled_conditions(tb).items():
        for design, control in (("vs reference", None), ("vs control", ps.control)):
            if control is not None and control.size == 0:
                continue
            m = rejection_rate(
                ps.contrasts, sizes, draws, alpha, seed=tb.config.seed, control=control
            )
            frames.append(m.assign(set=name, design=design, **{"saw it": ps.saw}))
    return pd.concat(frames, ignore_index=True)


def calibration_shift(tb: Testbed, run: str | None = None) -> pd.DataFrame:
    """Thresholds under shift, per benchmark, on the last checkpoint of ``run`` (default the
    main run): every detector's score thresholded to flag ``fpr`` of known-unseen samples
    taken from (a) the clean calibration split (its first ``calibration_variants`` samples
    for self-referential margins), (b) the *other*
    benchmark's held-out half (what an auditor without in-distribution clean data does),
    (c) the same benchmark's held-out half, cross-fitted in two folds so that no sample
    sets its own threshold — beside the self-referential rules without a threshold.
    Self-referential margins are thresholded like any score (calibrated SR)."""
    stage = last_stage(tb, run or tb.main)
    long = stage_detectors(tb, stage)
    cal = stage_calibration(tb, stage)
    fpr = tb.config.fpr
    rng = np.random.default_rng(tb.config.seed)
    ids = rng.permutation(long.id.unique())
    fold = pd.Series(np.arange(ids.size) % 2, index=ids)
    long = long.assign(fold=long.id.map(fold))
    frames = []
    for bench, target in long.groupby("benchmark", sort=False):
        other = long[(long.benchmark != bench) & ~long.leaked]
        held = target[~target.leaked]
        for detector, d in target.groupby("detector", sort=False):
            entry = registry.detector(detector)
            y, s = d.leaked.to_numpy(bool), d.score.to_numpy(float)
            modes = {}
            if entry.threshold_free:
                modes["none"] = list(d.flag)
            own = cal[cal.detector == detector].score
            sources = {
                "clean split": dict.fromkeys((0, 1), own),
                "other benchmark": dict.fromkeys((0, 1), other[other.detector == detector].score),
                "same benchmark (2-fold)": {
                    k: held[(held.detector == detector) & (held.fold != k)].score for k in (0, 1)
                },
            }
            for mode, clean in sources.items():
                if all(c.notna().any() for c in clean.values()):
                    t = {k: calibrated_threshold(c, fpr) for k, c in clean.items()}
                    modes[mode] = threshold_decide(s, d.fold.map(t).to_numpy(float))
            for mode, flags in modes.items():
                m = metric_table(y, flags, n_boot=tb.config.n_boot)
                frames.append(
                    m.assign(group=bench, detector=detector, family=entry.family, calibration=mode)
                )
    return pd.concat(frames, ignore_index=True)
