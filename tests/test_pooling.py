"""The claim's design answers for itself, at the book's own size (its seeds × 664 problems):
equal discrimination with different shifts is no difference at the held-out point (and a
difference at the transport point, which is what that point measures); equal
detectors keep coverage and the family-wise error in both directions with a seed spread
as large as the build's; the seeds a margin needs count the problems' shared variance."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm
from synthetic import equal_family

from srlib.detection.arms import Arm, Contrast
from srlib.detection.contrasts import contrast_parts
from srlib.detection.declared import declared_contrasts
from srlib.detection.operating import from_arrays
from srlib.stats.pooling import pool, problem_variance, seeds_needed
from srlib.testbed.config import PROFILES

SEEDS, PROBLEMS = len(PROFILES["cpu"].replicates), 664  # the book's design
PAIR = {
    "discrimination": Contrast(
        "d", Arm(("SR gray",)), Arm(("PPL",), "heldout", matched_to="SR gray")
    ),
    "transport": Contrast(
        "t", Arm(("SR gray",)), Arm(("PPL",), "null", matched_to="SR gray"), "transport"
    ),
}


def _shifted(rng, held_a: float, held_b: float, null_rate: float = 0.165, signal: float = 1.0):
    """Two detectors of equal discrimination (the same signal over the same noise) whose
    scores move by different amounts from the null control to the leaked model, so that at
    the null control's rate they flag ``held_a`` and ``held_b`` of the leaked model's held-out
    half: SR gray (a rule: its score above a cut) and PPL (a score)."""
    cut = norm.isf(null_rate)
    shift_a, shift_b = cut - norm.isf(held_a), cut - norm.isf(held_b)
    ids = np.array([f"p{i}" for i in range(PROBLEMS)])
    parts = {}
    for s in range(SEEDS):
        y = rng.random(PROBLEMS) < 0.5
        a = signal * y + shift_a + rng.standard_normal(PROBLEMS)
        b = signal * y + shift_b + rng.standard_normal(PROBLEMS)
        null_a, null_b = rng.standard_normal(PROBLEMS), rng.standard_normal(PROBLEMS)
        null = {"SR gray": (null_a > cut).astype(float), "PPL": null_b}
        parts[f"seed {s}"] = from_arrays(ids, y, {"SR gray": a > cut}, {"PPL": b}, null)
    return parts


@pytest.mark.parametrize(
    "held_a, held_b, signal, transport",
    [(0.83, 0.99, 1.0, "SR better"), (0.16, 0.81, 1.5, "SR better"),
     (0.99, 0.83, 1.0, "SR worse"), (0.83, 0.83, 1.0, "equal")],
)  # fmt: skip
def test_equal_discrimination_with_different_shifts_is_no_difference_where_it_is_measured(
    held_a, held_b, signal, transport
):
    """The review's table: at the null point the detector whose flags move less wins; at
    the held-out point (rates matched on the leaked model's held-out half: an exploratory
    view of discrimination) the two are the same, as they are."""
    rng = np.random.default_rng(int(held_a * 100 + held_b * 10))
    parts = _shifted(rng, held_a, held_b, signal=signal)
    found = contrast_parts(parts, list(PAIR.values()), each=False, n_boot=200)
    found = found.set_index("role")
    d, t = found.loc["discrimination"], found.loc["transport"]
    assert d.low <= 0 <= d.high and abs(d.difference) < 0.05, d
    assert d.family_verdict in ("inconclusive", "equivalent")
    assert abs(d.a_held_out_rate - d.b_held_out_rate) < 0.03  # one held-out rate
    assert t.a_held_out_rate == pytest.approx(held_a, abs=0.04)
    assert t.b_held_out_rate == pytest.approx(held_b, abs=0.04)
    if transport == "SR better":
        assert t.low > 0, t
    elif transport == "SR worse":
        assert t.high < 0, t
    else:
        assert t.low <= 0 <= t.high


REGIMES = {
    "seeds apart": {"model_sd": 0.38},
    "problems shared": {"model_sd": 0.03, "ease_sd": 0.6, "shared_split": True},
}
"""The two regimes the family-wise error is checked in: the seeds' own spread dominating (an
MCC difference's per-seed SD above 0.1, several times the build's), and the build's (about 60%
of the gray rows' pooled variance shared by the problems, as in ``declared.DESIGN``)."""


