"""Every scorer against a hand computation; deciders' tie and orientation rules; metrics."""

import math
import zlib

import numpy as np
import pandas as pd
import pytest
from conftest import program_sample
from sklearn.metrics import f1_score, matthews_corrcoef

from srlib.detection.decide import (
    calibrated_threshold,
    oracle_threshold,
    self_referential,
    threshold_decide,
)
from srlib.detection.scoring import (
    cdd_peak,
    code_tokens,
    min_k,
    min_k_plus_plus,
    ngram_accuracy,
    ngram_overlap,
    perplexity,
    prefix_suffix,
    reference_ratio,
    zlib_ratio,
)
from srlib.models.base import GenerationSettings, TokenScores
from srlib.stats.metrics import bootstrap, evaluate, tpr_at_fpr
from srlib.stats.rates import difference_interval, flag_rate, paired_difference_interval

LP = np.array([-0.5, -2.0, -0.1, -4.0, -1.0, -0.3, -3.0, -0.2, -0.7, -1.5])
MU = np.array([-1.0] * 10)
VAR = np.array([0.25] * 10)
S = TokenScores([f"t{i}" for i in range(10)], LP, MU, VAR)


def test_perplexity():
    assert perplexity(S).raw == pytest.approx(math.exp(1.33))
    assert perplexity(S).score == pytest.approx(-1.33)


def test_min_k_takes_the_lowest_ceil_k_share():
    assert min_k(S, 0.2).raw == pytest.approx((-4.0 - 3.0) / 2)
    assert min_k(S, 0.25).raw == pytest.approx((-4.0 - 3.0 - 2.0) / 3)
    with pytest.raises(ValueError):
        min_k(S, 0)


def test_min_k_plus_plus_normalises_by_the_distribution():
    z = (LP - MU) / 0.5
    assert min_k_plus_plus(S, 0.2).raw == pytest.approx(np.mean(np.sort(z)[:2]))
    blind = TokenScores(S.tokens, LP, MU * np.nan, VAR)
    with pytest.raises(ValueError, match="full next-token distribution"):
        min_k_plus_plus(blind)


def test_zlib_and_reference():
    text = "def f(x):\n    return x * 2\n"
    assert zlib_ratio(S, text).raw == pytest.approx(-1.33 / len(zlib.compress(text.encode())))
    ref = TokenScores(S.tokens, LP - 0.5, MU, VAR)
    assert reference_ratio(S, ref).score == pytest.approx(0.5)


def test_ngo_by_hand():
    assert code_tokens("return a+b  # x") == ["return", "a", "+", "b", "#", "x"]
    ref = "return a + b"  # 3-grams: (return a +) (a + b)
    assert ngram_overlap("return a + c", ref, 3).raw == pytest.approx(0.5)
    assert ngram_overlap("return a + b", ref, 3).raw == 1.0
    assert ngram_overlap("", ref, 3).raw == 0.0
    assert ngram_overlap("a a", "a", 3).raw == 1.0  # n shrinks to the reference length
    assert ngram_overlap("x y", "x y x y", 2).raw == pytest.approx(1 / 3)  # multiset
    # oriented in log units: log((hits + 1) / (n-grams + 1)); 0 at a perfect overlap
    assert ngram_overlap("return a + c", ref, 3).score == pytest.approx(math.log(2 / 3))
    assert ngram_overlap("return a + b", ref, 3).score == 0.0
    assert ngram_overlap("", ref, 3).score == pytest.approx(math.log(1 / 3))


def test_prefix_suffix_is_the_same_rule_for_every_variant():
    s = program_sample(
        "    a = x\n    b = a\n    return b\n", "", prompt="def f(x):\n", format="completion"
    )
    prefix, suffix = prefix_suffix(s, 0.5)
    assert prefix == "def f(x):\n    a = x" and suffix == "\n    b = a\n    return b\n"
    assert prefix + suffix == s.text
    one_line = program_sample("x\n", "", prompt="p\n", format="completion")
    assert prefix_suffix(one_line, 0.9) == ("p", "\nx\n")


class Script:
    """A scripted black-box model: greedy continues with a fixed text, sampling as told."""

    fingerprint = "script"

    def __init__(self, greedy, samples=()):
        self.greedy, self.samples = greedy, list(samples)

    def token_logprobs(self, texts):
        raise NotImplementedError

    def generate(self, prompts, settings: GenerationSettings):
        if settings.temperature > 0:
            return [self.samples[: settings.num_samples] for _ in prompts]
        return [[self.greedy(p)] for p in prompts]


