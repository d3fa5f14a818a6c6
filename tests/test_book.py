"""The book runner: runs file, staleness stamps, failures, and the real book built quick."""

from pathlib import Path

import nbformat
import pytest
import quickbook

from srlib.book import runner as book

ROOT = Path(__file__).resolve().parent.parent


def notebook(path, *sources, params="x = 1"):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(params, metadata={"tags": ["parameters"]})]
    nb.cells += [nbformat.v4.new_code_cell(s) for s in sources]
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)


def last_output(path):
    return nbformat.read(path, as_version=4).cells[-1].outputs[0].text


def test_runs_file_errors_name_the_entry(tmp_path):
    runs = tmp_path / "runs.yml"
    runs.write_text("- parameters: {}\n")
    with pytest.raises(ValueError, match="run 1 needs a 'notebook' key"):
        book.read_runs(runs)
    runs.write_text("- notebook: notebooks/none.ipynb\n")
    with pytest.raises(FileNotFoundError, match="none.ipynb does not exist"):
        book.read_runs(runs)
    notebook(tmp_path / "notebooks" / "a.ipynb")
    runs.write_text("- notebook: notebooks/a.ipynb\n  quick: {x: 2}\n  extra: 1\n")
    with pytest.raises(ValueError, match="unknown key"):
        book.read_runs(runs)


def test_the_testbed_block_is_injected_into_its_chapters_and_undeclared_names_fail(tmp_path):
    for name in ("a", "b", "c"):
        notebook(
            tmp_path / "notebooks" / f"{name}.ipynb", params="x = 1\nprofile = 'cpu'\nquick = False"
        )
    runs = tmp_path / "runs.yml"
    shared = (
        "testbed:\n  chapters: [a, b]\n  parameters: {profile: cpu}\n  quick: {profile: quick}\n"
    )
    runs.write_text(
        shared + "chapters:\n- notebook: notebooks/a.ipynb\n- notebook: notebooks/b.ipynb\n"
        "  quick: {quick: true, x: 2}\n- notebook: notebooks/c.ipynb\n"
    )
    a, b, c = book.read_runs(runs)
    assert a.params(False) == b.params(False) == {"profile": "cpu"}
    assert a.params(True) == {"profile": "quick"} and b.params(True)["x"] == 2
    assert c.params(False) == {}
    runs.write_text(
        shared + "chapters:\n- notebook: notebooks/a.ipynb\n  parameters: {profile: gpu}\n"
    )
    with pytest.raises(ValueError, match=r"a.ipynb sets the testbed's \['profile'\] itself"):
        book.read_runs(runs)
    runs.write_text("- notebook: notebooks/c.ipynb\n  parameters: {base_model: m}\n")
    with pytest.raises(ValueError, match=r"c.ipynb declares no parameter \['base_model'\]"):
        book.read_runs(runs)


def test_execute_stamps_skips_current_and_reruns_stale(tmp_path):
    notebook(tmp_path / "notebooks" / "a.ipynb", "print(x * 10)")
    (tmp_path / "runs.yml").write_text("- notebook: notebooks/a.ipynb\n  quick: {x: 2}\n")
    (out,) = book.execute(tmp_path, quick=True)
    assert last_output(out) == "20\n"
    mtime = out.stat().st_mtime_ns
    book.execute(tmp_path, quick=True)
    assert out.stat().st_mtime_ns == mtime
    book.execute(tmp_path, quick=False)
    assert last_output(out) == "10\n"


def test_a_chapter_page_folds_its_parameters_and_setup_so_it_opens_on_prose(tmp_path):
    notebook(tmp_path / "notebooks" / "a.ipynb", "import math\nprint(x)", "print(x + 1)")
    (tmp_path / "runs.yml").write_text("- notebook: notebooks/a.ipynb\n  quick: {x: 2}\n")
    (out,) = book.execute(tmp_path, quick=True)
    cells = nbformat.read(out, as_version=4).cells
    tags = [c.metadata.get("tags", []) for c in cells]
    assert ["parameters", "hide-input"] in tags  # the declared defaults, one click away
    assert ["injected-parameters", "hide-cell"] in tags  # this run's values: folded
    setup = next(c for c in cells if "import math" in c.source)
    assert setup.metadata.tags == ["hide-input"] and "hide-input" not in str(tags[-1])


