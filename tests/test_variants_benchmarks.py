"""The transformation module on whole benchmarks, every sample, n = 2 variants each. The
yield at larger n is measured where it is reported: the variants chapter (HumanEval and MBPP,
n = 5, or 10 with its parameter) and ``bench/variants.py``; n = 2 keeps the suite inside its
time budget."""

import random

import pytest
import wholebench

from srlib.benchmarks import load_benchmark
from srlib.execution.sandbox import run_programs
from srlib.transforms import make_variants_many

pytestmark = pytest.mark.slow


def test_every_humaneval_rename_variant_is_byte_exact(background_job):
    result = background_job("humaneval_rename_problems")  # wholebench.rename_problems(...)
    assert result["problems"] == {}
    assert result["samples"] == 164 and result["checked"] >= 1.8 * 164


def test_every_mbpp_rename_variant_is_byte_exact(background_job):
    result = background_job("mbpp_rename_problems")  # wholebench.rename_problems("mbpp")
    assert result["problems"] == {}
    assert result["samples"] == 974 and result["checked"] >= 1.8 * 974


def test_humaneval_all_kinds_yield_and_every_kept_variant_passes():
    samples = load_benchmark("humaneval")
    sets = make_variants_many(samples, 2, progress=False)
    full = sum(len(vs) == 2 for vs in sets)
    assert full >= 0.95 * len(samples)
    assert all(vs.reasons for vs in sets if len(vs) < 2)
    kept = [v for vs in sets for v in vs]
    assert all(v.entry_point in wholebench.defined_functions(v.code) for v in kept)
    again = random.Random(0).sample(kept, 80)
    assert all(r.passed for r in run_programs([v.program() for v in again], progress=False))
    assert sum("test" in v.kinds for v in kept) >= 0.9 * len(kept)