def books_design_trials(regime: str, trials: int = 500) -> dict:
    """The simulation of the test below (run in the suite's own process, on its core, while the
    quick book's process builds the chapters on the other) in one of ``REGIMES``: the median
    per-seed spread, the problems' median share of the gray AUC row's pooled variance, the
    share of intervals that hold zero and, per family, the trials with a family-wise "better"
    or "worse"."""
    rng = np.random.default_rng(54 if regime == "seeds apart" else 55)
    families = ("discrimination", "transport")
    declared = [c for c in declared_contrasts() if c.role in families]
    covered, wrong, spread, shared = [], dict.fromkeys(families, 0), [], []
    for t in range(trials):
        parts = equal_family(rng, SEEDS, PROBLEMS, **REGIMES[regime])
        found = contrast_parts(parts, declared, each=False, n_boot=40, seed=t)
        covered += list((found.low <= 0) & (found.high >= 0))
        for role in families:
            own = found[found.role == role]
            wrong[role] += bool(own.family_verdict.isin(["better", "worse"]).any())
        spread += list(found.seed_sd[found.metric == "mcc"])
        gray = found[(found.role == "discrimination") & (found.a == "SR gray")].iloc[0]
        shared.append(gray.problem_se**2 / (gray.problem_se**2 + gray.seed_sd**2 / SEEDS))
    return {"spread": float(np.median(spread)), "covered": float(np.mean(covered)),
            "shared": float(np.median(shared)), "wrong": wrong, "trials": trials}  # fmt: skip


RULED_OUT = {"seeds apart": 0.10, "problems shared": 0.05}
"""The family-wise error rate each regime's check rules out. In the build's regime the nominal
5%; where the seeds' own spread dominates, 10%: measured there, the family verdicts err more
often than 5% (``docs/measured-builds.md`` records the counts; why is not established — the
pooled t on K − 1 degrees of freedom is exact only for normal per-seed differences)."""

COVERED = {"seeds apart": (0.93, 0.99), "problems shared": (0.93, 1.0)}
"""The share of 95% intervals that must hold zero, per regime: where the problems carry much of
the variance the t on K − 1 degrees of freedom is conservative by design (``stats.pooling``),
so only the low end is held there."""


@pytest.mark.parametrize("regime", list(REGIMES))
def test_at_the_books_design_equal_detectors_keep_coverage_and_the_family_wise_error(regime):
    """500 simulated testbeds of the book's seeds × 664 problems per regime (``REGIMES``), both
    declared families (each rule against the mean of its baselines: AUC, and MCC at the null
    point) on equal detectors. Coverage of each 95% interval within ``COVERED``, and the
    family-wise error (better *or* worse anywhere in a family; both families' 1,000 verdicts
    pooled) must rule out the regime's ``RULED_OUT`` rate: its one-sided 97.5% Clopper–Pearson
    bound (``ruled_out``) lies below it. At 1,000 verdicts the check tells 5% from 7.5%
    (``test_the_family_error_check_tells_five_from_seven_and_a_half``); the bound each regime
    reached is printed. It is a family-wise rate, not a per-contrast one."""
    found = books_design_trials(regime)
    wrong, verdicts = sum(found["wrong"].values()), 2 * found["trials"]
    bound = ruled_out(wrong, verdicts)
    print(
        f"{regime}: {wrong} false family verdicts of {verdicts} ({found['wrong']}), above"
        f" {bound:.1%} ruled out; intervals holding zero {found['covered']:.1%}"
    )
    if regime == "seeds apart":
        assert found["spread"] >= 0.1, found  # several times the build's own spread
    else:
        assert 0.5 <= found["shared"] <= 0.75, found  # the build's regime
    low, high = COVERED[regime]
    assert low <= found["covered"] <= high, found
    assert bound < RULED_OUT[regime], (bound, found)


