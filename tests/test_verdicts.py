"""Verdict sentences on tables whose answer is known: better, worse, no evidence of a
difference; orderings that hold and that do not."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from srlib.detection.verdicts import above_chance, difference, rate_holds
from srlib.duplication import verdicts as dup
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
    assert "consistent with" in rate_holds("t", 0.02, 0.0, 0.06, 0.01)
    assert "does not hold" in rate_holds("t", 0.3, 0.2, 0.4, 0.01)


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


def test_the_studys_ordering_is_judged_per_model_and_references_are_left_out():
    results = _results(
        {"RF": (0.9, 0.8, 0.6), "LSTM": (0.8, 0.85, 0.7), "flag everything": (0, 0, 0)}
    )
    sentences = dup.ordering(results)
    assert len(sentences) == 2
    assert [s.endswith("does not hold.") for s in sentences] == [True, False]  # LSTM, RF


def test_the_drop_ranking_names_the_largest_and_smallest_here_and_in_the_study():
    drop = pd.DataFrame(
        {"relative drop": [0.33, 0.125, np.nan]}, index=["RF", "LSTM", "flag everything"]
    )
    paper = pd.DataFrame({"relative drop": [0.27, 0.16]}, index=["Random Forest", "LSTM"])
    text = dup.drop_ranking(drop, paper)
    assert "here: RF (33%); smallest: LSTM (12%)" in text
    assert "the largest is Random Forest (27%)" in text


def test_mixed_vs_unique_sentences_read_only_that_pair():
    tests = pd.DataFrame(
        {
            "within": ["model: RF", "model: RF", "scenario: mixed", "model: flag everything"],
            "a": ["mixed", "mixed", "RF", "mixed"],
            "b": ["unique", "near-duplicate", "LSTM", "unique"],
            "p": [0.01, 0.5, 0.2, 1.0],
            "p (Holm)": [0.03, 1.0, 0.4, 1.0],
            "folds": [5, 5, 5, 5],
        }
    )
    assert dup.mixed_vs_unique(tests) == [
        "RF: mixed vs unique, Welch's t-test over 5 folds each, p = 0.01 (Holm-adjusted 0.03): "
        "a difference beyond chance at 0.05."
    ]
    tests.loc[0, "p (Holm)"] = 0.06  # the same test, adjusted over more comparisons
    assert dup.mixed_vs_unique(tests)[0].endswith("no evidence of a difference at 0.05.")
    tests.loc[0, ["p", "p (Holm)"]] = float("nan")  # constant folds: no test at all
    assert dup.mixed_vs_unique(tests)[0].startswith("RF: mixed vs unique, no test:")


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
    assert "best threshold-free rule SR gray MCC 0.40" in sentence  # never the reference rule
    assert "other benchmark Min-K% 0.20" in sentence and "half PPL 0.30" in sentence


def test_pooled_power_reports_power_and_whether_alpha_holds():
    power = pd.DataFrame(
        {
            "design": ["vs control"] * 4,
            "set": ["leaked", "leaked", "clean", "clean"],
            "samples": [5, 10, 5, 10],
            "rejection rate": [0.5, 0.9, 0.0, 0.3],
            "low": [0.3, 0.8, 0.0, 0.2],
            "high": [0.7, 1.0, 0.1, 0.4],
            "saw it": [True, True, False, False],
        }
    )
    clean, leaked = tbv.pooled_power(power, 0.01)  # sorted by (design, set)
    assert leaked == "vs control, leaked: rejected in 90% of sets of 10."
    assert "sets of 10" in clean and "α = 0.01: the level does not hold." in clean


def _answer(excess_elsewhere_low: float) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "model": ["humaneval ×1", "humaneval ×1", "null control"],
            "benchmark": ["humaneval", "mbpp:test", "humaneval"],
            "planted": [True, False, False],
            "rate": [0.6, 0.3, 0.2],
            "null_rate": [0.2, 0.2, 0.2],
            "excess": [0.4, 0.1, 0.0],
            "excess_low": [0.3, excess_elsewhere_low, -0.1],
            "excess_high": [0.5, 0.2, 0.1],
            "found": [True, excess_elsewhere_low > 0, False],
        }
    )


def test_the_zoo_verdicts_count_found_and_false_cells_and_read_the_other_benchmark():
    first, detail = tbv.zoo_found(_answer(0.05))
    assert "found in 1 of 1" in first and "'found' in 1 of 2 cells" in first
    assert "humaneval ×1 on mbpp:test" in first and "excess +40%" in detail
    assert tbv.zoo_elsewhere(_answer(0.05)).startswith("Every leaked model's excess is largest")
    assert "1 of 1 leaked models also show an excess" in tbv.zoo_elsewhere(_answer(0.05))
    assert tbv.zoo_elsewhere(_answer(-0.02)).endswith(
        "No excess on the other benchmark clears zero."
    )


def test_the_detection_headline_judges_the_blind_baseline_by_its_interval():
    claim = pd.DataFrame(
        {
            "calibrated on": ["all", "another benchmark"],
            "best SR": ["SR gray", "SR gray"],
            "SR MCC": [0.3, 0.2],
            "SR MCC low": [0.2, 0.1],
            "SR MCC high": [0.4, 0.3],
            "best calibrated SR": ["SR gray", "SR gray"],
            "calibrated SR MCC": [0.25, 0.2],
            "best calibrated baseline": ["PPL", "PPL"],
            "baseline MCC (calibrated)": [0.3, 0.1],
            "baseline MCC (oracle)": [0.35, 0.3],
            "SR − calibrated": [0.0, 0.1],
            "SR − oracle": [-0.05, -0.1],
        },
        index=pd.Index(["all", "humaneval"], name="group"),
    )
    auc = pd.DataFrame(
        {
            "detector": ["SR gray", "SR gray vs base", "Blind (text only)"],
            "family": ["self-referential", "needs a reference model", "trivial reference"],
            "value": [0.7, 0.9, 0.52],
            "low": [0.6, 0.8, 0.45],
            "high": [0.8, 1.0, 0.6],
        }
    )
    text = " ".join(tbv.detection_headline(claim, auc, pd.Series({"SR gray": 0.1})))
    assert "no evidence that it separates them better than chance" in text
    assert "does not rank higher" in text and "humaneval (thresholds calibrated on another" in text
    assert "best AUC is 0.70 (SR gray)" in text  # the reference-needing rule is not counted
