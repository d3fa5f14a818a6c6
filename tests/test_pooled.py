"""Benchmark-level pooled tests and the blind text-only baseline, on data where the answer
is known."""

import numpy as np
import pytest

from srlib.detection.blind import blind_scores
from srlib.detection.pooled import (
    contrast_test,
    contrasts,
    control_test,
    pooled_test,
    rejection_rate,
)


def synthetic(n_samples, shift, rng, n=5):
    """Oriented score lists [original, variants...] for target and reference: the reference
    mildly prefers originals (as clean models do), the target as much plus ``shift``."""
    target, reference = [], []
    for _ in range(n_samples):
        base = rng.normal(-2.0, 0.3, n + 1)
        base[0] += 0.3  # every model finds the original's names a little more natural
        reference.append(base + rng.normal(0, 0.05, n + 1))
        t = base + rng.normal(0, 0.05, n + 1)
        t[0] += shift
        target.append(t)
    return target, reference


def test_contrast_is_the_mean_preference_beyond_the_reference():
    d = contrasts([[0.0, -1.0, -3.0], [1.0]], [[0.0, -0.5, -0.5], [1.0]])
    assert d[0] == pytest.approx(((1 - 0.5) + (3 - 0.5)) / 2)
    assert np.isnan(d[1])  # no variants: no statistic


@pytest.mark.parametrize("method", ["wilcoxon", "permutation"])
def test_contrasted_tests_hold_alpha_on_clean_sets_and_detect_leaked_ones(method):
    rng = np.random.default_rng(0)
    rejections = 0
    for _ in range(100):
        target, reference = synthetic(40, 0.0, rng)
        rejections += pooled_test(target, reference, method, resamples=499).p_value < 0.05
    assert rejections <= 12  # 5 expected; binomial(100, 0.05) exceeds 12 with p < 0.001
    target, reference = synthetic(40, 0.1, rng)
    assert pooled_test(target, reference, method, resamples=499).p_value < 0.01


def test_fisher_without_a_reference_rejects_a_clean_model_that_likes_original_names():
    rng = np.random.default_rng(1)
    target, _ = synthetic(200, 0.0, rng)
    assert pooled_test(target, method="fisher").p_value < 0.01


def test_pooled_test_names_bad_input():
    with pytest.raises(ValueError, match="unknown pooled test"):
        pooled_test([[0, 1]], [[0, 1]], method="t-test")
    with pytest.raises(ValueError, match="reference"):
        pooled_test([[0, 1]], method="wilcoxon")
    assert contrast_test(np.array([])).n == 0


@pytest.mark.parametrize("method", ["mannwhitney", "permutation"])
def test_empirical_null_holds_alpha_with_a_mismatched_reference(method):
    rng = np.random.default_rng(4)
    rejections = {"paired": 0, "control": 0}
    for _ in range(60):
        # the target likes originals 0.1 nats more than its reference, on any clean set
        target, reference = synthetic(40, 0.1, rng)
        d = contrasts(target, reference)
        control = contrasts(*synthetic(60, 0.1, rng))
        rejections["paired"] += contrast_test(d).p_value < 0.05
        rejections["control"] += control_test(d, control, method, resamples=499).p_value < 0.05
    assert rejections["paired"] >= 55  # the reference's null is wrong: it rejects
    assert rejections["control"] <= 9  # 3 expected; binomial(60, 0.05) exceeds 9 rarely
    leaked = contrasts(*synthetic(40, 0.3, rng))
    assert control_test(leaked, control, method, resamples=499).p_value < 0.01
    assert contrasts([[0.0, -1.0, -3.0]])[0] == pytest.approx(2.0)  # no reference: r = 0
    with pytest.raises(ValueError, match="unknown control test"):
        control_test(d, control, "t-test")


def test_rejection_rate_rises_with_samples_and_stays_low_on_clean_data():
    rng = np.random.default_rng(2)
    leaked = rng.normal(0.08, 0.2, 400)
    clean = rng.normal(0.0, 0.2, 400)
    power = rejection_rate(leaked, [10, 200], draws=60, alpha=0.01)
    assert power["rejection rate"].iloc[1] > power["rejection rate"].iloc[0]
    assert power["rejection rate"].iloc[1] > 0.8
    fpr = rejection_rate(clean, [200], draws=100, alpha=0.01)
    assert fpr["rejection rate"].iloc[0] <= 0.06
    assert list(rejection_rate(clean, [1000]).columns) == []  # more than there are: no row
    against = rejection_rate(leaked, [200], draws=30, alpha=0.01, control=clean)
    assert against["rejection rate"].iloc[0] > 0.8
    same = rejection_rate(clean[:200], [100], draws=60, alpha=0.01, control=clean[200:])
    assert same["rejection rate"].iloc[0] <= 0.08


def test_blind_baseline_is_at_chance_on_a_random_split_and_finds_a_biased_one():
    rng = np.random.default_rng(3)
    words = ["alpha", "beta", "gamma", "delta", "sort", "list", "sum", "max", "string", "count"]
    texts = [" ".join(rng.choice(words, 12)) for _ in range(200)]
    random_labels = rng.random(200) < 0.5
    scores, _ = blind_scores(texts, random_labels)
    from sklearn.metrics import roc_auc_score

    assert abs(roc_auc_score(random_labels, scores) - 0.5) < 0.12
    biased = [t + (" return result" if i % 2 else "") for i, t in enumerate(texts)]
    labels = np.arange(200) % 2 == 1
    scores, other = blind_scores(biased, labels, others=["sum list return result", "sort max"])
    assert roc_auc_score(labels, scores) > 0.95
    assert other[0] > other[1]
    with pytest.raises(ValueError, match="labels"):
        blind_scores(texts, random_labels[:10])
