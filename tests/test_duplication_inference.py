"""The impact study's inference: cluster-resampled intervals that widen where candidates come
from fewer repositories, drops net of composition (zero for a rule that learns nothing, even
where duplicates are easier), pairing, the Holm family, and the verdicts read from them."""

import numpy as np
import pandas as pd
import pytest

from srlib.duplication.impact import verdicts
from srlib.duplication.impact.drops import (
    Pooled,
    against_reference,
    duplicate_gain,
    family,
    mcc_table,
    net_differences,
    step_table,
)
from srlib.stats.resample import ClusterBootstrap


def _frame(model: str, scenario: str, rows: np.ndarray, predicted: np.ndarray) -> pd.DataFrame:
    """One model's pooled predictions in one scenario, as ``drops.fold_predictions`` gives."""
    return pd.DataFrame(
        {"model": model, "scenario": scenario, "fold": 0, "sample": rows, "predicted": predicted}
    )


def _right(y: np.ndarray, share: float, rng: np.random.Generator) -> np.ndarray:
    """Predictions right on about ``share`` of the candidates."""
    return np.where(rng.random(y.size) < share, y, ~y)


def test_a_repository_resample_moves_whole_files_and_candidates_resample_alone():
    repos = [f"r{i % 4}" for i in range(40)]
    files = [f"f{i % 8}" for i in range(40)]  # file f0 is in r0 only, f1 in r1 ...
    boot = ClusterBootstrap(repos, files, "repository", n_boot=200, seed=1)
    w = boot.weights
    same_file = [i for i in range(40) if files[i] == "f3"]
    assert (w[:, same_file] == w[:, [same_file[0]]]).all()  # a file moves as one
    assert (boot.n_repos, boot.n_files) == (4, 8)
    naive = ClusterBootstrap(repos, files, "candidate", n_boot=200, seed=1).weights
    assert (naive.sum(axis=1) == 40).all()
    with pytest.raises(ValueError, match="unknown resampling level 'repo'"):
        ClusterBootstrap(repos, files, "repo")


def test_repository_resampled_intervals_widen_with_fewer_repositories():
    rng = np.random.default_rng(0)
    n = 2400
    y = rng.random(n) < 0.5

    def width(repositories: int, level: str = "repository") -> float:
        repos = np.arange(n) % repositories
        accuracy = np.random.default_rng(repositories).uniform(0.55, 0.95, repositories)
        f = np.where(rng.random(n) < accuracy[repos], y, ~y)  # each repository its own skill
        boot = ClusterBootstrap([f"r{r}" for r in repos], None, level, n_boot=400, seed=2)
        pooled = Pooled(_frame("m", "mixed", np.arange(n), f), y, boot)
        row = mcc_table(pooled).loc[("m", "mixed")]
        return row.high - row.low

    few, many = width(6), width(60)
    assert few > 1.5 * many  # clusters of 400 candidates hold less evidence than of 40
    assert width(6, "candidate") < few / 2  # and resampling candidates alone hides it