def test_failing_notebook_names_itself_and_keeps_partial_output(tmp_path):
    notebook(tmp_path / "notebooks" / "bad.ipynb", "raise ValueError('boom')")
    (tmp_path / "runs.yml").write_text("- notebook: notebooks/bad.ipynb\n")
    with pytest.raises(book.NotebookFailed, match=r"bad\.ipynb failed in cell .*ValueError: boom"):
        book.execute(tmp_path)
    assert not (tmp_path / book.EXECUTED / "bad.ipynb").exists()
    assert (tmp_path / book.EXECUTED / "bad.partial.ipynb").exists()


def test_jobs_run_side_by_side_after_what_they_read_and_stop_at_a_failure(tmp_path):
    import time

    stamp = "import time; open('{name}', 'w').write(str(time.time())); time.sleep(1.5)"
    for name in ("a", "b", "c"):
        notebook(tmp_path / "notebooks" / f"{name}.ipynb", stamp.format(name=name))
    (tmp_path / "runs.yml").write_text(
        "- notebook: notebooks/a.ipynb\n- notebook: notebooks/b.ipynb\n"
        "- notebook: notebooks/c.ipynb\n  after: [a]\n"
    )
    start = time.time()
    outputs = book.execute(tmp_path, jobs=2)
    started = {n: float((tmp_path / n).read_text()) for n in "abc"}
    assert [o.stem for o in outputs] == ["a", "b", "c"]
    assert abs(started["a"] - started["b"]) < 1.0  # side by side
    assert started["c"] >= started["a"] + 1.5  # after the run it reads
    assert time.time() - start < 3 * 1.5 + 10
    (tmp_path / "runs.yml").write_text("- notebook: notebooks/a.ipynb\n  after: [z]\n")
    with pytest.raises(ValueError, match="comes after"):
        book.read_runs(tmp_path / "runs.yml")
    notebook(tmp_path / "notebooks" / "bad.ipynb", "raise ValueError('boom')")
    (tmp_path / "runs.yml").write_text(
        "- notebook: notebooks/bad.ipynb\n- notebook: notebooks/c.ipynb\n  after: [bad]\n"
    )
    (tmp_path / "c").unlink()
    with pytest.raises(book.NotebookFailed, match="boom"):
        book.execute(tmp_path, jobs=2, force=True)
    assert not (tmp_path / "c").exists()  # never started after the failure


def test_stored_notebooks_have_no_outputs_and_a_parameters_cell():
    runs = book.read_runs(ROOT / "runs.yml")
    listed = {r.notebook.name for r in runs}
    assert listed == {p.name for p in (ROOT / "notebooks").glob("*.ipynb")}
    for run in runs:
        nb = nbformat.read(ROOT / run.notebook, as_version=4)
        code = [c for c in nb.cells if c.cell_type == "code"]
        assert not any(c.outputs or c.execution_count for c in code), f"{run.notebook} has outputs"
        tagged = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
        assert len(tagged) == 1, f"{run.notebook} needs exactly one 'parameters' cell"
        assert "quick" in tagged[0].source and run.quick.get("quick") is True


@pytest.mark.notebook
def test_every_notebook_runs_quick_without_errors(quick_book):
    _, outputs, _, _ = quick_book
    for out in outputs:
        nb = nbformat.read(out, as_version=4)
        errors = [o for c in nb.cells for o in c.get("outputs", []) if o.output_type == "error"]
        assert not errors, f"{out.name}: {errors}"


@pytest.mark.notebook
def test_book_builds_with_benchmarks_table_and_figure(quick_book):
    root, _, index, _ = quick_book
    assert index.is_file()
    page = (root / "_build" / "html" / "book" / "_executed" / "00-benchmarks.html").read_text()
    assert "<table" in page and "<img" in page
    assert "humaneval" in page and "pass rate" in page


@pytest.mark.notebook
def test_the_landing_page_carries_each_studys_answer_from_every_chapter_it_names(quick_book):
    """The quick book's ``headline.md`` holds a paragraph from every chapter the landing page
    names (``book/intro.md``), the duplication study's answer among them, in words."""
    import re

    root, _, _, _ = quick_book
    headline = (root / "book" / "headline.md").read_text()
    named = set(re.findall(r"_executed/([\w-]+)", (root / "book" / "intro.md").read_text()))
    assert "07-duplication-impact" in named and "04-detection" in named
    for chapter in named:
        said = [p for p in headline.split("\n\n") if f"_executed/{chapter}`)" in p]
        assert said and len(said[0].split()) > 8, f"no answer from {chapter} in {headline}"


