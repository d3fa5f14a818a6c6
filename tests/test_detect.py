"""detect() end to end: a model trained on one sample flags it, and only it."""

import numpy as np
import pytest

from srlib.benchmarks import load_benchmark
from srlib.detection.detect import detect
from srlib.stats.rates import flag_rate
from srlib.transforms import make_variants_many


def test_memorised_samples_are_flagged_in_both_settings(memorised):
    samples = load_benchmark("humaneval")[:6]
    variants = make_variants_many(samples, 4, progress=False)
    table = detect(memorised, samples, variants=variants, max_new_tokens=48, progress=False)
    leaked = table.id.isin(["HumanEval/2", "HumanEval/3"])
    assert table.loc[leaked, "sr_gray"].all()
    assert table.loc[leaked, "ngo"].min() > table.loc[~leaked, "ngo"].max()
    assert table.loc[leaked, "score_ppl"].min() > table.loc[~leaked, "score_ppl"].max()
    expected = {"ppl", "min_k", "min_k_pp", "zlib", "score_zlib", "score_ngo", "sr_black_p"}
    assert set(table.columns) >= expected
    summary = flag_rate(table.sr_gray, n_variants=4)
    assert summary["samples"] == 6


def test_bad_arguments(memorised):
    samples = load_benchmark("humaneval")[:2]
    with pytest.raises(ValueError, match="setting"):
        detect(memorised, samples, setting="white")
    with pytest.raises(ValueError, match="variant sets"):
        detect(memorised, samples, variants=[])


class DiesAfter:
    """A model that is killed after ``calls`` scoring calls (an interrupted run)."""

    def __init__(self, model, calls):
        self.model, self.calls, self.fingerprint = model, calls, model.fingerprint

    def token_logprobs(self, texts):
        if self.calls == 0:
            raise KeyboardInterrupt("killed")
        self.calls -= 1
        return self.model.token_logprobs(texts)

    def generate(self, prompts, settings):
        return self.model.generate(prompts, settings)


def test_a_killed_scoring_run_resumes_to_the_same_table(memorised, tmp_path):
    from srlib.models.cache import CachedModel

    samples = load_benchmark("humaneval")[:3]
    variants = make_variants_many(samples, 3, kinds=("function",), progress=False)
    kw = {"variants": variants, "setting": "gray", "progress": False}
    clean = detect(memorised, samples, **kw)
    cache = tmp_path / "scores.sqlite"
    with pytest.raises(KeyboardInterrupt):
        detect(CachedModel(DiesAfter(memorised, 1), cache, chunk=4, progress=False), samples, **kw)
    resumed_model = CachedModel(memorised, cache, chunk=4, progress=False)
    resumed = detect(resumed_model, samples, **kw)
    assert resumed_model.computed == 12 - 4
    assert resumed.sr_gray.tolist() == clean.sr_gray.tolist()
    numeric = clean.select_dtypes("number").columns
    np.testing.assert_allclose(resumed[numeric], clean[numeric], rtol=1e-4)


def test_a_sample_without_variants_is_undecided_not_negative(memorised):
    from srlib.transforms import Variants

    samples = load_benchmark("humaneval")[2:5]
    variants = make_variants_many(samples, 3, kinds=("function",), progress=False)
    variants[1] = Variants([], reasons=["no variants"])
    table = detect(memorised, samples, variants=variants, max_new_tokens=16, progress=False)
    assert table.sr_gray.isna().tolist() == [False, True, False]
    assert table.sr_black.isna().tolist() == [False, True, False]
    summary = flag_rate(table.sr_gray, table.n_variants)
    assert (summary["decided"], summary["undecided"]) == (2, 1)
    assert summary["chance"] == 0.25  # from the decided samples' own 3 variants


def test_a_scorer_bug_is_raised_not_turned_into_nan(memorised, monkeypatch):
    from srlib.detection import detect as detect_module
    from srlib.detection.scoring import NeedsFullDistribution

    samples = load_benchmark("humaneval")[2:3]
    variants = make_variants_many(samples, 2, kinds=("function",), progress=False)

    def needs(s, text):
        raise NeedsFullDistribution("no distribution")

    name = next(iter(detect_module.GRAY_SCORERS))
    monkeypatch.setitem(detect_module.GRAY_SCORERS, name, needs)
    table = detect(memorised, samples, variants=variants, setting="gray", progress=False)
    assert table[f"score_{name}"].isna().all()  # a backend without the distribution: NaN

    def broken(s, text):
        raise ValueError("a bug in the scorer")

    monkeypatch.setitem(detect_module.GRAY_SCORERS, name, broken)
    with pytest.raises(ValueError, match="a bug in the scorer"):
        detect(memorised, samples, variants=variants, setting="gray", progress=False)
