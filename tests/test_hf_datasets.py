"""Any Hugging Face dataset as a benchmark (``hf:SOURCE``, through ``datasets``): a local folder
in HumanEval's or MBPP's format loads, runs through ``srlib variants`` and ``srlib audit``, and
its variants export as a dataset that ``datasets.load_dataset`` reads back; a cached dataset id
is found offline; bad inputs are errors that name what is wrong."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from test_benchmarks import hub_cache

from srlib.benchmarks import BenchmarkNotFound, load_benchmark
from srlib.benchmarks.hf import NoSuchSplit
from srlib.cli import main
from srlib.errors import InputError
from srlib.execution.sandbox import run_programs
from srlib.transforms.export import DATASET_FILE

ROOT = Path(__file__).resolve().parent.parent


def humaneval_rows(k: int) -> list[dict]:
    return [
        {"task_id": s.id, "prompt": s.prompt, "canonical_solution": s.solution,
         "test": s.tests, "entry_point": s.entry_point}
        for s in load_benchmark("humaneval")[:k]
    ]  # fmt: skip


@pytest.fixture
def local_folder(tmp_path):
    """A local dataset folder in HumanEval's format: one parquet file of the test split."""
    folder = tmp_path / "myeval"
    folder.mkdir()
    pd.DataFrame(humaneval_rows(3)).to_parquet(folder / "test.parquet")
    return folder


def test_a_local_folder_loads_as_the_same_samples_and_they_pass(local_folder):
    samples = load_benchmark(f"hf:{local_folder}")
    reference = load_benchmark("humaneval")[:3]
    assert [s.benchmark for s in samples] == ["myeval"] * 3
    for got, want in zip(samples, reference, strict=True):
        assert (got.id, got.prompt, got.solution, got.tests, got.runner) == (
            want.id, want.prompt, want.solution, want.tests, want.runner)  # fmt: skip
    assert all(r.passed for r in run_programs([s.program() for s in samples], progress=False))


def test_mbpp_columns_by_name_a_mapping_and_a_split_in_the_spec(tmp_path):
    lines = (ROOT / "data" / "mbpp" / "mbpp.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines[10:12]]
    folder = tmp_path / "tasks"
    folder.mkdir()
    renamed = [{"task_id": r["task_id"], "description": r["text"], "code": r["code"],
                "test_list": r["test_list"]} for r in records]  # fmt: skip
    (folder / "validation.jsonl").write_text("".join(json.dumps(r) + "\n" for r in renamed))
    (folder / "train.jsonl").write_text(json.dumps(renamed[0]) + "\n")
    with pytest.raises(InputError, match=r"lacks \['text'\]"):
        load_benchmark(f"hf:{folder}:validation")
    samples = load_benchmark(f"hf:{folder}:validation", columns={"text": "description"})
    mbpp = {s.id.split("/")[1]: s for s in load_benchmark("mbpp")}
    assert [s.id for s in samples] == [f"tasks/{r['task_id']}" for r in records]
    assert samples[0].prompt == mbpp[str(records[0]["task_id"])].prompt
    with pytest.raises(NoSuchSplit, match=r"splits \["):
        load_benchmark(f"hf:{folder}")  # two splits, none named test


def test_bad_sources_and_columns_name_what_is_wrong(local_folder, tmp_path):
    with pytest.raises(InputError, match=r"no column\(s\) \['question'\]"):
        load_benchmark(f"hf:{local_folder}", columns={"prompt": "question"})
    with pytest.raises(NoSuchSplit, match="no split 'train'"):
        load_benchmark(f"hf:{local_folder}:train")
    with pytest.raises(BenchmarkNotFound, match="does not exist"):
        load_benchmark(f"hf:{tmp_path / 'nowhere'}")
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(InputError, match="not a dataset file"):
        load_benchmark(f"hf:{tmp_path / 'notes.txt'}")


def test_a_cached_dataset_id_is_read_offline(tmp_path, monkeypatch):
    with pytest.raises(BenchmarkNotFound, match="huggingface-cli download someone/evals"):
        hub_cache(tmp_path / "empty", "other/x", monkeypatch)
        load_benchmark("hf:someone/evals")
    snap = hub_cache(tmp_path, "someone/evals", monkeypatch)
    (snap / "data").mkdir(parents=True)
    pd.DataFrame(humaneval_rows(2)).to_parquet(snap / "data" / "test-00000-of-00001.parquet")
    samples = load_benchmark("hf:someone/evals", split="test")
    assert [s.benchmark for s in samples] == ["evals", "evals"]


def test_variants_and_audit_of_a_local_folder_and_the_export_read_back(
    local_folder, tiny_model_dir, tmp_path, capsys
):
    import datasets

    out = tmp_path / "variants"
    assert main(["variants", f"hf:{local_folder}", "--n", "2", "--format", "dataset",
                 "--out", str(out)]) == 0  # fmt: skip
    assert (out / DATASET_FILE).is_file()
    exported = datasets.load_dataset(str(out))["test"]
    assert {"task_id", "prompt", "canonical_solution", "test", "entry_point", "original_id",
            "kinds", "renames", "replaced_tests"} <= set(exported.column_names)  # fmt: skip
    originals = {s.id for s in load_benchmark(f"hf:{local_folder}")}
    assert set(exported["original_id"]) <= originals and len(exported) >= 3
    assert all(isinstance(json.loads(r), list) for r in exported["renames"])
    back = load_benchmark(f"hf:{out}")
    assert all(r.passed for r in run_programs([s.program() for s in back], progress=False))
    capsys.readouterr()
    code = main(["audit", "--model", str(tiny_model_dir), "--benchmark", f"hf:{local_folder}",
                 "--n", "1", "--setting", "gray", "--out", str(tmp_path / "audit")])  # fmt: skip
    assert code == 0, capsys.readouterr()
    summary = pd.read_csv(tmp_path / "audit" / "summary.csv")
    assert summary.samples.iloc[0] == 3


def test_a_single_file_is_one_split_named_as_asked_and_its_name_is_its_stem(tmp_path):
    """A file called mbpp.jsonl is not the vendored MBPP: no conventional split is read into
    its text task ids; its one split answers to the name asked for; a split given twice must
    agree."""
    lines = (ROOT / "data" / "mbpp" / "mbpp.jsonl").read_text().splitlines()[10:12]
    file = tmp_path / "mbpp.jsonl"
    file.write_text("".join(json.dumps({**json.loads(r), "task_id": f"a{k}"}) + "\n"
                            for k, r in enumerate(lines)))  # fmt: skip
    samples = load_benchmark(f"hf:{file}:validation")
    assert [s.id for s in samples] == ["mbpp/a0", "mbpp/a1"]
    assert "split" not in samples[0].metadata
    assert [s.benchmark for s in load_benchmark(f"hf:{file}", benchmark="mine")] == ["mine"] * 2
    with pytest.raises(InputError, match="names split 'validation'"):
        load_benchmark(f"hf:{file}:validation", split="test")
