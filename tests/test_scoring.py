"""Every scorer against a hand computation; deciders' tie and orientation rules; metrics."""

import math
import zlib

import numpy as np
import pytest
from conftest import program_sample
from sklearn.metrics import f1_score, matthews_corrcoef

from srlib.decide import (
    auc,
    calibrated_threshold,
    oracle_threshold,
    self_referential,
    threshold_decide,
)
from srlib.evaluation import bootstrap, evaluate, flag_rate, tpr_at_fpr
from srlib.models.base import GenerationSettings, TokenScores
from srlib.scoring import (
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
    "orig, variants, lower, leaked, p",
    [
        (1.0, [2.0, 3.0], True, True, 1 / 3),
        (2.0, [2.0, 3.0], True, False, 2 / 3),  # a tie is not leaked
        (3.0, [2.0, 1.0], True, False, 1.0),
        (0.9, [0.5, 0.9], False, False, 2 / 3),
        (0.9, [0.5, 0.1], False, True, 1 / 3),
    ],
)
def test_self_referential_orientation_and_ties(orig, variants, lower, leaked, p):
    v = self_referential(orig, variants, lower_is_leak=lower)
    assert v.leaked is leaked and v.p_value == pytest.approx(p)
    assert (v.margin > 0) is leaked


def test_self_referential_without_variants_is_undecided():
    v = self_referential(1.0, [], lower_is_leak=True)
    assert v.leaked is False and math.isnan(v.p_value)


def test_threshold_modes():
    scores, labels = [0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1]
    t, f1 = oracle_threshold(scores, labels)
    assert f1 == pytest.approx(f1_score(labels, np.array(scores) >= t))
    assert f1 == pytest.approx(0.8)
    clean = np.linspace(0, 1, 101)
    t = calibrated_threshold(clean, fpr=0.05)
    assert threshold_decide(clean, t).mean() <= 0.05
    assert auc(scores, labels) == pytest.approx(0.75)
    assert math.isnan(auc(scores, [1, 1, 1, 1]))


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
