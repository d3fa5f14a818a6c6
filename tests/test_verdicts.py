"""Verdict sentences on tables whose answer is known: better, worse, no evidence of a
difference; orderings that hold and that do not."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from srlib.duplication.impact import verdicts as dup
from srlib.stats.verdicts import above_chance, difference, rate_holds
from srlib.testbed import verdicts as tbv


@pytest.mark.parametrize(
    ("value", "low", "high", "ending"),
    [
        (0.2, 0.05, 0.35, "SR is better."),
        (-0.2, -0.35, -0.05, "SR is worse."),
        (0.1, -0.02, 0.2, "no evidence of a difference."),
        (0.0, 0.0, 0.0, "no evidence of a difference."),  # an interval touching 0 is not "better"
    ],
)
def test_a_difference_is_better_only_when_its_interval_excludes_zero(value, low, high, ending):
    text = difference("SR", "PPL", value, low, high)
    assert text.endswith(ending) and f"{value:+.2f}" in text


def test_a_difference_without_an_interval_says_so():
    assert "no interval" in difference("SR", "PPL", 0.1, math.nan, math.nan)


def test_chance_and_nominal_rates_follow_the_interval():
    assert "better than chance" in above_chance("x", 0.7, 0.6, 0.8)
    assert "no evidence" in above_chance("x", 0.55, 0.45, 0.65)
    assert "wrong way round" in above_chance("x", 0.3, 0.2, 0.4)
    assert rate_holds("t", 8, 164, 0.05).endswith("consistent with the nominal 0.05.")
    assert "above the nominal 0.01: the level does not hold" in rate_holds("t", 30, 100, 0.01)


def test_a_rate_check_fails_on_too_few_flags_as_on_too_many():
    from scipy import stats

    none = rate_holds("SR margin on the null control", 0, 164, 0.05)
    assert "below the nominal 0.05: the level does not hold (too few)" in none
    assert stats.binomtest(0, 164, 0.05).pvalue < 0.001  # the exact two-sided test agrees
    assert "0 of 164 (0.0%; exact 95% interval [0.0%, 2.2%])" in none
    assert "consistent" in rate_holds("t", 0, 20, 0.05)  # 20 trials cannot tell
    assert "cannot be checked" in rate_holds("t", 0, 0, 0.05)


def test_a_rate_check_counts_the_thresholds_own_noise_on_exchangeable_data():
    """A threshold set on 464 clean samples, checked on 332 more from the same distribution:
    the plain exact interval calls the level broken far more often than its 5%, because the
    threshold itself varies; counting that noise (beta-binomial) brings it to about 5%."""
    from srlib.detection.decide import calibrated_threshold

    rng = np.random.default_rng(0)
    plain = counted = 0
    trials = 400
    for _ in range(trials):
        cut = calibrated_threshold(rng.standard_normal(464), 0.05)
        k = int((rng.standard_normal(332) > cut).sum())
        plain += "does not hold" in rate_holds("t", k, 332, 0.05)
        counted += "does not hold" in rate_holds("t", k, 332, 0.05, calibrated_on=464)
    assert counted <= 0.075 * trials and plain >= 1.5 * max(counted, 10), (plain, counted)
    said = rate_holds("PPL", 40, 332, 0.05, calibrated_on=464)
    assert "a threshold set on 464 clean samples flags" in said and "above the nominal" in said


def _results(means: dict[str, tuple[float, float, float]]) -> pd.DataFrame:
    rows = []
    for model, values in means.items():
        for scenario, v in zip(("mixed", "near-duplicate", "unique"), values, strict=True):
            for fold in range(3):
                rows.append(
                    {
                        "model": model,
                        "scenario": scenario,
                        "fold": fold,
                        "metric": "mcc",
                        "value": v,
                    }
                )
    return pd.DataFrame(rows)


def _steps(rows: dict) -> pd.DataFrame:
    """A ``drops.step_table`` after ``drops.family``: (model, step) → (net drop, low, high,
    family-wise, study's drop, its low)."""
    out = []
    for (model, step), (value, low, high, fw, raw, raw_low) in rows.items():
        row = {"model": model, "step": step, "from": 0.9, "to": 0.9 - value}
        row |= {"net drop": value, "net drop low": low, "net drop high": high}
        row |= {"beyond low": low, "beyond high": high, "family-wise": fw}
        row |= {"study's drop": raw, "study's drop low": raw_low, "study's drop high": raw + 0.1}
        row |= {"composition": raw - value, "composition low": -0.1, "composition high": 0.1}
        out.append(row)
    return pd.DataFrame(out).set_index(["model", "step"])


def test_the_studys_ordering_is_read_net_of_composition_beside_the_rule():
    first, second = "mixed → near-duplicate", "near-duplicate → unique"
    steps = _steps(
        {
            ("holds", first): (0.1, 0.05, 0.15, "yes", 0.12, 0.06),
            ("holds", second): (0.2, 0.1, 0.3, "yes", 0.25, 0.1),
            ("unclear", first): (0.05, 0.01, 0.1, "", 0.1, 0.02),  # interval, not family-wise
            ("unclear", second): (0.2, 0.1, 0.3, "yes", 0.2, 0.1),
            ("reversed", first): (-0.1, -0.15, -0.05, "yes", -0.1, -0.2),
            ("reversed", second): (0.2, 0.1, 0.3, "yes", 0.2, 0.1),
            ("shape rule", first): (0.0, 0.0, 0.0, "", 0.05, 0.01),  # composition alone
            ("shape rule", second): (0.0, 0.0, 0.0, "", 0.05, 0.02),
        }
    )
    sentences = dup.ordering(steps)
    assert len(sentences) == 3  # the reference is not judged
    assert sentences[0].startswith("holds: net drops Mixed → Near +0.10 [+0.05, +0.15]")
    assert "the ordering holds net of composition" in sentences[0]
    assert "no evidence for the full ordering net of composition" in sentences[1]
    assert "is reversed" in sentences[2]
    assert sentences[0].endswith(
        "and for the shape rule, which learns nothing, the ordering holds (+0.05, +0.05)."
    )


def test_each_models_drop_is_set_beside_the_studys_counterpart():
    paper = pd.DataFrame(
        {"relative drop": [0.27, 0.16, 0.15, 0.07]},
        index=["Random Forest", "LSTM", "GraphCodeBERT-MLP", "GraphCodeBERT"],
    )
    rows = {
        "Random Forest": (0.05, 0.01, 0.09),  # below the study's 27%
        "LSTM": (0.2, 0.1, 0.3),  # the study's 16% inside
        "Encoder + MLP (frozen)": (0.4, 0.3, 0.5),  # above the study's 15%
        "Encoder (fine-tuned)": (0.02, np.nan, np.nan),  # start MCC not always > 0
    }
    steps = pd.DataFrame(
        [
            {"model": m, "step": "mixed → unique", "relative drop": d}
            | {"relative drop low": lo, "relative drop high": hi}
            for m, (d, lo, hi) in rows.items()
        ]
    ).set_index(["model", "step"])
    text = dup.against_study(steps, paper)
    said = "(descriptive: 95% intervals, not tests of the family)."
    assert text[0].endswith(f"the study's Random Forest: 27%, smaller than the study's {said}")
    assert "as the study measures it (composition included) 5% [1%, 9%]" in text[0]
    assert text[1].endswith(f"the study's LSTM: 16%, consistent with the study {said}")
    assert text[2].endswith(f"GraphCodeBERT-MLP: 15%, larger than the study's {said}")
    assert text[3].startswith("Encoder (fine-tuned): no relative drop to compare")


def test_random_forest_drops_most_only_when_every_family_wise_test_says_so():
    def diffs(rows):
        return pd.DataFrame(
            [
                {"other": m, "low": lo, "high": hi, "family-wise": fw}
                for m, (lo, hi, fw) in rows.items()
            ]
        ).set_index("other")

    most = diffs({"LSTM": (0.01, 0.2, "yes"), "encoder": (0.05, 0.3, "yes")})
    assert dup.largest_drop(most) == (
        "Random Forest's net drop exceeds every other model's (family-wise, Holm), as in the study."
    )
    mixed = diffs(
        {"LSTM": (0.01, 0.2, "yes"), "encoder": (-0.3, -0.05, "yes"), "other": (0.01, 0.1, "")}
    )
    text = dup.largest_drop(mixed)
    assert "more than LSTM; less than encoder; no evidence against other" in text
    assert text.endswith("not reproduced here.")
    assert dup.largest_drop(pd.DataFrame({"low": [], "high": []})).startswith("No other trained")


def test_the_calibration_shift_summary_reads_families_not_names():
    rows = [
        ("humaneval", "SR gray", "self-referential", "none", 0.4),
        ("humaneval", "SR gray vs base", "needs a reference model", "none", 0.9),
        ("humaneval", "PPL", "threshold baseline", "other benchmark", 0.1),
        ("humaneval", "Min-K%", "threshold baseline", "other benchmark", 0.2),
        ("humaneval", "Blind (text only)", "trivial reference", "other benchmark", 0.5),
        ("humaneval", "PPL", "threshold baseline", "same benchmark (2-fold)", 0.3),
    ]
    mcc = pd.DataFrame(rows, columns=["group", "detector", "family", "calibration", "value"])
    (sentence,) = tbv.calibration_shift_summary(mcc)
    assert "threshold-free rules 0.40 (SR gray)" in sentence  # never the reference rule
    assert "other benchmark 0.10 to 0.20 over 2 rules" in sentence  # the blind one left out
    assert "half 0.30 (PPL)" in sentence and "best" not in sentence


def test_pooled_power_reports_power_and_whether_alpha_holds():
    power = pd.DataFrame(
        {
            "design": ["vs control"] * 4,
            "set": ["leaked", "leaked", "clean", "clean"],
            "samples": [5, 10, 5, 10],
            "rejection rate": [0.5, 0.9, 0.0, 0.3],
            "rejected": [10, 18, 0, 6],
            "draws": 20,
            "low": [0.3, 0.8, 0.0, 0.2],
            "high": [0.7, 1.0, 0.1, 0.4],
            "saw it": [True, True, False, False],
            "benchmark": "humaneval",
        }
    )
    clean, leaked = tbv.pooled_power(power, 0.01)  # sorted by (design, set)
    assert leaked == "vs control, leaked, humaneval: rejected in 90% of sets of 10."
    assert "sets of 10" in clean and "α = 0.01: the level does not hold." in clean


def test_the_pooled_false_positive_rate_is_read_from_its_interval():
    from srlib.testbed.controls import false_positive_rate

    pooled = pd.DataFrame(
        {
            "saw it": [True] + [False] * 6,
            "p (vs reference)": [0.0, 0.001, 0.002, 0.003, 0.5, 0.6, 0.7],  # 3 of 6 clean
            "p (vs control)": [0.0, 0.5, 0.5, 0.5, 0.5, 0.5, np.nan],  # 0 of 5 clean
        }
    )
    fpr = false_positive_rate(pooled, alpha=0.01).set_index("design")
    assert fpr.loc["vs reference", ["tests", "rejected"]].tolist() == [6, 3]
    assert fpr.loc["vs control", ["tests", "rejected", "rate", "low"]].tolist() == [5, 0, 0, 0]
    assert fpr.loc["vs reference", "low"] > 0.01  # exact interval: 3 of 6 is above 1%
    reference, control = tbv.pooled_fpr(fpr.reset_index(), 0.01)
    assert reference.startswith("vs reference, clean tests rejected: 3 of 6 (50.0%")
    assert reference.endswith("the level does not hold.")
    assert control.endswith("consistent with α = 0.01.")


def _answer(excess_elsewhere_low: float) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "model": ["humaneval ×1", "humaneval ×1", "humaneval ×1", "null control"],
            "benchmark": ["humaneval · leaked half", "humaneval · held-out half", "mbpp:test",
                          "humaneval"],
            "where": ["leaked half", "held-out half", "other benchmark", "nothing planted"],
            "planted": [True, False, False, False],
            "rate": [0.6, 0.3, 0.3, 0.2],
            "null_rate": [0.2, 0.2, 0.2, 0.2],
            "excess": [0.4, 0.1, 0.1, 0.0],
            "excess_low": [0.3, -0.05, excess_elsewhere_low, -0.1],
            "excess_high": [0.5, 0.2, 0.2, 0.1],
            "found": [True, False, excess_elsewhere_low > 0, False],
        }
    )  # fmt: skip


