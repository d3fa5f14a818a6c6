"""CredData: the vendored contexts and CredData's own layout (a made-up checkout in
tests/data/creddata-native), every row left out counted by reason."""

from pathlib import Path

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
