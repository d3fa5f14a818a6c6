"""The pages the build writes: the appendix from papermill's metadata, the headline from
the cells tagged ``headline``, and the tables a page offers as CSV downloads."""

import json

import nbformat
import pandas as pd
import pytest

from srlib.book.appendix import write_appendix, write_headline
from srlib.book.digests import KEY, compare, load
from srlib.errors import InputError
from srlib.store import folder_digest, frame_digest, row


def executed(path, parameters, printed, tags=("headline",)):
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("print('x')", metadata={"tags": list(tags)})
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=printed)]
    nb.cells = [cell]
    nb.metadata["papermill"] = {
        "parameters": parameters,
        "duration": 90.0,
        "start_time": "2026-12-01T04:58:30.000000+00:00",
        "end_time": "2026-12-01T05:00:00.000000+00:00",
    }
    nbformat.write(nb, path)
    return path


def test_appendix_lists_machine_packages_and_each_chapter_as_run(tmp_path):
    (tmp_path / "book").mkdir()
    cache = tmp_path / ".srlib-cache"
    cache.mkdir()
    (cache / "scores.sqlite").write_bytes(b"x" * 2**20)
    made = [
        ("m/a", "models", 600, "2026-12-01T04:59:00Z"),
        ("m/b", "models", 300, "2026-12-01T04:59:30Z"),
        ("t/c", "tables", 60, "2026-12-01T04:59:50Z"),
        ("scores.sqlite", "model calls: generate", 120, "2026-12-01T04:59:59Z"),
        ("m/old", "models", 900, "2026-11-30T10:00:00Z"),  # an earlier build's, reused
        ("m/gone", "models", 900, "2026-12-01T04:59:00Z"),  # no longer in the cache
    ]
    with (cache / "costs.jsonl").open("a") as fh:
        for path, stage, cpu, finished in made:
            if path.startswith("m/") and path != "m/gone":
                (cache / path).mkdir(parents=True)
            line = {"made": path, "stage": stage, "cpu_s": cpu, "wall_s": cpu + 6}
            fh.write(json.dumps(line | {"part": "", "finished": finished}) + "\n")
        fh.write('{"made": "m/a", "stage": 3}\n{"made": "m/a", "cpu_')  # not ours, cut short
    (cache / "t/c").mkdir(parents=True)
    a = executed(tmp_path / "00-a.ipynb", {"limit": 5, "benchmarks": ["mbpp"]}, "hello")
    b = executed(tmp_path / "01-b.ipynb", {}, "", tags=())
    page = write_appendix(tmp_path, [a, b], cache).read_text()
    assert "| CPU cores |" in page and "| torch |" in page and "1.0 MiB" in page
    assert "| CPU bf16 units (bfloat16 training) |" in page and "| torch CPU kernels |" in page
    assert '| `benchmarks` | `["mbpp"]` |' in page and "in 1.5 min" in page
    assert "### 01-b" in page and "Its defaults" in page
    assert "not a git checkout" in page  # tmp_path is no repository
    assert "this build made took 18.0 CPU-minutes" in page
    assert "1 things made earlier (15.0 CPU-minutes when they were made) were reused" in page
    assert (
        "| training: base and reference models | 2 | 15.0 | 15.2 | 83% |\n"
        "| generation (black-box detectors) | 1 | 2.0 | 2.1 | 11% |\n"
        "| detection tables (beside their model calls) | 1 | 1.0 | 1.1 | 6% |"
    ) in page


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


def test_a_headline_cell_that_only_glues_its_answer_gives_the_answer(tmp_path):
    """A tagged cell that prints nothing and glues the chapter's answer (``glue_answer``, as
    chapter 07's does) gives that answer, its Markdown kept, naming its chapter."""
    from IPython.display import Markdown
    from myst_nb.ext.glue import GLUE_PREFIX

    (tmp_path / "book").mkdir()
    path = executed(tmp_path / "07-duplication-impact.ipynb", {}, "")
    nb = nbformat.read(path, as_version=4)
    bundle = {GLUE_PREFIX + "text/markdown": Markdown("A random split **overstates** F1.").data}
    nb.cells[0].outputs = [
        nbformat.v4.new_output(
            "display_data",
            data={**bundle, GLUE_PREFIX + "text/plain": "<Markdown>"},
            metadata={"scrapbook": {"name": "answer", "mime_prefix": GLUE_PREFIX}},
        )
    ]
    nbformat.write(nb, path)
    text = write_headline(tmp_path, [path]).read_text()
    assert text.startswith(
        "A random split **overstates** F1. (from {doc}`_executed/07-duplication-impact`)"
    )