@pytest.mark.notebook
def test_the_longest_answer_the_code_can_write_fits_the_first_screen_with_room(quick_book):
    """The detection chapter's page as built, its answer replaced by the longest box
    ``claim_answer`` can write (``test_claim_headline.longest_answer``): the box ends
    ``ROOM`` pixels above the foot of the first screen, whatever a CPU class's digits."""
    from test_claim_headline import longest_answer

    from srlib.book.browsercheck import FIRST_SCREEN, ROOM, answer_bottom, find_browser

    if find_browser() is None:
        pytest.skip("no Chromium installed (.ci/run installs Debian's)")
    root, _, _, _ = quick_book
    page = root / "_build" / "html" / "book" / "_executed" / "04-detection.html"
    bottom = answer_bottom(page, longest_answer())
    assert bottom <= FIRST_SCREEN["height"] - ROOM, bottom


@pytest.mark.notebook
def test_built_book_has_no_broken_link_image_or_error_output(quick_book):
    from srlib.book.htmlcheck import check_html

    root, _, _, _ = quick_book
    assert check_html(root / "_build" / "html") == []
    pages = {p.name for p in (root / "_build" / "html" / "book" / "_executed").glob("*.html")}
    assert "08-audit.html" in pages


def test_notebooks_never_overwrite_their_parameters():
    """A parameter papermill injects always wins: no cell after the parameters cell assigns
    to a parameter's name (quick settings live in runs.yml)."""
    import ast

    for run in book.read_runs(ROOT / "runs.yml"):
        nb = nbformat.read(ROOT / run.notebook, as_version=4)
        code = [c for c in nb.cells if c.cell_type == "code"]
        params_cell = next(c for c in code if "parameters" in c.metadata.get("tags", []))
        params = {
            t.id
            for node in ast.walk(ast.parse(params_cell.source))
            if isinstance(node, ast.Assign)
            for target in node.targets
            for t in ast.walk(target)
            if isinstance(t, ast.Name)
        }
        assert set(run.quick) <= params | {"quick"}, f"{run.notebook}: unknown quick parameter"
        for cell in code:
            if cell is params_cell:
                continue
            for node in ast.walk(ast.parse(cell.source)):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    assert node.id not in params, f"{run.notebook} overwrites {node.id!r}"


def _tables(path: Path) -> list[str]:
    """The text a reader sees in a notebook's outputs (tables and printed lines, a cell's
    printed text joined: a kernel under load may send one line in two messages), without
    stderr (progress bars and their timings), figures, memory addresses and random table ids."""
    import re

    texts = []
    for cell in nbformat.read(path, as_version=4).cells:
        printed = ""  # a cell's printed text, however the kernel split it into messages
        for out in cell.get("outputs", []):
            if out.output_type == "stream" and out.name == "stdout":
                printed += out.text
            elif out.output_type in ("execute_result", "display_data"):
                texts += [out.data[k] for k in ("text/plain", "text/html") if k in out.data]
        texts += [printed] if printed else []
    return [re.sub(r"T_[0-9a-f]{5}", "T_", re.sub(r" at 0x[0-9a-f]+", "", t)) for t in texts]


@pytest.mark.notebook
def test_the_testbed_and_detection_tables_do_not_depend_on_jobs_or_neighbours(quick_book):
    """The quick book ran the testbed and detection chapters with ``--jobs 1``, on the
    session's quick testbed; ``quickbook.py`` then ran them again with ``--jobs 2``, the
    testbed chapter beside the benchmarks chapter, training and scoring their own testbed
    afresh (base, reference, leaked and null-control runs) in a kernel, on the first build's
    corpus and variants (``quickbook.seed_untrained``): the same tables."""
    from srlib.book.digests import collect, compare

    root_two, _, _, alone = quick_book
    assert sorted(out.name for out in alone) == ["03-testbed.ipynb", "04-detection.ipynb"]
    for out in alone:
        parted = compare(collect([out]), collect([root_two / book.EXECUTED / out.name]))
        assert not parted, f"{out.name}: the builds' digests part at " + "; ".join(parted)
        theirs = _tables(root_two / book.EXECUTED / out.name)
        assert theirs and _tables(out) == theirs, out.name