def test_the_family_error_check_tells_five_from_seven_and_a_half():
    """What 1,000 family verdicts can tell (taken as independent, which they are not quite: a
    trial's two families share its testbed): an observed rate of 5% rules out 7.5%
    (``ruled_out``), and an observed 7.5% rules out 5% (the interval's low end, ``ruled_in``)."""
    assert ruled_out(50, 1000) < 0.075 and ruled_in(75, 1000) > 0.05


def ruled_in(false_verdicts: int, verdicts: int, level: float = 0.975) -> float:
    """The family-wise error rate below which ``false_verdicts`` in ``verdicts`` is unlikely: the
    one-sided ``level`` Clopper–Pearson lower bound."""
    from scipy.stats import beta

    if false_verdicts == 0:
        return 0.0
    return float(beta.ppf(1 - level, false_verdicts, verdicts - false_verdicts + 1))


def nominal(trials: int, rate: float = 0.05) -> int:
    """The most false verdicts in ``trials`` a procedure at ``rate`` gives in 97.5% of runs:
    the check passes a 5% procedure (at 300 trials it allows 23, 7.7%) and fails one at twice
    that rate in about nine runs of ten (P(Bin(300, 0.1) ≤ 23) ≈ 0.1)."""
    from scipy.stats import binom

    return int(binom.ppf(0.975, trials, rate))


def ruled_out(false_verdicts: int, verdicts: int, level: float = 0.975) -> float:
    """The family-wise error rate above which ``false_verdicts`` in ``verdicts`` is unlikely: the
    one-sided ``level`` Clopper–Pearson upper bound."""
    from scipy.stats import beta

    if false_verdicts >= verdicts:
        return 1.0
    return float(beta.ppf(level, false_verdicts + 1, verdicts - false_verdicts))


def test_the_seeds_a_margin_needs_count_the_shared_problems():
    """Per-seed differences D_k = c + s_k, c shared by every seed (the problems), s_k each
    seed's own: at ``seeds_needed`` seeds a difference of the margin is found with about 80%
    power, and equivalence within it shown with about 80% at a true 0; the old shortcut
    (the error falling as 1/√K) asks for too few seeds and falls short of 80%."""
    rng = np.random.default_rng(5)
    problem_sd, seed_sd, margin = 0.012, 0.08, 0.05
    wanted = seeds_needed(problem_sd**2, seed_sd**2, margin)
    equivalent = seeds_needed(problem_sd**2, seed_sd**2, margin, equivalence=True)
    assert 3 < wanted < equivalent < 200

    def power(k: int, truth: float, equivalence: bool) -> float:
        hits = 0
        for _ in range(2000):
            values = truth + problem_sd * rng.standard_normal() + seed_sd * rng.standard_normal(k)
            pooled = pool(values.mean(), values, problem_sd**2)
            hits += pooled.p_equivalent(margin) < 0.05 if equivalence else pooled.p() < 0.05
        return hits / 2000

    assert power(int(wanted), margin, False) >= 0.77
    assert power(int(equivalent), 0.0, True) >= 0.77
    three = pool(0.0, seed_sd * rng.standard_normal(3) + 0.0, problem_sd**2)
    now = (norm.ppf(0.975) + norm.ppf(0.8)) * three.se  # as if se fell as 1/√K:
    shortcut = max(3, int(np.ceil(3 * (now / margin) ** 2)))
    assert shortcut < wanted and power(shortcut, margin, False) < 0.77
    assert seeds_needed(0.03**2, seed_sd**2, margin) == float("inf")  # problems alone too many