def test_a_headline_figure_is_written_beside_the_sentences_with_its_alt_text(tmp_path):
    import base64

    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "headline-old-0.png").write_bytes(b"stale")
    path = executed(tmp_path / "04-detection.ipynb", {}, "Of 6 contrasts, 0 better.\n")
    nb = nbformat.read(path, as_version=4)
    png = base64.b64encode(b"\x89PNG fake").decode()
    figure = nbformat.v4.new_code_cell("fig = plot()", metadata={"tags": ["headline"]})
    figure.metadata["mystnb"] = {"image": {"alt": "A forest plot."}, "figure": {"caption": "C."}}
    figure.outputs = [nbformat.v4.new_output("display_data", data={"image/png": png})]
    nb.cells.insert(0, figure)  # drawn before the sentences are printed
    nbformat.write(nb, path)
    text = write_headline(tmp_path, [path]).read_text()
    assert text.index("Of 6 contrasts") < text.index("```{figure} headline-04-detection-0.png")
    assert ":alt: A forest plot." in text and "\nC.\n" in text
    assert (tmp_path / "book" / "headline-04-detection-0.png").read_bytes() == b"\x89PNG fake"
    assert not (tmp_path / "book" / "headline-old-0.png").exists()


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


def digest_chapter(path, rows, quick=False):
    """An executed chapter whose ``digests`` cell published ``rows`` (stamped as the runner
    stamps a quick or a full run)."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["srlib"] = {"quick": quick}
    cell = nbformat.v4.new_code_cell("publish(rows)", metadata={"tags": ["digests"]})
    out = nbformat.v4.new_output("display_data", data={"text/plain": "table"})
    out.metadata = {KEY: rows}
    cell.outputs = [out]
    nb.cells = [cell]
    nbformat.write(nb, path)
    return path


def test_digests_are_collected_in_pipeline_order_and_two_builds_compared(tmp_path):
    (tmp_path / "book").mkdir()
    later = [row("claims", "claim table", "c" * 64), row("model", "leak seed 1 epoch 1", "m" * 64)]
    first = [row("model", "base", "b" * 64), row("corpus", "training corpus", "a" * 64, "matches")]
    a = digest_chapter(tmp_path / "03-testbed.ipynb", first)
    b = digest_chapter(tmp_path / "04-detection.ipynb", later + [first[0]])  # base twice: once
    page = write_appendix(tmp_path, [a, b], tmp_path).read_text()
    mine = load(tmp_path)
    assert [(r["what"], r["name"]) for r in mine] == [
        ("corpus", "training corpus"),
        ("model", "base"),
        ("model", "leak seed 1 epoch 1"),
        ("claims", "claim table"),
    ]
    assert "| corpus | training corpus | `aaaaaaaaaaaaaaaa` | matches | 03-testbed |" in page
    assert "Not compared with the lock's records: this build lacks its rows of record." in page
    assert compare(mine, mine) == []
    other = [dict(r) for r in mine]
    other[2]["digest"], other[3]["digest"] = "x" * 64, "y" * 64
    parts = compare(mine, other[:3] + other[3:])
    assert parts[0].startswith("model leak seed 1 epoch 1: mmmmmmmmmmmmmmmm here, xxxx")
    assert parts[1].startswith("claims claim table")  # the first difference first
    assert compare(mine, other[:1])[0] == "model base: bbbbbbbbbbbbbbbb here, absent there"
    csv = tmp_path / "digests.csv"
    pd.DataFrame(mine).to_csv(csv, index=False)
    assert compare(mine, load(csv)) == []
    with pytest.raises(FileNotFoundError):
        load(tmp_path / "book" / "nowhere")  # the CLI reports it in one line
    (tmp_path / "book" / "nowhere").mkdir()
    with pytest.raises(InputError, match="no book/digests.json"):
        load(tmp_path / "book" / "nowhere")


def test_chapters_of_a_quick_and_a_full_run_are_not_checked_against_the_lock(tmp_path):
    (tmp_path / "book").mkdir()
    rows = [row("corpus", "training corpus", "a" * 64, "matches")]
    runs = [digest_chapter(tmp_path / f"{i}.ipynb", rows, quick=bool(i)) for i in (0, 1)]
    page = write_appendix(tmp_path, runs, tmp_path).read_text()
    assert "these chapters ran in quick and full builds" in page


def test_a_corpus_that_differs_from_the_lock_is_said_on_the_appendix(tmp_path):
    (tmp_path / "book").mkdir()
    rows = [row("corpus", "training corpus", "a" * 64, "differs (allowed)")]
    page = write_appendix(tmp_path, [digest_chapter(tmp_path / "x.ipynb", rows)], tmp_path)
    assert "differs from the lock's" in page.read_text()


def test_table_and_folder_digests_follow_content_only(tmp_path):
    frame = pd.DataFrame({"id": ["a", "b"], "score": [0.1, 1 / 3], "scores": [[1.0], [2.0]]})
    assert frame_digest(frame) == frame_digest(frame.copy())
    changed = frame.assign(score=[0.1, 1 / 3 + 1e-15])
    assert frame_digest(changed) != frame_digest(frame)  # full precision
    for name in ("one", "two"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "model.safetensors").write_bytes(b"weights")
        (tmp_path / name / "srlib-manifest.json").write_text(name)  # paths, not results
    assert folder_digest(tmp_path / "one") == folder_digest(tmp_path / "two")
    (tmp_path / "two" / "model.safetensors").write_bytes(b"other weights")
    assert folder_digest(tmp_path / "one") != folder_digest(tmp_path / "two")


def test_the_lock_keeps_a_builds_rows_of_record_and_says_where_another_parts(tmp_path):
    """``locked_rows`` picks the numerics, corpus, base, the main run's last checkpoint, its
    first score table and the claim table; recorded, the same rows check clean and a changed
    checkpoint is named first."""
    import shutil

    from srlib.book.digests import (
        NOT_RECORDED,
        check_locked,
        lock_verdict,
        locked_rows,
        record_locked,
    )
    from srlib.testbed.sources import lock_path

    lock = shutil.copy(lock_path(), tmp_path / "lock.json")
    rows = [
        {"what": "numerics", "name": "kernels", "digest": "portable AVX2"},
        {"what": "corpus", "name": "training corpus", "digest": "c0"},
        {"what": "model", "name": "reference", "digest": "r0"},
        {"what": "model", "name": "base", "digest": "b0"},
        {"what": "model", "name": "main seed 0 epoch 1", "digest": "m1"},
        {"what": "model", "name": "main seed 0 epoch 2", "digest": "m2"},
        {"what": "model", "name": "null seed 0 epoch 2", "digest": "n2"},
        {"what": "scores", "name": "main seed 0 epoch 1 n=2 gray (split seed 0)", "digest": "s1"},
        {"what": "scores", "name": "main seed 0 epoch 2 n=2 gray (split seed 0)", "digest": "s2"},
        {"what": "scores", "name": "main seed 0 epoch 2 n=3 gray (split seed 0)", "digest": "s3"},
        {"what": "claims", "name": "claim table", "digest": "k0"},
        {"what": "claims", "name": "plug-in claim table", "digest": "p0"},
    ]
    names = [r["name"] for r in locked_rows(rows)]
    assert names == [
        "kernels",
        "training corpus",
        "base",
        "main seed 0 epoch 2",
        "main seed 0 epoch 2 n=2 gray (split seed 0)",
        "claim table",
    ]
    assert check_locked(rows, "test", lock) == [NOT_RECORDED, "portable AVX2"]
    assert "holds no test build of this numerics class (`portable AVX2`)" in lock_verdict(
        rows, "test", lock
    )
    record_locked(rows, "test", lock)
    assert check_locked(rows, "test", lock) == []
    assert "match the lock's record of a test build" in lock_verdict(rows, "test", lock)
    moved = [r | {"digest": "zz"} if r["digest"] in ("m2", "k0") else r for r in rows]
    parted = check_locked(moved, "test", lock)
    assert parted[0].startswith("model main seed 0 epoch 2: zz here, m2 there") and len(parted) == 2
    said = lock_verdict(moved, "test", lock)
    assert "parts from the lock's record" in said and "(2 differences in all)" in said
    assert lock_verdict(rows[:3], "test", lock).startswith("Not compared")
    assert "quick and full builds" in lock_verdict(rows, None, lock)
    amd = [
        r | {"digest": "portable AVX2 AuthenticAMD"} if r["what"] == "numerics" else r
        for r in moved
    ]
    assert check_locked(amd, "test", lock)[0] == NOT_RECORDED  # another class: its own record
    assert record_locked(amd, "test", lock)[1] == []  # the same corpus: both records kept
    assert check_locked(rows, "test", lock) == [] and check_locked(amd, "test", lock) == []
    recorpused = [r | {"digest": "c1"} if r["what"] == "corpus" else r for r in amd]
    _, dropped = record_locked(recorpused, "test", lock)  # a new corpus: the other is stale
    assert dropped == ["portable AVX2"]
    assert check_locked(rows, "test", lock) == [NOT_RECORDED, "portable AVX2"]
    assert check_locked(recorpused, "test", lock) == []
    with pytest.raises(InputError, match="a whole build's rows of record"):
        record_locked(rows[:3], "test", lock)
