"""The same chapter in every runner: JupyterLab (``make lab``, driven in Chromium), nbval's rerun
of the quick book compared with it cell by cell, and the pieces that make them agree — paths
from the project's folder, the answer shown where no book renders its box, progress drawn as a
widget in Jupyter and as text in the book's log."""

from __future__ import annotations

import ast
import json
import re

import nbformat
import pytest

from srlib.book import runner as book
from srlib.book.answer import SHOWN
from srlib.book.browsercheck import find_browser
from srlib.book.project import MARKER, at_project_root, project_root
from srlib.execution import progress

RAW_MYST = re.compile(r"^:(label|class|name):|\{(doc|ref|term|numref)\}`|^```\{", re.M)
"""MyST that JupyterLab would show as text if jupyterlab-myst did not render it."""


def test_chapters_find_the_project_from_any_folder_below_it(tmp_path, monkeypatch):
    (tmp_path / MARKER).write_text("chapters: []\n")
    below = tmp_path / "book" / "_executed"
    below.mkdir(parents=True)
    assert project_root(below) == tmp_path.resolve()
    monkeypatch.chdir(below)
    assert at_project_root() == tmp_path.resolve() and project_root() == tmp_path.resolve()
    elsewhere = tmp_path.parent / f"{tmp_path.name}-own"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    with pytest.warns(UserWarning, match=f"no {MARKER} in {elsewhere.resolve()}"):
        assert project_root() is None and at_project_root() == elsewhere.resolve()


def test_every_chapter_moves_to_the_project_before_it_reads_a_path():
    """The first code cell after the parameters calls ``at_project_root()`` before anything
    else runs, so JupyterLab (which starts a kernel beside the notebook) reads the book's caches."""
    for path in sorted((book.ROOT / "notebooks").glob("*.ipynb")):
        cells = nbformat.read(path, as_version=4).cells
        first = next(i for i, c in enumerate(cells) if "parameters" in c.metadata.get("tags", []))
        code = next(c for c in cells[first + 1 :] if c.cell_type == "code")
        body = [
            n for n in ast.parse(code.source).body if not isinstance(n, ast.Import | ast.ImportFrom)
        ]
        assert ast.unparse(body[0]) == "at_project_root()", path.name