def test_the_zoo_verdicts_count_found_and_false_cells_and_read_where_nothing_was_planted():
    first, detail = tbv.zoo_found(_answer(0.05))
    assert "found in 1 of 1" in first and "'found' in 1 of 3 cells" in first
    assert "humaneval ×1 on mbpp:test" in first and "excess +40%" in detail
    table = tbv.zoo_excess_table(_answer(0.05))
    assert list(table.columns) == ["leaked half", "held-out half", "other benchmark"]
    text = tbv.zoo_elsewhere(_answer(0.05))
    assert "on the held-out half 0 of 1; on the other benchmark 1 of 1" in text
    assert "'familiar'" in text
    assert tbv.zoo_elsewhere(_answer(-0.02)).endswith("on the other benchmark 0 of 1.")


def test_the_detection_context_judges_the_blind_baseline_by_its_interval():
    auc = pd.DataFrame(
        {
            "detector": ["SR gray", "Blind (text only)"],
            "value": [0.7, 0.52],
            "low": [0.6, 0.45],
            "high": [0.8, 0.6],
        }
    )
    flags, blind = tbv.detection_context(auc, pd.Series({"SR gray": 0.1}))
    assert flags == "Plain SR gray flags 10% of the held-out half."
    assert "no evidence that it separates them better than chance" in blind
    assert "shift" not in blind
    auc.loc[1, ["value", "low", "high"]] = [0.7, 0.6, 0.8]
    (blind,) = tbv.detection_context(auc, pd.Series(dtype=float))
    assert "better than chance" in blind and "may then be that shift" in blind


