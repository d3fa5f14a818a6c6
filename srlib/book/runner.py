"""The book runner: execute every notebook of the runs file with papermill, then build the book.

``runs.yml`` lists each notebook with its full-run parameters, the ``quick`` overrides that
shrink it, and (``after``) the earlier chapters whose results it reads. Executed copies go to
``book/_executed/`` (git-ignored) and carry a stamp of what produced them, so an interrupted
``make book`` re-executes only what is missing or stale. With ``jobs`` > 1 independent
chapters execute side by side (one kernel each, every kernel's thread pools the same size
whatever ``jobs`` is: ``KERNEL_THREADS``); a chapter starts after those it names.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from srlib.book.appendix import write_appendix, write_headline
from srlib.book.htmlcheck import check_html
from srlib.errors import InputError, SrlibError
from srlib.execution.progress import BOOK_RUNNER, QUIET
from srlib.store import digest

ROOT = Path(__file__).resolve().parents[2]
EXECUTED = Path("book/_executed")
#: A kernel's progress bars redraw at most this often, in seconds (tqdm reads it from
#: ``TQDM_MININTERVAL``): the progress log keeps every redraw.
PROGRESS_SECONDS = 30
#: Where the kernels' progress bars go, in ``EXECUTED`` (``srlib.execution.progress``).
PROGRESS_LOG = "progress.log"
#: Threads per pool (OpenMP, MKL, OpenBLAS) in every kernel, for every ``--jobs`` and whichever
#: chapters run beside it: numerics depend on thread counts, so a chapter's tables must not
#: depend on how the book was run (the testbed also fixes torch's, in its config). A value the
#: user set in the environment is kept.
KERNEL_THREADS = 1
#: The thread-pool sizes ``KERNEL_THREADS`` sets (OpenMP, MKL, OpenBLAS).
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


class NotebookFailed(SrlibError):
    """A notebook raised while executing; names it, the cell and the error."""


class BuildFailed(SrlibError):
    """Jupyter Book could not build the executed notebooks."""


@dataclass
class Run:
    """One notebook execution: source notebook, parameters, and quick-mode overrides."""

    notebook: Path
    parameters: dict[str, Any] = field(default_factory=dict)
    quick: dict[str, Any] = field(default_factory=lambda: {"quick": True})
    after: tuple[str, ...] = ()  # stems of earlier runs whose results this one reads

    def params(self, quick: bool) -> dict[str, Any]:
        """The parameters papermill injects: full run, or full run with quick overrides."""
        return {**self.parameters, **(self.quick if quick else {})}

    def output(self, root: Path) -> Path:
        """Where the executed copy is written."""
        return root / EXECUTED / self.notebook.name


SHARED_KEYS = {"chapters", "parameters", "quick"}


def read_runs(path: str | os.PathLike[str]) -> list[Run]:
    """Parse the runs file: a list of runs, or a mapping with ``chapters`` (that list) and
    ``testbed`` (``chapters``: the notebooks that read the testbed; ``parameters`` and
    ``quick``: what every one of them is given, so they cannot disagree). A bad entry, a
    chapter that sets a shared parameter itself, or a parameter its notebook does not
    declare is an error naming the file, the notebook and the parameter."""
    path = Path(path)
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8")) or []
    except yaml.YAMLError as e:
        raise InputError(f"{path}: not YAML ({e})") from e
    shared: dict[str, Any] = {}
    if isinstance(doc, dict):
        unknown = set(doc) - {"testbed", "chapters"}
        if unknown:
            raise InputError(f"{path}: unknown top-level key(s) {sorted(unknown)}")
        shared = doc.get("testbed") or {}
        if set(shared) - SHARED_KEYS:
            raise InputError(
                f"{path}: testbed has unknown key(s) {sorted(set(shared) - SHARED_KEYS)}"
            )
        doc = doc.get("chapters") or []
    if not isinstance(doc, list):
        raise InputError(f"{path}: expected a list of runs")
    runs = []
    for i, e in enumerate(doc, 1):
        if not isinstance(e, dict) or "notebook" not in e:
            raise InputError(f"{path}: run {i} needs a 'notebook' key, got {e!r}")
        unknown = set(e) - {"notebook", "parameters", "quick", "after"}
        if unknown:
            raise InputError(f"{path}: run {i} has unknown key(s) {sorted(unknown)}")
        nb = path.parent / e["notebook"]
        if not nb.is_file():
            raise FileNotFoundError(f"{path}: run {i}: notebook {nb} does not exist")
        after = tuple(e.get("after") or ())
        missing = set(after) - {r.notebook.stem for r in runs}
        if missing:
            raise InputError(f"{path}: run {i} comes after {sorted(missing)}, no earlier run")
        parameters, quick = e.get("parameters") or {}, e.get("quick") or {}
        if nb.stem in (shared.get("chapters") or ()):
            own = (set(parameters) | set(quick)) & (
                set(shared.get("parameters") or {}) | set(shared.get("quick") or {})
            )
            if own:
                raise InputError(
                    f"{path}: {e['notebook']} sets the testbed's {sorted(own)} itself; "
                    "set them once in the testbed block"
                )
            parameters = {**(shared.get("parameters") or {}), **parameters}
            quick = {**(shared.get("quick") or {}), **quick}
        _check_declared(path, nb, {**parameters, **quick})
        runs.append(Run(Path(e["notebook"]), parameters, quick, after))
    named = set(shared.get("chapters") or ()) - {r.notebook.stem for r in runs}
    if named:
        raise InputError(f"{path}: the testbed block names no run {sorted(named)}")
    return runs


def _check_declared(path: Path, notebook: Path, parameters: dict[str, Any]) -> None:
    """A parameter the notebook's ``parameters`` cell does not declare would be injected and
    silently ignored: an error naming it."""
    import papermill as pm

    declared = set(pm.inspect_notebook(str(notebook)))
    undeclared = set(parameters) - declared
    if undeclared:
        raise InputError(
            f"{path}: {notebook.name} declares no parameter {sorted(undeclared)} "
            f"(its parameters: {sorted(declared)})"
        )


def _stamp(root: Path, run: Run, quick: bool) -> str:
    """Hash of the notebook, its parameters and the library source: what the output depends on."""
    sources = {str(p.relative_to(root)): p.read_bytes() for p in (root / "srlib").rglob("*.py")}
    return digest((root / run.notebook).read_bytes(), run.params(quick), sources, length=64)


def _is_current(out: Path, stamp: str) -> bool:
    if not out.is_file():
        return False
    meta = json.loads(out.read_text(encoding="utf-8")).get("metadata", {})
    return meta.get("srlib", {}).get("stamp") == stamp


def execute(
    root: Path = ROOT,
    quick: bool = False,
    only: list[str] | None = None,
    force: bool = False,
    jobs: int = 1,
) -> list[Path]:
    """Execute the runs file's notebooks (stale ones only unless ``force``), up to ``jobs``
    at a time, each started once the runs it names in ``after`` have finished; return the
    outputs in runs-file order. The first failure is raised once the running notebooks have
    finished; no chapter starts after a failure.

    ``root`` is the book's folder (``runs.yml``, ``notebooks/``); notebooks run with it as
    their working directory."""
    from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

    runs = read_runs(root / "runs.yml")
    if only:
        names = {r.notebook.stem for r in runs} | {r.notebook.name for r in runs}
        unknown = [name for name in only if name not in names]
        if unknown:
            raise InputError(
                f"no chapter {', '.join(map(repr, unknown))} in runs.yml; the chapters are "
                f"{', '.join(r.notebook.stem for r in runs)}"
            )
        runs = [r for r in runs if r.notebook.stem in only or r.notebook.name in only]
    pending, running, done, outputs = list(runs), {}, set(), {}
    error: BaseException | None = None
    log = root / EXECUTED / PROGRESS_LOG
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("")  # this run's bars only
    print(f"[book] progress bars: tail -f {log}", flush=True)
    with _kernel_environment(log), ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        while pending or running:
            ready = [r for r in pending if set(r.after) <= done | _absent(r, runs)]
            while error is None and ready and len(running) < max(1, jobs):
                run = ready.pop(0)
                pending.remove(run)
                running[pool.submit(_execute_one, root, run, quick, force)] = run
            if not running:
                break  # a failure left the rest unstarted
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in finished:
                run = running.pop(future)
                if future.exception() is not None:
                    error = error or future.exception()
                else:
                    outputs[run.notebook.stem] = future.result()
                    done.add(run.notebook.stem)
    if error is not None:
        raise error
    return [outputs[r.notebook.stem] for r in runs]


def kernel_environment(log: Path, environ: dict[str, str] | None = None) -> dict[str, str]:
    """What every kernel of the book starts from (``environ``, default this process's, with
    these settings). ``KERNEL_THREADS`` threads per pool, whatever ``--jobs`` is and whichever
    chapters run beside it: numerics depend on thread counts, so a chapter's tables must not
    depend on how the book was run (the testbed also fixes torch's, in its config). Progress
    bars drawn in ``log`` (``srlib.execution.progress.BOOK_RUNNER``), at most every
    ``PROGRESS_SECONDS``, and the Hugging Face libraries' bars and warnings off
    (``progress.QUIET``), so a chapter's outputs are its results only; its answer left to the
    page's box (``srlib.book.answer.glue_answer``). A thread count or redraw interval the user
    set is kept."""
    env = _with_threads(environ)
    env.setdefault("TQDM_MININTERVAL", str(PROGRESS_SECONDS))
    return env | QUIET | {BOOK_RUNNER: str(log.resolve())}


def lab_environment(environ: dict[str, str] | None = None) -> dict[str, str]:
    """What ``srlib lab`` starts JupyterLab with (``environ``, default this process's): the
    book's thread counts (``KERNEL_THREADS``, a count the user set kept), so a chapter run there
    computes what the book computes, and this environment's kernels before the user's own
    (``JUPYTER_PREFER_ENV_PATH``). Progress bars stay widgets and the answer stays in the cell:
    no ``BOOK_RUNNER``."""
    env = _with_threads(environ)
    env.pop(BOOK_RUNNER, None)
    return env | {"JUPYTER_PREFER_ENV_PATH": "1"}


def _with_threads(environ: dict[str, str] | None) -> dict[str, str]:
    """A copy of ``environ`` (default this process's) with ``KERNEL_THREADS`` for each of
    ``THREAD_VARIABLES`` the user did not set."""
    env = dict(os.environ if environ is None else environ)
    for name in THREAD_VARIABLES:
        env.setdefault(name, str(KERNEL_THREADS))
    return env


@contextlib.contextmanager
def _kernel_environment(log: Path):
    """This process's environment set to ``kernel_environment(log)`` (papermill's kernels
    start from it), restored afterwards."""
    settings = kernel_environment(log)
    saved = {name: os.environ.get(name) for name in settings}
    os.environ.update(settings)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _browser_check(html: Path) -> list:
    """Problems a headless Chromium sees; without one, say so (the HTML check still ran)."""
    from srlib.book.browsercheck import check_in_browser, find_browser

    if find_browser() is None:
        print("[book] no Chromium found: browser check not run (apt-get install chromium)")
        return []
    problems = check_in_browser(html, html.parent / "screenshots")
    print(f"[book] every page opened in Chromium; screenshots in {html.parent / 'screenshots'}")
    return problems


LAYOUT_REPORT = "layout-problems.txt"
"""Where a build lists its layout problems, in ``_build/`` (``_layout_said``)."""


def _layout_said(html: Path, problems: list) -> list:
    """The problems that fail the build: the layout ones (``browsercheck.LAYOUT``) are printed
    and written to ``_build/`` (``LAYOUT_REPORT``) instead, so a build of hours whose pages are
    whole is kept; ``srlib book`` says so again at its end. The file is removed when none."""
    from srlib.book.browsercheck import LAYOUT

    layout = [p for p in problems if p.kind in LAYOUT]
    report = html.parent / LAYOUT_REPORT
    report.unlink(missing_ok=True)
    if layout:
        report.write_text("".join(f"{p}\n" for p in layout), encoding="utf-8")
        for problem in layout:
            print(f"[book] LAYOUT PROBLEM (the book is kept): {problem}", flush=True)
        print(f"[book] {len(layout)} layout problem(s), listed in {report}", flush=True)
    return [p for p in problems if p.kind not in LAYOUT]


def _absent(run: Run, runs: list[Run]) -> set[str]:
    """The runs ``run`` comes after that are not being executed (``only``): already there."""
    return set(run.after) - {r.notebook.stem for r in runs}


def _execute_one(root: Path, run: Run, quick: bool, force: bool) -> Path:
    """Execute one notebook with papermill unless its output is current; its output path."""
    import nbformat
    import papermill as pm

    out, stamp = run.output(root), _stamp(root, run, quick)
    if not force and _is_current(out, stamp):
        print(f"[book] {run.notebook} is up to date", flush=True)
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".partial.ipynb")
    print(f"[book] executing {run.notebook} with {run.params(quick)}", flush=True)
    start = time.perf_counter()
    try:
        pm.execute_notebook(
            str(root / run.notebook),
            str(tmp),
            parameters=run.params(quick),
            cwd=str(root),
            kernel_name="python3",
            progress_bar=False,
        )
    except pm.PapermillExecutionError as e:
        raise NotebookFailed(
            f"{run.notebook} failed in cell {e.exec_count}: {e.ename}: {e.evalue} "
            f"(partial output kept in {tmp})"
        ) from e
    nb = nbformat.read(tmp, as_version=4)
    fold_setup(nb)
    nb.metadata["srlib"] = {
        "stamp": stamp,
        "quick": quick,
        "seconds": round(time.perf_counter() - start, 1),
    }
    nbformat.write(nb, tmp)
    os.replace(tmp, out)
    print(
        f"[book] wrote {out.relative_to(root)} in {nb.metadata['srlib']['seconds']} s",
        flush=True,
    )
    return out


def fold_setup(nb) -> None:
    """Tag an executed chapter so its page opens on prose and results: the parameters cell's
    input folded (one click shows what a rerun may change), papermill's injected cell (which
    repeats it with this run's values) folded whole, and the first code cell after them (the
    imports and the build) with its input folded."""
    cells = nb.cells
    tags = lambda c: c.setdefault("metadata", {}).setdefault("tags", [])  # noqa: E731
    params = [i for i, c in enumerate(cells) if "parameters" in tags(c)]
    injected = [i for i, c in enumerate(cells) if "injected-parameters" in tags(c)]
    for i in injected:
        if "hide-cell" not in tags(cells[i]):
            tags(cells[i]).append("hide-cell")
    for i in params:
        if not {"hide-input", "hide-cell"} & set(tags(cells[i])):
            tags(cells[i]).append("hide-input")
    after = max(params + injected, default=-1)
    setup = next((c for c in cells[after + 1 :] if c.cell_type == "code"), None)
    if setup is not None and not {"hide-input", "hide-cell", "remove-cell"} & set(tags(setup)):
        tags(setup).append("hide-input")


def build(root: Path = ROOT, browser: bool = True) -> Path:
    """Compile the executed notebooks into HTML with Jupyter Book (warnings are errors), then
    check the HTML as a reader meets it (``srlib.book.htmlcheck``) and, with ``browser`` and a
    Chromium installed, in a real browser with a screenshot per page
    (``srlib.book.browsercheck``, into ``_build/screenshots``): a broken page is an error; a
    layout problem (``browsercheck.LAYOUT``) is reported and the book kept (``_layout_said``)."""
    exe = Path(sys.executable).with_name("jupyter-book")
    if not exe.is_file():
        raise FileNotFoundError(
            f"{exe} not found: install the book extra (pip install -e '.[book]')"
        )
    executed = sorted(p for p in (root / EXECUTED).glob("*.ipynb") if ".partial" not in p.name)
    write_appendix(root, executed, root / ".srlib-cache")
    write_headline(root, executed)
    cmd = [str(exe), "build", str(root), "--path-output", str(root), "-W", "-n", "--keep-going"]
    if subprocess.run(cmd, cwd=root).returncode != 0:
        raise BuildFailed(f"jupyter-book could not build {root} (its messages are above)")
    index = root / "_build" / "html" / "index.html"
    if not index.is_file():
        raise RuntimeError(f"jupyter-book finished but {index} is missing")
    problems = check_html(index.parent)
    if browser and not problems:
        problems = _layout_said(index.parent, _browser_check(index.parent))
    if problems:
        listed = "; ".join(map(str, problems[:10]))
        raise BuildFailed(f"the built book has {len(problems)} problem(s): {listed}")
    return index