def test_a_rule_that_learns_nothing_has_no_net_drop_where_duplicates_are_easier():
    rng = np.random.default_rng(3)
    n = 1200
    y = rng.random(n) < 0.5
    duplicated = np.arange(n) < 600  # duplicates are the easy half
    pool = np.flatnonzero(~duplicated)  # Unique tests the rest
    rule = np.where(duplicated, _right(y, 0.95, rng), _right(y, 0.65, rng))  # learns nothing
    memory = np.where(duplicated, y, _right(y, 0.9, rng))  # Mixed: recalls what it trained on
    alone = _right(y, 0.65, rng)  # Unique: what it can do without
    recall = _right(y, 0.65, rng)  # a pure memoriser: its twin's label, else as good as alone
    every = np.arange(n)
    frames = [
        _frame("shape rule", "mixed", every, rule),
        _frame("shape rule", "unique", pool, rule[pool]),  # the same rule, the same flags
        _frame("shape rule", "file", every, rule),
        _frame("memoriser", "mixed", every, memory),
        _frame("memoriser", "unique", pool, alone[pool]),
        _frame("memoriser", "file", every, alone),
        _frame("steady", "mixed", every, rule),  # trained, yet no better in Mixed
        _frame("steady", "unique", pool, rule[pool]),
        _frame("steady", "file", every, rule),
        _frame("pure memoriser", "mixed", every, np.where(duplicated, y, recall)),
        _frame("pure memoriser", "unique", pool, recall[pool]),  # no twin: the same guesses
        _frame("pure memoriser", "file", every, recall),  # the twins held out with their file
    ]
    boot = ClusterBootstrap([f"r{i % 40}" for i in range(n)], None, n_boot=400, seed=0)
    pooled = Pooled(pd.concat(frames), y, boot)
    steps = step_table(pooled, [("mixed", "unique")])
    rule_row = steps.loc[("shape rule", "mixed → unique")]
    assert rule_row["study's drop low"] > 0.1  # the study's reading: a drop, all composition
    assert rule_row["net drop"] == rule_row["net drop low"] == rule_row["net drop high"] == 0
    assert rule_row["composition"] == pytest.approx(rule_row["study's drop"])
    memoriser = steps.loc[("memoriser", "mixed → unique")]
    assert memoriser["beyond low"] > 0.3 and memoriser.p < 0.01
    assert steps.loc[("steady", "mixed → unique"), "p"] == 1.0  # beyond the rule: exactly 0
    pure = steps.loc[("pure memoriser", "mixed → unique")]
    assert pure["net drop"] == 0 and pure.p == 1.0  # the net drop cannot see it ...
    gain = duplicate_gain(pooled)
    assert gain.loc["pure memoriser", "low"] > 0.3 and gain.loc["pure memoriser", "p"] < 0.01
    assert (gain.candidates == 600).all()  # ... the duplicated candidates themselves can
    assert gain.loc["steady", "gain"] == 0 and gain.loc["steady", "p"] == 1.0
    assert "shape rule" not in gain.index  # a rule that learns nothing: zero by construction
    size = family(steps, gain)
    assert size == 6 and np.isnan(rule_row.p)  # references are reported, never tested
    models = ["memoriser", "steady", "pure memoriser"]
    said = dict(zip(models, verdicts.memorisation(steps, gain), strict=True))
    assert said["pure memoriser"].startswith("pure memoriser, mixed → unique")
    assert "MCC: memorisation (family-wise" in said["pure memoriser"]
    assert "the net drop: no evidence of a difference" in said["pure memoriser"]
    assert ": no evidence of memorisation (family-wise, Holm, p = 1)" in said["steady"]
    unseen = step_table(pooled, [("mixed", "file")])  # the same step on every candidate
    assert unseen.loc[("pure memoriser", "mixed → file"), "net drop"] > 0


@pytest.mark.parametrize("where", ["generated", "vendored"])
def test_a_nearest_neighbour_memoriser_is_found_memorising(where, background_job, tmp_path):
    """The positive control on real folds: a 1-nearest-neighbour memoriser (the label of the
    closest training context) trained and tested as the study trains its detectors, on the
    offline corpus and on every vendored CredData candidate (that one computed beside the
    suite: ``wholebench.vendored_memoriser``); the shape rule, which learns nothing, is the
    reference whose net drop is zero."""
    from wholebench import memoriser_study

    from srlib.duplication.data.corpus import CorpusConfig, make_corpus

    if where == "vendored":
        found = background_job("vendored_memoriser")
    else:
        records = make_corpus(CorpusConfig(size=600, scanned_files=20, seed=2))
        found = memoriser_study(records, str(tmp_path))
    value, low, _ = found["gain"]
    assert found["family-wise"] == "yes" and low > 0, found
    assert found["family"] == 6  # two net drops, its gain, and it against the rule thrice
    assert found["rule net drop"] == 0
    assert "MCC: memorisation (family-wise" in found["said"][0]
    published = {"fold results", "mcc", "steps", "duplicate-gain", "interval-widths"}
    assert published <= set(found["digests"]) and set(found["digests"].values()) == {"duplication"}


def test_the_family_is_every_test_the_verdicts_read_and_holm_adjusts_it():
    a = pd.DataFrame({"p": [0.01, np.nan, 0.04]})
    b = pd.DataFrame({"p": [0.02]})
    assert family(a, b) == 3
    np.testing.assert_allclose(a["p (Holm)"], [0.03, np.nan, 0.04])
    assert b["p (Holm)"].tolist() == [0.04] and a["family-wise"].tolist() == ["yes", "", "yes"]


