"""The duplication chapters' data by one name, the study's subsets of it, the papers'
published numbers beside ours, and every trained model read against the shape rule."""

import pandas as pd
import pytest

from srlib.duplication.data import secretdata
from srlib.duplication.data.secretdata import SecretRecord
from srlib.duplication.data.sources import load_source
from srlib.duplication.impact import published
from srlib.duplication.impact.features import dataset
from srlib.errors import InputError


def _record(i: int, language: str, label: bool = True) -> SecretRecord:
    text = f'KEY_{i} = "AKIAQ3EGV{i:05d}XYZW"\n'
    return SecretRecord(f"r{i}", text, 9, 27, label, language, "Key", f"repo{i % 3}")


def test_each_source_name_loads_its_records_and_a_bad_one_is_one_clear_error(tmp_path):
    cred = load_source("creddata")
    assert len(cred) == 6087 and len({r.repo for r in cred}) == 38
    generated = load_source("offline", size=120, scanned_files=4, seed=1)
    assert len(generated) == 120
    path = tmp_path / "records.jsonl"
    path.write_text(
        '{"id": "a", "text": "x = \\"abcdefgh\\"", "start": 5, "end": 13, "label": "Y", '
        '"language": "js", "repo": "r"}\n'
    )
    (only,) = load_source(path)
    assert only.secret == "abcdefgh" and only.language == "javascript" and only.repo == "r"
    with pytest.raises(InputError, match="no record file .*missing.jsonl.*creddata, offline"):
        load_source(tmp_path / "missing.jsonl")
    with pytest.raises(InputError, match="--files-root"):
        load_source(tmp_path / "secretbench.csv", "secretbench")
    with pytest.raises(InputError, match="unknown source format 'csv'"):
        load_source(path, "csv")


def test_samples_are_seeded_in_order_and_language_subsets_read_either_spelling():
    records = [_record(i, lang) for i, lang in enumerate(["js", "cs", "cpp", "go", "python"] * 4)]
    picked = secretdata.sample(records, 7, seed=3)
    assert len(picked) == 7 and picked == secretdata.sample(records, 7, seed=3)
    assert [records.index(r) for r in picked] == sorted(records.index(r) for r in picked)
    assert picked != secretdata.sample(records, 7, seed=4)
    assert secretdata.sample(records, None) == records == secretdata.sample(records, 99)
    with pytest.raises(ValueError, match="a sample of 0 records"):
        secretdata.sample(records, 0)
    seven = ["javascript", "c#", "c++", "java"]  # this project's names for js, cs, cpp
    assert {r.language for r in secretdata.in_languages(records, seven)} == {"js", "cs", "cpp"}
    assert len(secretdata.in_languages(records, ["cs"])) == 4  # SecretBench's spelling too


def test_the_partition_sits_beside_secretbench_and_the_references_are_read_per_dataset():
    table = pd.DataFrame(
        {"share": [0.7, 0.1, 0.2, 0.05, 0.35, 1.0]},
        index=["C_unique", "C_exact", "C_near", "R_exact", "C_dedup", "total"],
    )
    beside = published.beside_secretbench(table, "CredData")
    assert list(beside.index) == ["C_unique", "C_exact", "C_near"]
    assert beside.SecretBench.round(3).tolist() == [0.22, 0.693, 0.087]
    assert beside.CredData.tolist() == [0.7, 0.1, 0.2]
    keys = [_record(i, "python", label=True) for i in range(6)]
    words = [SecretRecord(f"w{i}", 'P = "changeme"\n', 5, 13, False, "python") for i in range(4)]
    refs = published.references_table({"toy": dataset(keys + words)})
    rule, everything = refs.loc[("toy", "shape rule")], refs.loc[("toy", "flag everything")]
    assert rule.mcc == 1.0 and rule["true share"] == 0.6 and rule.candidates == 10
    assert everything.recall == 1.0 and everything.mcc == 0.0