def test_cells_nbval_does_not_compare_say_why():
    for path in sorted((book.ROOT / "notebooks").glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if "nbval-ignore-output" in cell.metadata.get("tags", []):
                assert cell.metadata.get("varies"), f"{path.name}: no reason for\n{cell.source}"


def test_progress_is_text_in_the_books_log_and_tqdm_auto_elsewhere(tmp_path, monkeypatch):
    """Under the book's runner a bar is text appended to its log; elsewhere it is whatever
    ``tqdm.auto`` picks (a widget in a Jupyter kernel: the JupyterLab test below sees one)."""
    import tqdm.auto

    log = tmp_path / "progress.log"
    monkeypatch.setenv(progress.BOOK_RUNNER, str(log))
    for _ in progress.tqdm(range(3), desc="counting", mininterval=0):
        pass
    assert "counting: 100%" in log.read_text()
    monkeypatch.delenv(progress.BOOK_RUNNER)
    monkeypatch.setattr(tqdm.auto, "tqdm", lambda *args, **kwargs: ("auto", args, kwargs))
    assert progress.tqdm(range(1), desc="x") == ("auto", (range(1),), {"desc": "x"})


def test_the_books_kernels_draw_progress_in_its_log_and_keep_the_users_threads(tmp_path):
    env = book.kernel_environment(tmp_path / "p.log", {"OMP_NUM_THREADS": "4", "PATH": "/bin"})
    assert env[progress.BOOK_RUNNER] == str((tmp_path / "p.log").resolve())
    assert env["OMP_NUM_THREADS"] == "4" and env["MKL_NUM_THREADS"] == str(book.KERNEL_THREADS)
    assert progress.QUIET.items() <= env.items() and env["PATH"] == "/bin"


def test_jupyterlab_kernels_get_the_books_threads_but_widgets_and_answers():
    """``srlib lab``: the thread counts the book's kernels have (numerics depend on them), not
    the book's log or its quiet libraries."""
    env = book.lab_environment({progress.BOOK_RUNNER: "/tmp/x.log", "MKL_NUM_THREADS": "2"})
    assert env["OMP_NUM_THREADS"] == str(book.KERNEL_THREADS)
    assert env["MKL_NUM_THREADS"] == "2" and progress.BOOK_RUNNER not in env
    assert env["JUPYTER_PREFER_ENV_PATH"] == "1"


@pytest.mark.notebook
def test_nbval_reruns_every_quick_chapter_to_the_books_outputs(quick_book):
    """nbval re-executed each executed quick chapter (``quickbook.validate``), in a kernel
    started beside the notebook, and found every cell's outputs equal to the book's, after the
    rules of ``nbval-sanitize.cfg``; the rerun read every cache and made nothing."""
    root, outputs, _, _ = quick_book
    report = json.loads((root.parent / "nbval.json").read_text())
    assert report["returncode"] == 0, report["output"]
    assert report["made"] == [], report["made"]  # every chapter read the book's caches
    cells = sum(
        c.cell_type == "code" for p in outputs for c in nbformat.read(p, as_version=4).cells
    )
    passed = int(re.search(r"(\d+) passed", report["output"]).group(1))
    assert passed == cells, report["output"][-3000:]  # every code cell of every chapter


@pytest.mark.notebook
def test_a_quick_chapter_runs_in_jupyterlab_with_its_myst_and_answer_rendered(quick_book, tmp_path):
    """``make lab`` on the quick book's folder; in Chromium, JupyterLab's "Run All Cells" on
    the executed benchmarks chapter (its quick parameters injected): every cell runs without an
    error, the MyST (exercises, admonitions, links) is rendered, not shown as text, the answer
    is shown where it is computed, the progress bar is a widget, and the tables are the book's."""
    import labcheck

    executable = find_browser()
    assert executable, "no Chromium: install it (Debian: apt-get install chromium; .ci/run does)"
    root, outputs, _, _ = quick_book
    chapter = next(p for p in outputs if p.stem == "00-benchmarks")
    with labcheck.lab(root, tmp_path / "lab.log") as (base, token):
        notebook = str(chapter.relative_to(root))
        state = labcheck.run_all(base, token, notebook, executable, tmp_path / "lab.png")
    assert not state["page_errors"], state["page_errors"]
    assert not state["outside"], state["outside"]  # no news, update check or CDN
    code = [c for c in state["cells"] if c["type"] == "code"]
    assert all(c["count"] for c in code), "a cell did not run"
    errors = [o["error"] for c in code for o in c["outputs"] if o["type"] == "error"]
    assert not errors, errors
    markdown = "\n".join(c["text"] for c in state["cells"] if c["type"] == "markdown")
    assert not RAW_MYST.search(markdown), RAW_MYST.search(markdown).group(0)
    source = nbformat.read(chapter, as_version=4)
    directives = re.compile(r"^[`:]{3,}\{(admonition|exercise|solution)\}", re.M)
    boxes = sum(
        len(directives.findall(c.source)) for c in source.cells if c.cell_type == "markdown"
    )
    assert state["boxes"] >= boxes  # every admonition, exercise and solution drawn as a box
    shown = [a for a in state["answers"] if a.startswith("The answer")]
    assert len(shown) == 1 and SHOWN.split("**")[1] in shown[0], state["answers"]
    assert state["widgets"] >= 1  # the sandbox's progress bar
    styler = re.compile(r"T_[0-9a-f]{5}")
    for page, cell in zip(state["cells"], source.cells, strict=True):
        if cell.cell_type == "code" and "nbval-ignore-output" not in cell.metadata.get("tags", []):
            want = [o.data["text/html"] for o in cell.outputs if "text/html" in o.get("data", {})]
            got = [o["html"] for o in page["outputs"] if o["html"]]
            same = [styler.sub("T", t) for t in got] == [styler.sub("T", t) for t in want]
            assert same, cell.source