def test_ngram_accuracy_counts_exact_next_n_tokens():
    text = "a b c d e f g h i j k l"
    toks = text.split()
    perfect = Script(lambda p: " " + " ".join(toks[len(code_tokens(p)) :]))
    assert ngram_accuracy(perfect, text, n=3, starts=4).raw == 1.0
    wrong = Script(lambda p: " z z z")
    assert ngram_accuracy(wrong, text, n=3, starts=4).raw == 0.0


def test_cdd_peak_by_hand():
    greedy = " ".join("abcdefghijklmnopqrst")  # 20 tokens; α·l = 0.05·21 = 1.05
    near = greedy + " u"  # distance 1
    far = " ".join("zyxwvutsrq")
    model = Script(lambda p: greedy, samples=[greedy, near, far, far])
    assert cdd_peak(model, "p", samples=4).raw == pytest.approx(0.5)


@pytest.mark.parametrize(
    "orig, variants, leaked, p",
    [
        (-1.0, [-2.0, -3.0], True, 1 / 3),
        (-2.0, [-2.0, -3.0], False, 2 / 3),  # a tie is not leaked
        (-3.0, [-2.0, -1.0], False, 1.0),
        (0.9, [0.5, 0.9], False, 2 / 3),
        (0.9, [0.5, 0.1], True, 1 / 3),
    ],
)
def test_self_referential_reads_oriented_scores_and_ties_are_not_leaked(orig, variants, leaked, p):
    v = self_referential(orig, variants)
    assert v.leaked is leaked and v.p_value == pytest.approx(p)
    assert (v.margin > 0) is leaked


def test_margins_are_nats_in_both_settings():
    def scores(ppl):
        return TokenScores(["a", "b"], np.full(2, -math.log(ppl)), np.zeros(2), np.ones(2))

    gray = self_referential(perplexity(scores(math.e)).score, [perplexity(scores(math.e**2)).score])
    assert gray.leaked and gray.margin == pytest.approx(1.0)  # log PPL(variant) - log PPL(x0)
    ref = "a b c d e f g"  # 5 trigrams
    black = self_referential(
        ngram_overlap("a b c d e f g", ref).score, [ngram_overlap("a b c x", ref).score]
    )
    assert black.leaked and black.margin == pytest.approx(math.log(6 / 2))


@pytest.mark.parametrize("variants", [[], [1.0, float("nan")]])
def test_self_referential_without_a_comparison_is_undecided(variants):
    v = self_referential(1.0, variants)
    assert v.leaked is None and not v.decided and math.isnan(v.p_value)
    assert self_referential(float("nan"), [1.0]).leaked is None


def _oracle_by_sklearn(scores, labels, objective="f1"):
    """The slow reference: F1 (or MCC) by scikit-learn at every distinct score, lowest best
    kept; a NaN score is never flagged."""
    s, y = np.asarray(scores, dtype=float), np.asarray(labels, dtype=bool)
    best = (float("inf"), 0.0)
    for t in np.unique(s[~np.isnan(s)]):
        flags = np.nan_to_num(s, nan=-np.inf) >= t
        value = (
            f1_score(y, flags, zero_division=0)
            if objective == "f1"
            else matthews_corrcoef(y, flags)
        )
        if value > best[1] + 1e-12:
            best = (float(t), float(value))
    return best


@pytest.mark.parametrize("seed", range(6))
def test_oracle_threshold_equals_the_scikit_learn_search(seed):
    rng = np.random.default_rng(seed)
    size = int(rng.integers(1, 60))
    scores = rng.integers(0, 8, size).astype(float)  # many ties
    scores[rng.random(size) < 0.15] = np.nan
    labels = rng.random(size) < [0.0, 0.3, 0.5, 1.0, 0.5, 0.1][seed]
    t, f1 = oracle_threshold(scores, labels)
    t_ref, f1_ref = _oracle_by_sklearn(scores, labels)
    assert t == t_ref and f1 == pytest.approx(f1_ref)
    t, mcc = oracle_threshold(scores, labels, "mcc")
    t_ref, mcc_ref = _oracle_by_sklearn(scores, labels, "mcc")
    assert mcc == pytest.approx(mcc_ref) and (t == t_ref or mcc == pytest.approx(0))


