"""τt: which test forms are found, and that expected values come from the original solution."""

import copy
import dataclasses
import random

from conftest import program_sample

from srlib.benchmarks import load_benchmark
from srlib.execution.sandbox import run_program
from srlib.samples import Sample
from srlib.transforms import testcases as tc
from srlib.transforms.edits import apply_edits

PROMPT = '''def scale(xs, k):
    """Multiply each element by k.
    >>> scale([1, 2], 3)
    [3, 6]
    For example: scale([0.5], 2) == [1.0]
    scale([], 7) ➞ []
    """
'''
TESTS = """import math

def check(candidate):
    assert candidate([1, 2, 3], 2) == [2, 4, 6]
    assert abs(candidate([1.5], 2)[0] - 3.0) < 1e-6
    assert math.isclose(candidate([2.0], 0.5)[0], 1.0)
    assert set(candidate([1, 2], 1)) == {1, 2}
    assert candidate([1], 1)
    assert not candidate([], 1)
    assert candidate(xs, 1) == xs
    assert True

xs = [4]
check(scale)
"""


def toy():
    return Sample(
        id="toy/1",
        benchmark="toy",
        prompt=PROMPT,
        solution="    return [x * k for x in xs]\n",
        tests=TESTS,
        entry_point="scale",
    )


def evaluated(sample, attempts=4):
    plan = tc.plan_tests(sample)
    jobs = tc.mutations(sample, plan, attempts, seed=0)
    res = run_program(tc.evaluation_program(sample, plan, jobs), timeout=30)
    return tc.read_evaluations(plan, jobs, res.stdout)


def test_finds_every_supported_form_and_skips_the_rest():
    plan = tc.plan_tests(toy())
    hidden = [c for c in plan.cases if c.field == "tests"]
    prompt = [c for c in plan.cases if c.field == "prompt"]
    assert [c.mode for c in hidden] == ["value", "value", "value", "value", "truthy", "falsy"]
    assert [c.template for c in hidden][3] == f"set({tc.CALL_SLOT})"
    assert len(prompt) == 3
    texts = [PROMPT[c.expected_span[0] : c.expected_span[1]] for c in prompt]
    assert texts == ["[3, 6]", "[1.0]", "[]"]


def test_expected_values_come_from_the_original_solution():
    sample = toy()
    plan = evaluated(sample)
    for case in plan.cases:
        for args, text in tc.valid_candidates(case):
            if case.mode == "value" and case.template == tc.CALL_SLOT and case.field == "prompt":
                xs, k = args
                assert eval(text) == [x * k for x in xs]
    rng = random.Random(0)
    edits = []
    for case in plan.cases:
        valid = tc.valid_candidates(case)
        if valid:
            edits += tc.case_edits(case, rng.choice(valid))
    variant = dataclasses.replace(sample, **apply_edits(sample, edits))
    assert variant.tests != sample.tests and variant.prompt != sample.prompt
    assert run_program(variant.program()).passed
    assert "assert candidate(xs, 1) == xs" in variant.tests  # non-literal case untouched
    assert variant.tests.count("\n") == sample.tests.count("\n")


def test_inputs_that_raise_are_dropped():
    sample = program_sample(
        "def inv(x):\n    if x != 4:\n        raise ValueError\n    return 1 / x\n",
        "assert inv(4) == 0.25\n",
        "inv",
    )
    plan = evaluated(sample, attempts=6)
    assert plan.cases and plan.cases[0].candidates
    assert tc.valid_candidates(plan.cases[0]) == []


def test_a_case_is_judged_by_its_cpu_time_not_by_the_clock():
    """Each mutated case gets ``CASE_CPU_SECONDS`` of CPU: one that waits longer on the clock
    keeps its value (a wall-clock limit of a second would drop it, and a busy machine would
    drop cases a quiet one keeps); one that spins forever is dropped."""
    waits = program_sample(
        "def late(x):\n    import time\n    time.sleep(1.2)\n    return x\n",
        "assert late(3) == 3\n",
        "late",
    )
    assert tc.valid_candidates(evaluated(waits, attempts=2).cases[0])
    spins = program_sample(
        "def spin(x):\n    while x != 4:\n        pass\n    return x\n",
        "assert spin(4) == 4\n",
        "spin",
    )
    case = evaluated(spins, attempts=2).cases[0]
    assert case.candidates and tc.valid_candidates(case) == []


def test_mbpp_prompt_asserts_mirror_the_hidden_tests():
    sample = load_benchmark("mbpp", split="prompt")[1]
    plan = evaluated(sample)
    hidden = [c for c in plan.cases if c.field == "tests"]
    mirrors = [c for c in plan.cases if c.mirror]
    assert len(hidden) == len(mirrors) == 3
    edits = []
    for case in hidden:
        choice = tc.valid_candidates(case)[0]
        edits += tc.case_edits(case, choice)
        twin = mirrors[hidden.index(case)]
        edits += tc.case_edits(twin, choice)
    variant = dataclasses.replace(sample, **apply_edits(sample, edits))
    for line in variant.tests.strip().splitlines():
        assert line in variant.prompt
    assert run_program(variant.program()).passed


def test_samples_without_transformable_tests_say_why():
    sample = program_sample("def f():\n    return 1\n", "import random\nassert f() == 1\n")
    plan = tc.plan_tests(sample)
    assert plan.cases == ()
    assert "asserts" in plan.reason
    stdio = dataclasses.replace(sample, format="stdio", tests="[]")
    assert "stdin" in tc.plan_tests(stdio).reason


def test_evaluation_reads_the_plan_without_changing_it():
    sample = load_benchmark("mbpp", split="prompt")[1]
    plan = tc.plan_tests(sample)
    before = copy.deepcopy(plan)
    jobs = tc.mutations(sample, plan, 4, seed=0)
    tc.evaluation_program(sample, plan, jobs)
    filled = tc.read_evaluations(
        plan, jobs, run_program(tc.evaluation_program(sample, plan, jobs)).stdout
    )
    assert plan == before and all(not c.candidates for c in plan.cases)
    mirrors = [c for c in filled.cases if c.mirror]
    assert mirrors and all(c.candidates == filled.cases[c.mirror_of].candidates for c in mirrors)


def test_copied_cases_give_identical_variants(monkeypatch):
    from srlib.transforms import make_variants

    sample = load_benchmark("mbpp", split="prompt")[1]
    expected = make_variants(sample, 3, kinds=("test",), validate=False, progress=False)
    real = tc.plan_tests

    def copied(s):
        plan = real(s)
        return tc.TestPlan(tuple(copy.deepcopy(c) for c in plan.cases), plan.reason)

    monkeypatch.setattr(tc, "plan_tests", copied)
    again = make_variants(sample, 3, kinds=("test",), validate=False, progress=False)
    assert [v.to_dict() for v in again] == [v.to_dict() for v in expected]
    for v in again:  # the prompt quotes the changed asserts, as in the original
        assert all(line in v.prompt for line in v.tests.strip().splitlines())
