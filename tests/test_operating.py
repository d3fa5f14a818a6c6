"""The operating points (``detection.operating``): null-control and held-out rates met with
ties broken, cross-fitted, immune to a calibration shift that fools the old point (the
design's error rates and coverage at the book's size: ``test_pooling.py``)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from synthetic import equal_family

from srlib.detection.contrasts import Arm, Contrast, contrast_parts, contrast_table
from srlib.detection.declared import declared_contrasts
from srlib.detection.operating import part, realised, thresholds
from srlib.stats.metrics import count_metric, counts_metrics
from srlib.stats.significance import detectable, equivalence_p

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


TRANSPORT = [  # each pair at the transport point, as a family of its own
    replace(c, role="transport")
    for c in declared_contrasts()
    if c.name.endswith("(transport)") and c.b.pool == "best"
]


def test_realised_rates_and_the_verdict_vocabulary():
    rng = np.random.default_rng(4)
    parts = equal_family(rng, seeds=2, n=200, model_sd=0.35)
    found = contrast_parts(parts, TRANSPORT[:2], n_boot=100)
    assert set(found.part) == {"seed 0", "seed 1", "pooled"}
    assert set(found.family_verdict) <= {"better", "worse", "equivalent", "inconclusive"}
    assert found.a_null_rate.between(0, 1).all() and found.b_null_rate.between(0, 1).all()
    assert (found.a_null_rate - found.b_null_rate).abs().max() < 0.1  # one operating point
    p = parts["seed 0"]
    null, held, leaked = realised(p, "SR gray", "none", 0.05)
    assert null == pytest.approx(p.null["SR gray"].mean()) and 0 <= held <= 1
    assert leaked == pytest.approx(p.flags["SR gray"][p.y].mean())
    assert found.a_leaked_rate.between(0, 1).all() and found.b_held_out_rate.between(0, 1).all()


def test_equivalence_and_power():
    inside = np.random.default_rng(5).normal(0.0, 0.01, 1000)
    assert equivalence_p(inside, 0.05) < 0.01 and equivalence_p(inside + 0.05, 0.05) > 0.4
    assert detectable(0.027, family=6) == pytest.approx((2.638 + 0.842) * 0.027, rel=1e-3)
    for counts in [(3, 1, 2, 4), (0, 0, 5, 5), (5, 0, 0, 0), (2.5, 1.5, 0.5, 3.0)]:
        for name, value in counts_metrics(*counts).items():
            assert count_metric(name, *counts) == pytest.approx(float(value))


def test_a_matched_threshold_flags_exactly_the_rules_count():
    """``matched_threshold`` flags round(rate · n) whatever n and rate (calibrated_threshold
    flags one fewer wherever the rate is a count of n); at the held-out point the baseline
    flags exactly as many of the learning half's held-out problems as the rule flags there,
    and at ``heldout@r`` exactly the share r of them — in a resample that draws problems
    twice too (``operating.drawn``)."""
    from srlib.detection.decide import calibrated_threshold, matched_threshold
    from srlib.detection.operating import _halves, drawn, flags

    rng = np.random.default_rng(8)
    for n in (1, 2, 7, 50, 333):
        s = rng.random(n)
        for m in range(0, n + 1, max(1, n // 7)):
            assert np.count_nonzero(s > matched_threshold(s, m / n)) == m
        if n > 2:
            assert np.count_nonzero(s > calibrated_threshold(s, 3 / n)) == 2  # the old rounding
    p = equal_family(rng, seeds=1, n=400)["seed 0"]
    every = np.arange(p.y.size)
    resample = rng.choice(p.y.size, p.y.size)  # problems drawn twice: tied copies
    assert np.unique(resample).size < resample.size
    for idx in (every, resample):
        draw = (idx, None)
        first, second, unseen = _halves(p, idx, {})
        for learn, judged in ((second & unseen, first), (first & unseen, second)):
            at = thresholds(p, "PPL", "heldout:SR gray", draw, 0.05)[judged][0]
            assert np.count_nonzero(drawn(p, "PPL", idx)[learn] > at) == np.count_nonzero(
                p.flags["SR gray"][idx][learn]
            )
            low = thresholds(p, "SR gray", "heldout@0.05", draw, 0.05)[judged][0]
            found = np.count_nonzero(drawn(p, "SR gray", idx)[learn] > low)
            assert found == round(0.05 * learn.sum())
    assert flags(p, "PPL", "heldout:SR gray", (every, None), 0.05).dtype == bool
