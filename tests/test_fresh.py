"""The fresh benchmark: loadable by name, at least 120 problems, each passing its own tests in
the sandbox, a canary on every record, its text unreadable without the password, and a changed
archive refused."""

import json
import shutil
import zipfile

import pytest

from srlib.benchmarks import fresh, load_benchmark
from srlib.benchmarks.check import check_samples
from srlib.errors import InputError


def test_the_fresh_problems_load_by_name_carry_the_canary_and_pass_their_tests():
    card = fresh.card()
    problems = load_benchmark("fresh")
    assert len(problems) == card["problems"] >= 120
    assert len({p.id for p in problems}) == len(problems)
    assert {p.metadata["canary"] for p in problems} == {card["canary"]}
    assert all(p.format == "completion" and "def check(candidate)" in p.tests for p in problems)
    checked = check_samples(problems, progress=False)
    assert checked.passed.all(), checked[~checked.passed].head()


def test_the_archive_needs_its_password_and_a_changed_archive_is_refused(tmp_path):
    archive = fresh.card_path().parent / fresh.card()["archive"]
    with zipfile.ZipFile(archive) as zf, pytest.raises(RuntimeError, match="password"):
        zf.read(fresh.card()["member"])
    records = fresh.records()
    records[0]["prompt"] += "# changed\n"
    body = "".join(json.dumps(r) + "\n" for r in records)
    plain = tmp_path / "plain.zip"
    with zipfile.ZipFile(plain, "w") as zf:
        zf.writestr(fresh.card()["member"], body)
    with pytest.raises(InputError, match="is not encrypted"):
        fresh.load_fresh(str(plain))
    (tmp_path / "changed.jsonl").write_text(body)
    card = fresh.card_path().read_text()
    fresh.pack(tmp_path / "changed.jsonl", tmp_path / "changed.zip")
    assert fresh.card_path().read_text() == card  # another archive leaves the card as it was
    with pytest.raises(InputError, match="is not the card's"):
        fresh.load_fresh(str(tmp_path / "changed.zip"))
    shutil.copy(archive, tmp_path / "same.zip")
    assert len(fresh.load_fresh(str(tmp_path / "same.zip"))) == fresh.card()["problems"]


def test_no_fresh_problem_is_in_the_repository_as_plain_text():
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    names = [p.entry_point for p in load_benchmark("fresh")]
    tracked = [p for folder in ("srlib", "tests", "notebooks", "book", "docs", "data")
               for p in (root / folder).rglob("*") if p.is_file() and p.suffix in
               (".py", ".md", ".ipynb", ".json", ".jsonl", ".txt", ".yml")]  # fmt: skip
    text = "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in tracked
                     if "_executed" not in p.parts and "_build" not in p.parts)  # fmt: skip
    found = [n for n in names if f"def {n}(" in text]
    assert found == []
