"""The duplication study's learning curve: nested repository subsets per fold, every size on
the same test candidates, and points that follow a known curve on synthetic data."""

import numpy as np
import pandas as pd
import pytest

from srlib.duplication.impact.curve import curve_table, run_curve, subsets
from srlib.duplication.impact.features import Dataset
from srlib.duplication.impact.scenarios import make_folds
from srlib.stats.resample import ClusterBootstrap

N, REPOS = 2400, 40


def skill(m: int) -> float:
    """The known curve: the share a detector trained on ``m`` repositories gets right."""
    return 0.5 + 0.45 * (1 - np.exp(-m / 6))


class KnownCurve:
    """A detector whose accuracy is ``skill`` of the number of repositories it trained on:
    a candidate is right when its fixed uniform draw falls below that skill."""

    name = "known curve"

    def __init__(self, repos: np.ndarray, draws: np.ndarray) -> None:
        self.repos, self.draws = repos, draws

    def fit(self, data, train, val):
        self.m = np.unique(self.repos[np.concatenate([train, val])]).size  # val tunes: seen
        return self

    def predict(self, data, rows):
        right = self.draws[rows] < skill(self.m)
        return np.where(right, data.labels[rows], ~data.labels[rows])


@pytest.fixture(scope="module")
def synthetic():
    rng = np.random.default_rng(0)
    y = rng.random(N) < 0.5
    repos = np.array([f"r{i % REPOS}" for i in range(N)], dtype=object)
    data = Dataset(["x"] * N, np.zeros((N, 1)), y)
    folds = make_folds(
        y, pd.DataFrame(index=range(N)), [None] * N, k=4, groups={"repository": repos},
        scenarios=("repository",),
    )  # fmt: skip
    return data, repos, folds, rng.random(N)


def test_subsets_are_nested_and_test_the_same_candidates(synthetic):
    data, repos, folds, _ = synthetic
    parts = subsets(folds, repos, data.labels, [2, 5, 100], seed=3)
    by_fold = {}
    for part in parts:
        by_fold.setdefault(part["fold"], []).append(part)
    for sizes in by_fold.values():
        assert [p["repositories"] for p in sizes] == [2, 5, 30]  # 100: the whole set, 30
        assert [p["whole"] for p in sizes] == [False, False, True]
        chosen = [set(repos[np.concatenate([p["train"], p["val"]])]) for p in sizes]
        assert [len(c) for c in chosen] == [2, 5, 30] and chosen[0] < chosen[1] < chosen[2]
        assert all(np.array_equal(p["test"], sizes[0]["test"]) for p in sizes)
        assert not chosen[2] & set(repos[sizes[0]["test"]])  # unseen repositories only
        two = np.concatenate([sizes[0]["train"], sizes[0]["val"]])
        assert len(set(data.labels[two])) == 2  # the smallest size trains on both classes
    with pytest.raises(ValueError, match="at least 2"):
        subsets(folds, repos, data.labels, [1])


def test_the_curve_follows_a_known_curve_within_its_intervals(synthetic, tmp_path):
    data, repos, folds, draws = synthetic
    sizes = [2, 4, 8, 30]
    predictions = run_curve(
        data, folds, repos, sizes, ["known curve"], lambda _: KnownCurve(repos, draws),
        tmp_path, progress=False,
    )  # fmt: skip
    boot = ClusterBootstrap(list(repos), None, n_boot=300, seed=1)
    table = curve_table(predictions, data.labels, boot).loc["known curve"]
    assert table.index.tolist() == sizes
    truth = np.array([2 * skill(m) - 1 for m in sizes])  # MCC of symmetric errors
    assert ((table.low <= truth) & (truth <= table.high)).all(), table
    assert table.mcc.is_monotonic_increasing
    assert (table["step low"].dropna() > 0).all()  # every step up, paired
    again = run_curve(
        data, folds, repos, sizes, ["known curve"], lambda _: pytest.fail("refit"), tmp_path,
        progress=False,
    )  # fmt: skip
    pd.testing.assert_frame_equal(again, predictions)  # resumed from its files


def test_a_run_without_the_repository_scenario_has_an_empty_curve_and_one_class_fits_widen():
    from srlib.duplication.impact.curve import _fit_rows

    labels = np.array([False, False, True, True])
    empty = pd.DataFrame(columns=["model", "size", "fold", "repositories", "sample", "predicted"])
    boot = ClusterBootstrap(["a", "b", "c", "d"], None, n_boot=10)
    assert curve_table(empty, labels, boot).empty
    data = Dataset(["x"] * 4, np.zeros((4, 1)), labels)
    part = {"train": np.array([0, 1]), "val": np.array([2, 3])}  # fit rows of one class
    train, val = _fit_rows(data, part)
    assert train.tolist() == val.tolist() == [0, 1, 2, 3]  # and validate there: one class each