def test_the_clean_fpr_summary_counts_thresholds_whose_interval_clears_nominal():
    table = pd.DataFrame(
        {
            "model": ["clean base", "clean base", "null control"],
            "benchmark": ["humaneval", "humaneval", "mbpp:test"],
            "detector": ["PPL", "SR gray", "Zlib"],
            "threshold": ["calibrated on the other benchmark", "none", "calibrated on ..."],
            "low": [0.2, 0.3, 0.01],  # SR gray's level is not the nominal one: not counted
        }
    )
    text = tbv.clean_fpr_summary(table, 0.05)
    assert text.startswith("Of 2 thresholds set on a benchmark the model never saw, 1 flag")
    assert text.endswith(": PPL on clean base (humaneval).")
    assert tbv.clean_fpr_summary(table.iloc[[1]], 0.05).startswith("No threshold")


def test_models_are_read_against_the_shape_rule_per_scenario():
    index = pd.MultiIndex.from_tuples(
        [
            ("RF", "mixed"),
            ("RF", "unique"),
            ("LSTM", "mixed"),
            ("LSTM", "unique"),
            ("flag everything", "mixed"),
        ],
        names=["model", "scenario"],
    )
    table = pd.DataFrame(
        {
            "low": [0.1, 0.05, -0.3, 0.01, -0.5],
            "high": [0.3, 0.2, -0.1, 0.1, -0.3],
            "family-wise": ["yes", "yes", "yes", "", "yes"],
        },
        index=index,
    )
    assert dup.against_references(table) == [
        "RF beats the shape rule in every scenario (family-wise, Holm).",
        "LSTM against the shape rule (family-wise, Holm): falls below it in mixed; "
        "no evidence of a difference in unique.",
    ]
