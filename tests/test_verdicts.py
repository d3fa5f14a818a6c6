"""Verdict sentences on tables whose answer is known: better, worse, no evidence of a
difference; orderings that hold and that do not."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from srlib.detection.verdicts import above_chance, claim_headline, difference, rate_holds
from srlib.duplication.impact import verdicts as dup
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
    """A ``mcc_drop_intervals`` table: model → (start MCC, end MCC, drop low, drop high)."""
    return pd.DataFrame(
        [
            {"model": m, "a": a, "b": b, "drop": a - b, "drop low": lo, "drop high": hi}
            for m, (a, b, lo, hi) in rows.items()
        ]
    ).set_index("model")


def test_the_studys_ordering_is_read_from_both_steps_intervals():
    first = _steps(
        {
            "holds": (0.9, 0.8, 0.05, 0.15),
            "unclear": (0.9, 0.85, -0.02, 0.12),
            "reversed": (0.8, 0.9, -0.15, -0.05),
            "flag everything": (0.0, 0.0, 0.0, 0.0),
        }
    ).rename(columns={"a": "mixed", "b": "near-duplicate"})
    second = _steps(
        {
            "holds": (0.8, 0.6, 0.1, 0.3),
            "unclear": (0.85, 0.7, 0.05, 0.25),
            "reversed": (0.9, 0.7, 0.1, 0.3),
            "flag everything": (0.0, 0.0, 0.0, 0.0),
        }
    ).rename(columns={"a": "near-duplicate", "b": "unique"})
    sentences = dup.ordering(first, second)
    assert len(sentences) == 3  # the reference is not judged
    assert "holds (both drops above 0)" in sentences[0]
    assert sentences[0].startswith("holds: MCC 0.90 (Mixed) → 0.80 (Near) → 0.60 (Unique)")
    assert "no evidence for the study's full ordering" in sentences[1]
    assert "is reversed" in sentences[2]


def _relative(rows: dict) -> pd.DataFrame:
    """A ``mcc_drop_intervals`` table of relative drops: model → (drop, low, high, drop low)."""
    return pd.DataFrame(
        [
            {"model": m, "relative drop": d, "relative low": lo, "relative high": hi}
            | {"drop low": dl}
            for m, (d, lo, hi, dl) in rows.items()
        ]
    ).set_index("model")


def test_each_models_drop_is_set_beside_the_studys_counterpart():
    paper = pd.DataFrame(
        {"relative drop": [0.27, 0.16, 0.15, 0.07]},
        index=["Random Forest", "LSTM", "GraphCodeBERT-MLP", "GraphCodeBERT"],
    )
    drop = _relative(
        {
            "Random Forest": (0.05, 0.01, 0.09, 0.01),  # below the study's 27%
            "LSTM": (0.2, 0.1, 0.3, 0.05),  # the study's 16% inside
            "Encoder + MLP (frozen)": (0.4, 0.3, 0.5, 0.2),  # above the study's 15%
            "Encoder (fine-tuned)": (0.02, np.nan, np.nan, -0.1),  # start MCC not always > 0
        }
    )
    text = dup.against_study(drop, paper)
    assert text[0].endswith("(a drop); the study's Random Forest: 27%, smaller than the study's.")
    assert text[1].endswith("the study's LSTM: 16%, consistent with the study.")
    assert text[2].endswith("GraphCodeBERT-MLP: 15%, larger than the study's.")
    assert text[3].startswith("Encoder (fine-tuned): no relative drop to compare")
    drop.loc["Random Forest", "drop low"] = -0.01
    assert "(no evidence of a drop)" in dup.against_study(drop, paper)[0]


def test_random_forest_drops_most_only_when_every_paired_interval_says_so():
    def diffs(rows):
        return pd.DataFrame(
            [{"other": m, "low": lo, "high": hi} for m, (lo, hi) in rows.items()]
        ).set_index("other")

    most = diffs({"LSTM": (0.01, 0.2), "encoder": (0.05, 0.3), "flag everything": (np.nan,) * 2})
    assert dup.largest_drop(most) == (
        "Random Forest drops more than every other model (each paired interval above 0), "
        "as in the study."
    )
    mixed = diffs({"LSTM": (0.01, 0.2), "encoder": (-0.3, -0.05), "other": (-0.1, 0.1)})
    text = dup.largest_drop(mixed)
    assert "more than LSTM; less than encoder; no evidence of a difference from other" in text
    assert text.endswith("not reproduced here.")
    assert dup.largest_drop(diffs({"flag everything": (np.nan,) * 2})).startswith("No model")
    undefined = diffs({"LSTM": (0.01, 0.2), "encoder": (np.nan, np.nan)})  # one not comparable
    text = dup.largest_drop(undefined)
    assert "more than LSTM; no comparison with encoder" in text and "every" not in text


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


def _claims(rows: list[tuple[str, str, float, float, float]]) -> pd.DataFrame:
    """A contrast table (as ``contrast_table`` makes it) from (contrast, part, d, low, high)."""
    return pd.DataFrame(
        [
            {"contrast": c, "role": "primary", "part": p, "a": c.split(" − ")[0],
             "b": c.split(" − ")[1], "metric": "mcc", "difference": d, "low": lo, "high": hi}
            for c, p, d, lo, hi in rows
        ]
    )  # fmt: skip


def test_the_claim_headline_counts_pooled_verdicts_and_the_seeds_that_agree():
    rows = [
        ("SR gray − PPL", "seed 0", 0.2, 0.1, 0.3),
        ("SR gray − PPL", "seed 1", 0.1, -0.05, 0.25),
        ("SR gray − PPL", "pooled", 0.15, 0.05, 0.25),  # better; 1 of 2 seeds agree
        ("SR gray − Zlib", "seed 0", -0.2, -0.3, -0.1),
        ("SR gray − Zlib", "seed 1", -0.1, -0.2, -0.01),
        ("SR gray − Zlib", "pooled", -0.15, -0.25, -0.05),  # worse in both
        ("SR black − NGO", "seed 0", 0.0, -0.1, 0.1),
        ("SR black − NGO", "seed 1", 0.05, -0.1, 0.2),
        ("SR black − NGO", "pooled", 0.02, -0.05, 0.1),  # no evidence in both
    ]
    lead, ppl, zlib, ngo = claim_headline(_claims(rows))
    assert lead.startswith("Of 3 primary contrasts (pooled over 2 seeds")
    assert "better in 1, worse in 1, and there is no evidence of a difference in 1" in lead
    assert ppl.endswith("SR gray is better. Same interval verdict in 1 of 2 seeds.")
    assert zlib.endswith("SR gray is worse. Same interval verdict in 2 of 2 seeds.")
    assert ngo.endswith("no evidence of a difference. Same interval verdict in 2 of 2 seeds.")


def test_the_claim_headline_counts_the_family_wise_verdicts_where_there_are_any():
    claims = _claims(
        [("SR gray − PPL", "seed 0", 0.2, 0.01, 0.3), ("SR gray − Zlib", "seed 0", 0.1, 0.02, 0.2)]
    )
    claims = claims.assign(p=[0.04, 0.03], p_holm=[0.06, 0.06], family_verdict="no evidence")
    lead, ppl, _ = claim_headline(claims)
    assert "Holm-adjusted across the family" in lead and "better in 0" in lead
    assert "no evidence of a difference in 2" in lead
    assert ppl.endswith("SR gray is better. Family-wise: no evidence (Holm-adjusted p = 0.06).")


def test_the_claim_headline_on_one_seed_reads_that_seed():
    lead, only = claim_headline(_claims([("SR gray − PPL", "seed 3", 0.1, -0.1, 0.3)]))
    assert "on seed 3" in lead and "no evidence of a difference in 1" in lead
    assert only.endswith("no evidence of a difference.") and "seeds" not in only
    assert claim_headline(_claims([]).reindex(columns=["role"])) == [
        "No primary contrast was computed."
    ]


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
        {"low": [0.1, 0.05, -0.3, -0.1, -0.5], "high": [0.3, 0.2, -0.1, 0.1, -0.3]}, index=index
    )
    assert dup.against_references(table) == [
        "RF beats the shape rule in every scenario (paired intervals).",
        "LSTM against the shape rule: falls below it in mixed; "
        "no evidence of a difference in unique.",
    ]