def test_the_problems_share_is_the_covariance_between_seeds():
    """Var(c) from per-seed resampled differences: their mean covariance, not their
    variance; none where the seeds move independently."""
    rng = np.random.default_rng(6)
    shared = rng.standard_normal((4000, 1)) * 0.03
    alone = rng.standard_normal((4000, 3)) * 0.05
    assert problem_variance(shared + alone) == pytest.approx(0.03**2, rel=0.1)
    assert problem_variance(alone) < 0.0002
    with pytest.raises(ValueError, match="≥ 2 of each"):
        problem_variance(np.zeros((10, 1)))
    with pytest.raises(ValueError, match="at least 2 seeds"):
        pool(0.1, np.array([0.1]), 0.0)
    exact = pool(0.1, np.array([0.05, 0.1, 0.15]), 0.0)
    assert exact.se == pytest.approx(0.05 / np.sqrt(3)) and exact.df == 2
    assert exact.interval()[0] == pytest.approx(0.1 - 4.302653 * exact.se, rel=1e-5)


def test_the_pool_is_the_mean_of_the_seeds_so_a_scale_shift_between_models_is_no_gain():
    """Equal discrimination in every seed, PPL's scores shifted by 0, 2 and 4 between seeds'
    models: each seed's AUC difference is about 0, and so is the pooled one (an AUC over all
    seeds' rows at once would rank one seed's problems against another's and find a gain)."""
    rng = np.random.default_rng(9)
    ids = np.array([f"p{i}" for i in range(PROBLEMS)])
    parts = {}
    for s, shift in enumerate((0.0, 2.0, 4.0)):
        y = rng.random(PROBLEMS) < 0.5
        a, b = y + rng.standard_normal(PROBLEMS), y + rng.standard_normal(PROBLEMS) + shift
        parts[f"seed {s}"] = from_arrays(ids, y, {"SR gray": a > 1.0}, {"PPL": b}, None)
        parts[f"seed {s}"].margins["SR gray"] = a
    auc = Contrast("auc", Arm(("SR gray",), "scores"), Arm(("PPL",), "scores"), "secondary", "auc")
    found = contrast_parts(parts, [auc], n_boot=100).set_index("part")
    each = found.difference.drop("pooled")
    assert found.loc["pooled", "difference"] == pytest.approx(each.mean())
    assert found.loc["pooled", "low"] <= 0 <= found.loc["pooled", "high"]
    assert found.loc["pooled", "seeds"] == len(parts)


def test_the_held_out_point_never_reads_the_judged_halfs_labels():
    """Cross-fitting: permuting the labels within one half moves the other half's
    thresholds only, never its own."""
    from srlib.detection.operating import thresholds

    rng = np.random.default_rng(10)
    ids = np.array([f"p{i}" for i in range(400)])
    y = rng.random(400) < 0.5
    z = y + rng.standard_normal(400)
    part = from_arrays(ids, y, {"SR gray": z > 0.8}, {"PPL": z + 0.1 * rng.standard_normal(400)})
    every = (np.arange(400), None)
    before = thresholds(part, "PPL", "heldout:SR gray", every, 0.05)
    half = np.flatnonzero(part.fold == 0)
    part.y[half] = rng.permutation(part.y[half])
    after = thresholds(part, "PPL", "heldout:SR gray", every, 0.05)
    assert np.array_equal(before[half], after[half])
    assert not np.array_equal(before[part.fold == 1], after[part.fold == 1])


def test_the_papers_gain_reads_both_directions_in_one_holm_family():
    """The paper's rows: a gain well below the paper's is "not reproduced here", one above
    zero and near the paper's "reproduced", one near zero with a wide interval
    "inconclusive", one shown both below the paper's and above zero "smaller but positive";
    the one-sided p-values of every row are one Holm family."""
    from srlib.detection.contrasts import _paper

    table = pd.DataFrame(
        {
            "role": "paper",
            "part": "pooled",
            "p_below_gain": [0.001, 0.6, 0.3, 0.0001],
            "p_above_zero": [0.2, 0.004, 0.3, 0.0002],
            "p_holm": np.nan,
            "p_equivalent_holm": np.nan,
            "family_verdict": "",
        }
    )
    got = _paper(table)
    assert list(got.family_verdict) == [
        "not reproduced here",
        "reproduced",
        "inconclusive",
        "smaller but positive",
    ]
    assert got.p_holm.iloc[3] == pytest.approx(8 * 0.0001)  # smallest of 8 one-sided p-values
    assert got.p_above_zero_holm.iloc[1] == pytest.approx(5 * 0.004)
