"""The pages the build writes: the appendix from papermill's metadata, the headline from
the cells tagged ``headline``, and the tables a page offers as CSV downloads."""

import nbformat
import pytest

from srlib.book.appendix import write_appendix, write_headline


def executed(path, parameters, printed, tags=("headline",)):
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("print('x')", metadata={"tags": list(tags)})
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=printed)]
    nb.cells = [cell]
    nb.metadata["papermill"] = {
        "parameters": parameters,
        "duration": 90.0,
        "end_time": "2026-12-01T05:00:00.000000+00:00",
    }
    nbformat.write(nb, path)
    return path


def test_appendix_lists_machine_packages_and_each_chapter_as_run(tmp_path):
    (tmp_path / "book").mkdir()
    cache = tmp_path / ".srlib-cache"
    cache.mkdir()
    (cache / "scores.sqlite").write_bytes(b"x" * 2**20)
    a = executed(tmp_path / "00-a.ipynb", {"limit": 5, "benchmarks": ["mbpp"]}, "hello")
    b = executed(tmp_path / "01-b.ipynb", {}, "", tags=())
    page = write_appendix(tmp_path, [a, b], cache).read_text()
    assert "| CPU cores |" in page and "| torch |" in page and "1.0 MiB" in page
    assert '| `benchmarks` | `["mbpp"]` |' in page and "in 1.5 min" in page
    assert "### 01-b" in page and "Its defaults" in page
    assert "not a git checkout" in page  # tmp_path is no repository


def test_headline_is_what_the_tagged_cells_printed(tmp_path):
    (tmp_path / "book").mkdir()
    printed = "Of 2 contrasts, 1 better.\nSR gray − Min-K% = +0.10 MCC [+0.01, +0.2]: better.\n"
    a = executed(tmp_path / "04-detection.ipynb", {}, printed + "n_gram *acc*\n")
    b = executed(tmp_path / "05-other.ipynb", {}, "not this", tags=())
    text = write_headline(tmp_path, [a, b]).read_text()
    assert text.startswith("Of 2 contrasts, 1 better. (from {doc}`_executed/04-detection`)\n")
    assert "\n- SR gray − Min-K% = +0.10 MCC \\[+0.01, +0.2\\]: better.\n" in text
    assert "- n\\_gram \\*acc\\*" in text and "not this" not in text and "```" not in text
    assert "computes it" in write_headline(tmp_path, [b]).read_text()


def test_a_table_downloads_whole_from_its_link_and_a_bad_name_or_size_is_refused(monkeypatch):
    import base64
    import io
    import re

    import pandas as pd

    from srlib.book import download

    table = pd.DataFrame({"detector": ["SR gray", "PPL, calibrated"], "mcc": [0.25, -0.1]})
    link = download.csv_link(table, "claims", index=False)
    assert 'download="claims.csv"' in link and "(2 rows)" in link
    payload = re.search(r"base64,([^\"]+)", link).group(1)
    back = pd.read_csv(io.StringIO(base64.b64decode(payload).decode("utf-8")))
    pd.testing.assert_frame_equal(back, table)
    with pytest.raises(ValueError, match="download name 'a b'"):
        download.csv_link(table, "a b")
    monkeypatch.setattr(download, "LIMIT", 10)
    with pytest.raises(ValueError, match="table 'claims' is .* bytes as CSV, over 10"):
        download.csv_link(table, "claims")