@pytest.mark.notebook
def test_the_quick_build_gives_the_digests_the_lock_records(quick_book):
    """The lock records the quick build's numerics, corpus, base model, main run's last
    checkpoint, its score table and claim table as built on our machines; this machine rebuilt
    them (the second time with other kernels in the caller's environment): the same digests.
    A machine of a numerics class the lock has no record of (another CPU vendor: MKL's
    reproducible branches are documented for Intel CPUs, and an AMD CPU parted) is skipped,
    naming the class and the command that records it."""
    from srlib.book.digests import NOT_RECORDED, check_locked, collect

    root, _, _, alone = quick_book
    first = collect([root / book.EXECUTED / f"{stem}.ipynb" for stem in quickbook.COMPARED])
    parted = check_locked(first)
    if parted[:1] == [NOT_RECORDED]:
        pytest.skip(f"the lock has no quick build of class {parted[1]!r}: record it with "
                    "`srlib book --quick --record-digests` (docs/measured-builds.md)")  # fmt: skip
    assert not parted, "the quick build here parts from the lock: " + "; ".join(parted)
    parted = check_locked(collect(alone))
    assert not parted, "rebuilt with other kernels in the caller's environment: " + "; ".join(
        parted
    )


@pytest.mark.notebook
def test_progress_bars_go_to_the_books_log_not_into_the_chapters(quick_book):
    """Under the book's runner every progress bar is a line of ``book/_executed/progress.log``
    (``srlib.execution.progress``), none an output of a chapter (an executed testbed notebook
    once held 4,613 progress outputs), nor a Hugging Face library's widget bar."""
    root, outputs, _, _ = quick_book
    for path in outputs:
        for cell in nbformat.read(path, as_version=4).cells:
            for out in cell.get("outputs", []):
                assert "\r" not in out.get("text", ""), f"{path.name}: a bar in\n{cell.source}"
                assert "application/vnd.jupyter.widget-view+json" not in out.get("data", {})
    log = (root / book.EXECUTED / book.PROGRESS_LOG).read_text()
    assert "corpus documents:" in log  # the duplication chapter's audit of local files


@pytest.mark.notebook
def test_no_rendered_table_hides_rows_behind_an_ellipsis(quick_book):
    """pandas cuts a long table to its first and last rows behind a "…" row the page cannot
    open: every table a chapter shows is whole (``book.download.whole``), split or summarised."""
    import re

    _, outputs, _, _ = quick_book
    cut = re.compile(r"<t[dh][^>]*>(\.\.\.|…)</t[dh]>")
    for path in outputs:
        for cell in nbformat.read(path, as_version=4).cells:
            for out in cell.get("outputs", []):
                html = out.get("data", {}).get("text/html", "")
                assert not cut.search(html), f"{path.name}: a truncated table in\n{cell.source}"


def test_no_notebook_chooses_its_words_by_comparing_numbers():
    """Verdicts live in the library (tested); a notebook only prints them. Caught here: an
    ``if`` or a conditional expression that orders numbers, or a pick of the best by value."""
    import ast

    ordering = (ast.Lt, ast.Gt, ast.LtE, ast.GtE)
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type != "code" or "parameters" in cell.metadata.get("tags", []):
                continue
            tree = ast.parse(cell.source)
            for node in ast.walk(tree):
                tests = [node.test] if isinstance(node, (ast.If, ast.IfExp)) else []
                compares = [c for t in tests for c in ast.walk(t) if isinstance(c, ast.Compare)]
                assert not any(isinstance(op, ordering) for c in compares for op in c.ops), (
                    f"{path.name}: a verdict chosen in the notebook:\n{cell.source}"
                )
                if isinstance(node, ast.Attribute) and node.attr in ("idxmax", "idxmin"):
                    pytest.fail(
                        f"{path.name}: a best-by-value pick in the notebook:\n{cell.source}"
                    )


@pytest.mark.parametrize("notebook", sorted((ROOT / "notebooks").glob("*.ipynb")), ids=str)
def test_papermill_sees_every_name_a_parameters_cell_assigns(notebook):
    """A line papermill cannot parse (an ``=`` in its comment did) drops that parameter:
    runs.yml and a reader's ``-p`` would then be refused for a name the cell declares."""
    import ast

    import papermill as pm

    cell = next(
        c for c in nbformat.read(notebook, as_version=4).cells
        if "parameters" in c.metadata.get("tags", [])
    )  # fmt: skip
    assigned = [
        t.id for node in ast.parse(cell.source).body if isinstance(node, ast.Assign)
        for t in node.targets if isinstance(t, ast.Name)
    ]  # fmt: skip
    assert list(pm.inspect_notebook(str(notebook))) == assigned