def test_models_are_paired_on_the_same_candidates_and_an_unfinished_run_is_refused():
    rng = np.random.default_rng(0)
    y = np.arange(300) % 2 == 0
    noisy = _right(y, 0.7, rng)
    rows = np.arange(300)
    frames = [_frame(m, s, rows, f) for s in ("mixed", "repository") for m, f in
              (("shape rule", noisy), ("good", y), ("same", noisy))]  # fmt: skip
    boot = ClusterBootstrap([f"r{i % 30}" for i in range(300)], None, n_boot=200)
    pooled = Pooled(pd.concat(frames), y, boot)
    table = against_reference(pooled)
    assert table.loc[("good", "mixed"), "low"] > 0.3
    same = table.loc[("same", "repository")]
    assert same.difference == 0 and same.low == same.high == 0 and same.p == 1.0
    assert "shape rule" not in table.index.get_level_values("model")
    with pytest.raises(ValueError, match="no mixed and unique results"):
        net_differences(pooled, "good")
    partial = pd.concat([*frames, _frame("late", "mixed", rows[:100], y[:100])])
    with pytest.raises(ValueError, match="different samples in scenario 'mixed'"):
        Pooled(partial, y, boot)
    wider = [_frame("good", "mixed", rows[:100], y[:100]), _frame("good", "unique", rows, y)]
    with pytest.raises(ValueError, match="'unique' tests candidates 'mixed' does not"):
        step_table(Pooled(pd.concat(wider), y, boot), [("mixed", "unique")])


def _steps(rows: dict) -> pd.DataFrame:
    """A ``step_table`` with family columns: (model, step) → (net drop, low, high, family)."""
    out = []
    for (model, step), (value, low, high, fw) in rows.items():
        row = {"model": model, "step": step, "from": 0.8, "to": 0.8 - value}
        for name in ("net drop", "study's drop", "composition"):
            row |= {name: value, f"{name} low": low, f"{name} high": high}
        row |= {"beyond low": low, "beyond high": high, "family-wise": fw, "p (Holm)": 0.01}
        out.append(row)
    return pd.DataFrame(out).set_index(["model", "step"])


def test_the_landing_sentence_and_the_closing_paragraph_follow_the_family():
    steps = _steps(
        {
            ("RF", "mixed → repository"): (0.25, 0.1, 0.4, "yes"),
            ("LSTM", "mixed → repository"): (0.2, -0.1, 0.5, ""),
            ("RF", "mixed → unique"): (0.05, -0.02, 0.1, ""),
            ("LSTM", "mixed → unique"): (0.3, 0.2, 0.4, "yes"),
            ("shape rule", "mixed → unique"): (0.0, 0.0, 0.0, ""),
        }
    )
    headline = verdicts.headline(steps)
    assert "RF +0.25 [+0.10, +0.40] (p (Holm) = 0.01); LSTM +0.20 [-0.10, +0.50]" in headline
    assert headline.endswith("family-wise an overstatement for 1 of 2 (RF).")
    gain = pd.DataFrame(
        {"gain": [0.2, 0.0], "low": [0.1, -0.1], "high": [0.3, 0.1], "family-wise": ["yes", ""]},
        index=pd.Index(["RF", "LSTM"], name="model"),
    )
    closing = verdicts.closing(steps, gain, family_size=7)
    assert closing.startswith("Of 2 trained detectors, 1 of 2 (RF) score the candidates with")
    assert "and 1 (LSTM) score lower on the unique pool" in closing
    assert "1 of 2 trained detectors (RF) score lower" in closing and "one of 7 tests" in closing
    untested = verdicts.closing(steps, gain.iloc[:0], family_size=5)  # no File scenario run
    assert "the memorisation test was not run (it needs the File scenario)" in untested
    none = _steps({("RF", "mixed → repository"): (0.1, -0.1, 0.3, "")})
    assert verdicts.headline(none).endswith(
        "no evidence of an overstatement for any of the 1, family-wise."
    )


def test_the_scenario_figure_draws_references_first_in_the_scenarios_order():
    from srlib.duplication.impact.scenarios import SCENARIOS
    from srlib.plots import mcc_by_scenario

    rows = [(m, s, 0.5, 0.4, 0.6) for m in ("LSTM", "shape rule") for s in SCENARIOS[::-1]]
    table = pd.DataFrame(rows, columns=["model", "scenario", "mcc", "low", "high"])
    fig = mcc_by_scenario(table.set_index(["model", "scenario"]), SCENARIOS)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["shape rule", "LSTM"]
    assert [t.get_text() for t in ax.get_xticklabels()] == list(SCENARIOS)
