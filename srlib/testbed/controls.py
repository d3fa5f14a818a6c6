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
from srlib.detection.pooled import contrast_test, contrasts, control_test, rejection_rate
from srlib.stats.metrics import metric_table
from srlib.testbed import experiment as ex
from srlib.testbed.report import stage_calibration, stage_detectors
from srlib.testbed.runs import EXPOSURE, NULL, PARAPHRASE
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
    """One set the pooled test runs on, within one benchmark: per-sample contrasts of the
    target against the reference model, the same contrasts on control problems of the same
    benchmark that the target never saw, and whether the target saw the set."""

    contrasts: np.ndarray
    control: np.ndarray
    saw: bool


def _contrasts(tb: Testbed, target, reference) -> pd.Series:
    """Sample id → ``pooled.contrasts`` of checkpoint ``target`` against ``reference``."""
    n = tb.config.n
    t, r = tb.scores(target, n).set_index("id"), tb.scores(reference, n).set_index("id")
    values = contrasts(list(t.gray_scores), list(r.gray_scores.reindex(t.index)))
    return pd.Series(values, index=t.index).replace([np.inf, -np.inf], np.nan).dropna()


def _halves(ids, seed: int, name: str) -> tuple[list, list]:
    """``ids`` in two seeded random halves (a set and its control, both unseen)."""
    ids = sorted(ids)
    order = np.random.default_rng([seed, len(ids), sum(map(ord, name))]).permutation(len(ids))
    half = len(ids) // 2
    return [ids[i] for i in order[:half]], [ids[i] for i in order[half:]]


def _pooled(c: pd.Series, ids, control, saw: bool) -> PooledSet:
    return PooledSet(
        c.reindex(sorted(ids)).dropna().to_numpy(),
        c.reindex(sorted(control)).dropna().to_numpy(),
        saw,
    )


def pooled_conditions(tb: Testbed) -> dict[tuple[str, str], PooledSet]:
    """The sets the pooled tests run on, by (condition, benchmark), each with controls of its
    own benchmark (its format) that the target never saw. Leaked sets (the exposure sweep's
    groups, the main run's leaked half) against the main run's held-out half; clean sets,
    each one seeded half of unseen problems against the other half: the main run's held-out
    half, the null-control model against the base model, and the base model against the
    unrelated reference (neither saw any benchmark)."""
    seed = tb.config.seed
    main = _contrasts(tb, last_stage(tb, tb.main).path, tb.base)
    sweep = _contrasts(tb, last_stage(tb, EXPOSURE).path, tb.base) if EXPOSURE in tb.runs else None
    null = _contrasts(tb, last_stage(tb, NULL).path, tb.base) if NULL in tb.runs else None
    unrelated = _contrasts(tb, tb.base, tb.reference)
    groups = tb.exposure_groups() if sweep is not None else {}
    seen = tb.config.repeats * tb.config.epochs
    out = {}
    for bench, g in tb.split.groupby("benchmark", sort=False):
        leaked, held = list(g.id[g.leaked]), list(g.id[~g.leaked])
        for copies in tb.config.exposure_sweep if sweep is not None else ():
            ids = [i for i in leaked if groups.get(i) == copies]
            out[f"leaked, seen {copies}×", bench] = _pooled(sweep, ids, held, True)
        out[f"leaked, seen {seen}× (main run)", bench] = _pooled(main, leaked, held, True)
        out["held out (main run)", bench] = _pooled(main, *_halves(held, seed, "held"), False)
        everything = _halves(g.id, seed, "all")
        if null is not None:
            out["null control vs base", bench] = _pooled(null, *everything, False)
        out["base vs unrelated", bench] = _pooled(unrelated, *everything, False)
    return out


def pooled_table(tb: Testbed, method: str = "wilcoxon") -> pd.DataFrame:
    """Both pooled tests per condition and benchmark on all its samples: the paired test
    against the reference (``method``) and the empirical null against the same benchmark's
    unseen control problems (Mann-Whitney); mean contrasts and sizes."""
    rows = []
    for (name, bench), ps in pooled_conditions(tb).items():
        paired = contrast_test(ps.contrasts, method, seed=tb.config.seed)
        control = control_test(ps.contrasts, ps.control)
        rows.append(
            {
                "set": name,
                "benchmark": bench,
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


def false_positive_rate(pooled: pd.DataFrame, alpha: float = 0.01) -> pd.DataFrame:
    """Per design, over the sets no model saw (``pooled_table``'s clean rows: conditions ×
    benchmarks, each a different model pair or a disjoint pair of halves): how many tests
    reject at ``alpha``, as a rate with its exact (Clopper-Pearson) 95% interval."""
    clean = pooled[~pooled["saw it"]]
    rows = []
    for design in ("vs reference", "vs control"):
        p = clean[f"p ({design})"].dropna()
        k = int((p < alpha).sum())
        low, high = (
            stats.binomtest(k, len(p)).proportion_ci(0.95, method="exact")
            if len(p)
            else (np.nan, np.nan)
        )
        rows.append(
            {
                "design": design,
                "tests": len(p),
                "rejected": k,
                "rate": k / len(p) if len(p) else np.nan,
            }
            | {"low": low, "high": high}
        )
    return pd.DataFrame(rows)


def power_table(
    tb: Testbed, sizes=(5, 10, 20, 40, 80, 160), draws: int = 200, alpha: float = 0.01
) -> pd.DataFrame:
    """How often each pooled test rejects at ``alpha`` on random subsets of each size, per
    condition, benchmark and design ("vs reference": paired Wilcoxon; "vs control": the
    empirical null of the same benchmark): power on sets the model saw; on clean sets the
    rejection rate of subsets of one pool (overlapping: ``false_positive_rate`` counts
    independent tests)."""
    frames = []
    for (name, bench), ps in pooled_conditions(tb).items():
        for design, control in (("vs reference", None), ("vs control", ps.control)):
            if control is not None and control.size == 0:
                continue
            m = rejection_rate(
                ps.contrasts, sizes, draws, alpha, seed=tb.config.seed, control=control
            )
            frames.append(m.assign(set=name, benchmark=bench, design=design, **{"saw it": ps.saw}))
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
