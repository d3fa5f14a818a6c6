"""The claim's operating point measured where the decisions are made (``detection.operating``):
null-control rates met with ties broken, immune to a calibration shift that fools the old
point, and a family-wise verdict that keeps its error rate and coverage when models vary."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from srlib.detection.contrasts import Arm, Contrast, contrast_parts, contrast_table, preregistered
from srlib.detection.operating import from_arrays, part, realised, thresholds
from srlib.stats.metrics import count_metric, counts_metrics
from srlib.stats.significance import detectable, equivalence_p, units_needed

GRAY, BLACK = ("PPL", "Min-K%", "Min-K%++", "Zlib"), ("NGO", "n-gram acc")


def table(ids, y, flags=None, scores=None) -> pd.DataFrame:
    """A long table (as ``compare.long_table`` makes it) from arrays, fast enough for
    simulations: rules' ``flags`` and baselines' ``scores`` per detector."""
    frames = []
    for name, values in (flags or {}).items():
        frames.append(pd.DataFrame({"id": ids, "detector": name, "flag": values, "score": 0.0}))
    for name, values in (scores or {}).items():
        frames.append(pd.DataFrame({"id": ids, "detector": name, "flag": None, "score": values}))
    long = pd.concat(frames, ignore_index=True)
    return long.assign(leaked=np.tile(np.asarray(y, bool), len(frames)), benchmark="b")


def calibration(ids, flags=None, scores=None) -> pd.DataFrame:
    return table(ids, np.zeros(len(ids), bool), flags, scores)


def test_a_discrete_score_meets_the_null_controls_rate_within_one_problem():
    """n-gram accuracy takes a handful of values; with ties broken at random its threshold,
    learnt on one half of the null control's problems, flags that half at the rule's rate
    there to within one problem (a strict cut at a tie could miss it by the tie's size)."""
    rng = np.random.default_rng(0)
    ids = np.array([f"p{i}" for i in range(400)])
    y = rng.random(400) < 0.5
    acc = rng.integers(0, 6, 400) / 5  # six values
    null_acc = rng.integers(0, 6, 400) / 5
    rule = rng.random(400) < 0.37
    long = table(ids, y, {"SR black": rng.random(400) < 0.5}, {"n-gram acc": acc})
    null = table(ids, np.zeros(400, bool), {"SR black": rule}, {"n-gram acc": null_acc})
    p = part(long, None, {"SR black", "n-gram acc"}, null)
    everything = np.arange(p.y.size)
    cut = thresholds(p, "n-gram acc", "null:SR black", (everything, None), 0.05)
    for k in (0, 1):
        learn = p.fold != k  # where the rows of half k had their threshold set
        t = cut[p.fold == k][0]
        flagged = int((p.untied["null:n-gram acc"][learn] > t).sum())
        wanted = p.null["SR black"][learn].mean() * learn.sum()
        assert abs(flagged - wanted) <= 1, (flagged, wanted)
        assert np.all(cut[p.fold == k] == t)  # one threshold per half
    untied = p.untied["n-gram acc"]
    raw = p.scores["n-gram acc"]  # in the part's row order
    assert np.all(np.diff(raw[np.argsort(untied)]) >= 0)  # ties broken, nothing else moved


def _shifted(rng, n=600, shift=0.8):
    """SR and a baseline of equal strength: SR thresholds the same evidence the baseline
    scores, at a cut the variants' comparison makes benchmark-free; the baseline's raw score
    is shifted on the calibration split (MBPP's train problems), not on the evaluated
    problems nor on the null control's."""
    ids = np.array([f"p{i}" for i in range(n)])
    y = rng.random(n) < 0.5
    z = y * 1.2 + rng.standard_normal(n)
    cut = 1.0
    null_z = rng.standard_normal(n)
    cal_ids = np.array([f"c{i}" for i in range(n)])
    cal_z = rng.standard_normal(n)
    long = table(ids, y, {"SR gray": z > cut}, {"PPL": z})
    null = table(ids, np.zeros(n, bool), {"SR gray": null_z > cut}, {"PPL": null_z})
    cal = pd.concat(
        [
            calibration(cal_ids, {"SR gray": cal_z > cut}),
            calibration(cal_ids, scores={"PPL": cal_z + shift}),
        ]
    )
    return long, cal, null


def test_a_calibration_shift_favours_sr_at_the_old_point_and_not_at_the_null_point():
    rng = np.random.default_rng(1)
    long, cal, null = _shifted(rng)
    at_null = Contrast("new", Arm(("SR gray",)), Arm(("PPL",), "null", matched_to="SR gray"))
    at_cal = Contrast("old", Arm(("SR gray",)), Arm(("PPL",), "matched", matched_to="SR gray"))
    found = contrast_table({"s": (long, cal, null)}, [at_null, at_cal], n_boot=300)
    found = found.set_index("contrast")
    assert found.loc["old", "low"] > 0  # the shift alone hands SR a "gain"
    new = found.loc["new"]
    assert new.low <= 0 <= new.high and abs(new.difference) < 0.03
    assert abs(new.a_null_rate - new.b_null_rate) < 0.03  # both flag the null control alike
    assert found.loc["old", "b_null_rate"] < found.loc["old", "a_null_rate"] - 0.05


def _equal_family(rng, seeds=3, n=100, model_sd=0.35):
    """Eight detectors of equal strength in expectation, as parts (arrays); each seed's
    models are stronger or weaker per detector (model-to-model variance), so a difference
    seen on a few seeds may be the seeds'. Every problem keeps an effect of its own."""
    ids = np.array([f"p{i}" for i in range(n)])
    ease = rng.standard_normal(n)
    parts = {}
    for s in range(seeds):
        y = rng.random(n) < 0.5
        scores, null = {}, {}
        for name in ("SR gray", "SR black", *GRAY, *BLACK):
            strength = 1.0 + model_sd * rng.standard_normal()
            scores[name] = y * strength + 0.5 * ease + rng.standard_normal(n)
            null[name] = 0.5 * ease + rng.standard_normal(n)
        flags = {r: scores.pop(r) > 1.0 for r in ("SR gray", "SR black")}
        null |= {r: (null[r] > 1.0).astype(float) for r in ("SR gray", "SR black")}
        parts[f"seed {s}"] = from_arrays(ids, y, flags, scores, null)
    return parts


PRIMARY = [c for c in preregistered() if c.role == "primary"]


def test_six_equal_detectors_are_called_better_family_wise_at_most_at_the_nominal_rate():
    """Over 200 simulated testbeds with model-to-model variance, the pooled family (seeds
    and problems resampled) calls at least one of the six equal pairs better in at most 5%."""
    rng = np.random.default_rng(2)
    trials, called = 200, 0
    for t in range(trials):
        parts = _equal_family(rng)
        found = contrast_parts(parts, PRIMARY, each=False, n_boot=60, seed=t)
        called += bool((found.family_verdict == "better").any())
    assert called <= 0.05 * trials, called


def test_intervals_that_resample_models_cover_over_many_simulated_testbeds():
    """Coverage of the pooled 95% interval of SR gray − PPL over 500 simulated testbeds whose
    models vary from seed to seed (the truth: zero, in expectation over models)."""
    rng = np.random.default_rng(3)
    contrast = [PRIMARY[0]]
    covered = []
    for t in range(500):
        parts = _equal_family(rng, seeds=6, n=60)
        row = contrast_parts(parts, contrast, each=False, n_boot=60, seed=t).iloc[0]
        covered.append(row.low <= 0 <= row.high)
    assert np.mean(covered) >= 0.93, np.mean(covered)


def test_realised_rates_and_the_verdict_vocabulary():
    rng = np.random.default_rng(4)
    parts = _equal_family(rng, seeds=2, n=200)
    found = contrast_parts(parts, PRIMARY[:2], n_boot=100)
    assert set(found.part) == {"seed 0", "seed 1", "pooled"}
    assert set(found.family_verdict) <= {"better", "worse", "equivalent", "inconclusive"}
    assert found.a_null_rate.between(0, 1).all() and found.b_null_rate.between(0, 1).all()
    assert (found.a_null_rate - found.b_null_rate).abs().max() < 0.1  # one operating point
    p = parts["seed 0"]
    null, held = realised(p, "SR gray", "none", 0.05)
    assert null == pytest.approx(p.null["SR gray"].mean()) and 0 <= held <= 1


def test_equivalence_power_and_units_needed():
    inside = np.random.default_rng(5).normal(0.0, 0.01, 1000)
    assert equivalence_p(inside, 0.05) < 0.01 and equivalence_p(inside + 0.05, 0.05) > 0.4
    assert detectable(0.027, family=6) == pytest.approx((2.638 + 0.842) * 0.027, rel=1e-3)
    assert units_needed(3, 0.12, 0.05) == 18 and units_needed(3, 0.04, 0.05) == 3
    for counts in [(3, 1, 2, 4), (0, 0, 5, 5), (5, 0, 0, 0), (2.5, 1.5, 0.5, 3.0)]:
        for name, value in counts_metrics(*counts).items():
            assert count_metric(name, *counts) == pytest.approx(float(value))