def test_the_mcc_oracle_flags_less_than_the_f1_oracle_where_they_differ():
    scores = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
    labels = [0, 1, 0, 0, 1, 0, 1, 1, 1, 1]
    t_f1, _ = oracle_threshold(scores, labels, "f1")
    t_mcc, mcc = oracle_threshold(scores, labels, "mcc")
    assert t_mcc > t_f1 and mcc == pytest.approx(
        matthews_corrcoef(labels, np.array(scores) >= t_mcc)
    )


def test_threshold_modes():
    scores, labels = [0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1]
    t, f1 = oracle_threshold(scores, labels)
    assert f1 == pytest.approx(f1_score(labels, np.array(scores) >= t))
    assert f1 == pytest.approx(0.8)
    clean = np.linspace(0, 1, 101)
    t = calibrated_threshold(clean, fpr=0.05)
    assert threshold_decide(clean, t).mean() <= 0.05
    rng = np.random.default_rng(0)
    for size in (1, 2, 7, 100, 464):
        sample = np.round(rng.random(size), 1)  # ties too
        for rate in (0.01, 0.05, 0.2, 0.37, 0.5):  # the fast path is numpy's "higher" quantile
            quantile = np.quantile(sample, 1 - rate, method="higher")
            assert calibrated_threshold(sample, rate) == quantile
    flags = threshold_decide([0.2, float("nan"), 0.9], 0.5)
    assert flags.tolist() == [False, pd.NA, True]
    ranked = evaluate(labels, scores=scores, n_boot=10).set_index("metric")
    assert ranked.value["roc_auc"] == pytest.approx(0.75)
    one_class = evaluate([1, 1, 1, 1], scores=scores, n_boot=10).set_index("metric")
    assert math.isnan(one_class.value["roc_auc"])


def test_metrics_and_intervals():
    rng = np.random.default_rng(0)
    labels = rng.random(200) < 0.5
    scores = labels + rng.normal(0, 0.8, 200)
    flags = scores > 0.5
    table = evaluate(labels, flags, scores, n_boot=200).set_index("metric")
    assert table.loc["f1", "value"] == pytest.approx(f1_score(labels, flags))
    assert table.loc["mcc", "value"] == pytest.approx(matthews_corrcoef(labels, flags))
    assert (table.low <= table.value).all() and (table.value <= table.high).all()
    assert 0 <= tpr_at_fpr(labels, scores, 0.01) <= tpr_at_fpr(labels, scores, 0.05) <= 1
    point, lo, hi = bootstrap(lambda y, s: np.mean(s[y]), labels, scores, n_boot=100)
    assert lo < point < hi


def test_flag_rate_against_chance_and_an_empirical_null():
    out = flag_rate([True] * 30 + [False] * 70, n_variants=5, null_flags=[True] * 10 + [False] * 90)
    assert out["rate"] == 0.3 and out["chance"] == pytest.approx(1 / 6)
    assert out["p_vs_chance"] < 0.01
    assert out["null_rate"] == 0.1 and out["excess"] == pytest.approx(0.2)
    assert out["p_vs_null"] < 0.01


def test_undecided_samples_are_counted_not_scored_as_negatives():
    labels = [True, True, False, False]
    table = evaluate(labels, [True, None, False, pd.NA], [0.9, float("nan"), 0.1, 0.2], n_boot=20)
    table = table.set_index("metric")
    assert table.value["recall"] == 1.0  # the undecided leaked sample is not a miss
    assert table.undecided["f1"] == 2 and table.n["f1"] == 2
    assert table.undecided["roc_auc"] == 1 and table.n["roc_auc"] == 3


def test_the_paired_interval_is_the_unpaired_one_without_correlation_and_narrower_with_it():
    # a·d = b·c: no correlation between the pairs, so method 10 is the unpaired hybrid score
    both, first, second, neither = 2, 4, 3, 6
    n = both + first + second + neither
    unpaired = difference_interval(both + first, n, both + second, n)
    assert paired_difference_interval(both, first, second, neither) == pytest.approx(unpaired)
    # the same margins, strongly correlated pairs: the same difference, a narrower interval
    low, high = paired_difference_interval(40, 10, 0, 50)
    wide_low, wide_high = difference_interval(50, 100, 40, 100)
    assert low < 0.1 < high and high - low < (wide_high - wide_low) / 2 and low > 0


