"""CredData: the vendored contexts and CredData's own layout (a made-up checkout in
tests/data/creddata-native), every row left out counted by reason."""

from pathlib import Path

import pandas as pd
import pytest

from srlib.duplication.data.creddata import load_contexts, load_creddata
from srlib.errors import InputError

NATIVE = Path(__file__).with_name("data") / "creddata-native"


def test_the_native_layout_loads_decided_single_line_candidates_and_counts_the_rest():
    reasons = ("1 undecided", "1 no single-line value span", "1 file not there")
    pattern = "".join(f"(?=.*{r})" for r in (*reasons, "1 line or span outside the file"))
    with pytest.warns(UserWarning, match=pattern):
        records = load_creddata(NATIVE, window=30)
    by_id = {r.id: r for r in records}
    assert sorted(by_id) == ["0a1b2c3d:1", "0a1b2c3d:2", "0a1b2c3d:4"]
    token, password, yaml = by_id["0a1b2c3d:1"], by_id["0a1b2c3d:2"], by_id["0a1b2c3d:4"]
    assert token.secret.startswith("ghp_") and len(token.secret) == 40 and token.label
    assert password.secret == "changeme" and not password.label
    assert yaml.secret == "Xk29fLq83mZp" and yaml.label
    assert (token.language, yaml.language) == ("python", "yaml")
    assert token.repo == "example-repo" and token.category == "Token"
    assert token.text.index(token.secret) == token.start and len(token.text) <= 40 + 2 * 30
    assert token.context(30).before.endswith('API_TOKEN = "')


def test_a_meta_file_of_another_schema_is_refused_naming_it(tmp_path):
    (tmp_path / "meta").mkdir()
    (tmp_path / "meta" / "x.csv").write_text("Id,Path\n1,a\n")
    with pytest.raises(InputError, match=r"x\.csv: not CredData's meta schema"):
        load_creddata(tmp_path)
    with pytest.raises(FileNotFoundError, match="meta"):
        load_creddata(tmp_path / "nothing")


def test_the_vendored_contexts_are_what_their_provenance_says():
    records = load_contexts()
    assert len(records) == 6087 and sum(r.label for r in records) == 3717
    assert len({r.repo for r in records}) == 38
    assert all(0 <= r.start < r.end <= len(r.text) for r in records)
    languages = {r.language for r in records}
    assert {"javascript", "c#", "python", "java", "ruby"} <= languages
    assert not languages & {"js", "cs", "rb", "py"}  # extensions in the project's names


def test_bare_cr_ends_a_line_as_creddata_counts_them_and_the_source_name_reaches_it(tmp_path):
    from srlib.duplication.data.sources import load_source

    (tmp_path / "meta").mkdir()
    (tmp_path / "data" / "r1").mkdir(parents=True)
    page = '<p>\r<a>\r\nkey = "Zq81LmX0pW"\rend\n'  # CR, CRLF, CR: the value is on line 3
    (tmp_path / "data" / "r1" / "f1.html").write_bytes(page.encode())
    (tmp_path / "meta" / "r1.csv").write_text(
        "Id,FileID,RepoName,FilePath,LineStart,LineEnd,GroundTruth,ValueStart,ValueEnd,Category\n"
        "1,f1,o/r,data/r1/f1.html,3,3,T,7,17,Key\n"
    )
    (record,) = load_source(tmp_path, "creddata")
    assert record.secret == "Zq81LmX0pW" and record.text == page  # the file's own line ends
    assert (record.repo, record.file) == ("o/r", "f1")
    with pytest.raises(InputError, match="not a CredData checkout"):
        load_source(tmp_path / "data", "creddata")


def _native_checkout(root: Path, records: list) -> None:
    """``records`` written back in CredData's own layout: one file per record, one meta row."""
    from srlib.codetext import line_starts

    (root / "meta").mkdir(parents=True)
    rows = ["Id,FileID,RepoName,FilePath,LineStart,LineEnd,GroundTruth,ValueStart,ValueEnd"]
    for k, r in enumerate(records):
        starts = line_starts(r.text)
        line = max(i for i, s in enumerate(starts) if s <= r.start)
        path = Path("data") / "r1" / "src" / f"f{k}.txt"
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(r.text.encode())
        column = r.start - starts[line]
        label = "T" if r.label else "F"
        rows.append(
            f"{k},f{k},{r.repo},{path},{line + 1},{line + 1},{label},{column},"
            f"{column + r.end - r.start}"
        )
    (root / "meta" / "r1.csv").write_text("\n".join(rows) + "\n")


def test_a_native_checkout_gets_the_repository_table_from_the_command_line(tmp_path, capsys):
    from srlib.cli import main
    from srlib.duplication.data.secretdata import sample

    records = sample(load_contexts(), 400, seed=2)
    _native_checkout(tmp_path / "CredData", records)
    args = ["dedup", "evaluate", str(tmp_path / "CredData"), "--format", "creddata"]
    args += ["--scenarios", "mixed", "repository", "--profile", "quick", "--boot", "200"]
    args += ["--models", "flag everything", "shape rule", "context only", "--out"]
    assert main([*args, str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    first = out[out.index("repository\n") - 200 :]
    assert "shape rule" in first and "net drop mixed → repository" in out
    assert "+0.00 [+0.00, +0.00]" in out  # the rule's net drop: it learns nothing
    steps = pd.read_csv(tmp_path / "out" / "steps.csv")
    assert set(steps.step) == {"mixed → repository"}
    assert set(steps.model) == {"flag everything", "shape rule", "context only"}


def test_a_checkout_without_its_source_files_says_to_run_the_download_script(tmp_path):
    from srlib.duplication.data.creddata import load_creddata
    from srlib.duplication.data.secretdata import sample

    root = tmp_path / "CredData"
    _native_checkout(root, sample(load_contexts(), 20, seed=1))
    for file in (root / "data").rglob("*"):
        if file.is_file():
            file.unlink()  # meta/ only: the files were never downloaded
    with pytest.raises(InputError, match=r"all \d+ decided candidates are missing.*download"):
        load_creddata(root)