def test_flag_rate_against_a_null_model_on_the_same_samples_is_paired():
    flags = [True] * 30 + [False] * 68 + [None] * 2
    null = [True] * 20 + [False] * 78 + [True, None]
    out = flag_rate(flags, 5, null, paired=True)
    assert out["null_test"] == "McNemar (paired)" and out["paired"] == 98
    assert out["excess"] == pytest.approx(10 / 98)  # 30/98 − 20/98 on the 98 both decide
    assert out["p_vs_null"] == pytest.approx(0.5**10)  # ten discordant pairs, all one way
    assert out["excess_low"] > 0
    with pytest.raises(ValueError, match="pairs need both"):
        flag_rate(flags, 5, null[:50], paired=True)


def test_difference_interval_is_newcombes():
    # Newcombe (1998), Stat. Med. 17:873, Table II, method 10: 56/70 − 48/80 and 9/10 − 3/10
    assert difference_interval(56, 70, 48, 80) == pytest.approx((0.0524, 0.3339), abs=1e-4)
    assert difference_interval(9, 10, 3, 10) == pytest.approx((0.1705, 0.8090), abs=1e-4)
    low, high = difference_interval(0, 10, 0, 20)
    assert low < 0 < high
    out = flag_rate([True] * 30 + [False] * 70, 5, null_flags=[True] * 10 + [False] * 90)
    assert out["excess_low"] < out["excess"] < out["excess_high"]
    assert (out["excess_low"], out["excess_high"]) == difference_interval(30, 100, 10, 100)


def test_flag_rate_chance_uses_each_samples_own_number_of_variants():
    out = flag_rate([True, False, None, True], n_variants=[1, 3, 0, 9])
    assert (out["samples"], out["decided"], out["undecided"]) == (4, 3, 1)
    assert out["chance"] == pytest.approx((1 / 2 + 1 / 4 + 1 / 10) / 3)
    # P(at least 2 of 3 flagged) with p = (1/2, 1/4, 1/10), by enumeration
    p = (0.5, 0.25, 0.1)
    exact = sum(
        math.prod(pi if f else 1 - pi for pi, f in zip(p, flags, strict=True))
        for flags in np.ndindex(2, 2, 2)
        if sum(flags) >= 2
    )
    assert out["p_vs_chance"] == pytest.approx(exact)
    with pytest.raises(ValueError, match="variant counts"):
        flag_rate([True, False], n_variants=[1, 2, 3])


@pytest.mark.parametrize("shape", [(1,), (7,), (664,), (40, 66), (3, 200)])
@pytest.mark.parametrize("decimals", [None, 1, 0])
def test_average_ranks_are_scipys_rankdata_to_the_bit(shape, decimals):
    """The fast ranks behind every AUC (``metrics.average_ranks``) against the slow reference,
    ``scipy.stats.rankdata``, with ties (rounded scores) and without: the same floats."""
    from scipy.stats import rankdata

    from srlib.stats.metrics import average_ranks

    s = np.random.default_rng(len(shape) * 100 + shape[-1]).normal(size=shape)
    s = s if decimals is None else np.round(s, decimals)
    assert np.array_equal(average_ranks(s), rankdata(s, axis=-1))
    with_nan = s.copy()
    with_nan.flat[0] = np.nan
    np.testing.assert_array_equal(average_ranks(with_nan), rankdata(with_nan, axis=-1))


@pytest.mark.parametrize("size", [2, 7, 664, 1328])
@pytest.mark.parametrize("kind", ["untied", "tied", "infinite", "one class"])
def test_the_counted_auc_of_one_row_is_the_ranked_one_to_the_bit(size, kind):
    """One row's AUC is counted (``metrics._auc``: bisection in the sorted negatives), many
    rows' ranked (rank sum minus n₁(n₁ + 1)/2): the same float, ties, scores of -inf (a
    missing score, as the contrasts give it) and a row of one class (NaN) included."""
    from srlib.stats.metrics import _auc

    rng = np.random.default_rng(size)
    for _ in range(50):
        y = rng.random(size) < rng.uniform(0.1, 0.9) if kind != "one class" else np.ones(size, bool)
        s = rng.normal(size=size)
        if kind == "tied":
            s = np.round(s, 0)
        if kind == "infinite":
            s[rng.random(size) < 0.3] = -np.inf
        with np.errstate(invalid="ignore", divide="ignore"):
            counted, ranked = _auc(y, s), _auc(y[None], s[None])[0]
        assert counted == ranked or (np.isnan(counted) and np.isnan(ranked))
