"""The quick book, built in a process of its own while the rest of the suite runs.

``start(folder)`` copies the book's sources into ``folder / "book"`` and starts this file as a
subprocess (at a lower priority than the suite); ``QuickBook.result()`` waits for it. The
subprocess first builds the ``quick`` testbed into ``folder / "testbed"``
(``QuickBook.testbed()`` waits for that: the suite's testbed tests use it from then on) and
links the book's cache to it, so that a score table or model either side makes first, the
other reuses (the store writes atomically and keeps an equal artifact another process
finished; the suite's tests copy the cache with ``copy_cache``); it computes the
whole-benchmark checks of ``wholebench.EARLY`` into ``folder / "jobs"`` (``QuickBook.job(name)``
waits for one; the tests that read them run just before the book's); then it executes
every chapter with its quick parameters, one at a time (``--jobs 1``: the other core is the
suite's), computes ``wholebench.LATE``'s checks, then builds the HTML with its checks and has
nbval re-execute every chapter and compare it with the book cell by cell (``validate``:
``folder / "nbval.json"``) while it re-executes the testbed and detection chapters with
``--jobs 2`` beside the benchmarks chapter in ``folder / "alone"`` (training
and scoring their testbed afresh on the same corpus and variants, with ``OTHER_KERNELS`` in
the environment they start from), for the test that the tables depend neither on jobs and
neighbours nor on the caller's kernel settings. It writes
``result.json`` (or the traceback) when done; its output goes to ``log.txt``.

Running it beside the suite's other tests uses the machine's second core, which the suite
alone leaves mostly idle; ``conftest.py`` starts it only when a collected test needs the book
and orders those tests last."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("_config.yml", "_toc.yml", "runs.yml", "references.bib")
ALONE = ["03-testbed", "04-detection", "00-benchmarks"]  # re-executed, two jobs
COMPARED = ("03-testbed", "04-detection")  # whose tables the determinism test compares
ONE_THREAD = {name: "1" for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
OTHER_KERNELS = {"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE"}
"""The rerun's caller environment: other kernels than the pin's (``srlib.models.numerics``)."""


def copy_sources(root: Path, folders: tuple[str, ...] = ("notebooks", "book", "examples")) -> None:
    """The book's sources (without executed notebooks) into ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    for name in SOURCES:
        shutil.copy(ROOT / name, root / name)
    for folder in folders:
        shutil.copytree(ROOT / folder, root / folder, ignore=shutil.ignore_patterns("_executed"))


@dataclass
class QuickBook:
    """The running (or finished) quick-book process and where it writes."""

    folder: Path
    process: subprocess.Popen

    @property
    def root(self) -> Path:
        return self.folder / "book"

    def result(self, timeout: float = 900) -> dict:
        """Wait for the process; its result, or an error carrying the traceback and log."""
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired as late:
            self.stop()
            raise RuntimeError(f"the quick book took over {timeout} s; log: {self.log()}") from late
        file = self.folder / "result.json"
        result = json.loads(file.read_text()) if file.is_file() else {}
        if "error" in result or not result:
            raise RuntimeError(f"the quick book failed:\n{result.get('error')}\n{self.log()}")
        return result

    def testbed(self, timeout: float = 600) -> Path:
        """Wait until the quick testbed is built; its cache folder."""
        ready, deadline = self.folder / "testbed-ready", time.monotonic() + timeout
        while not ready.is_file():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the quick testbed was not built:\n{self.log()}")
            time.sleep(0.5)
        return self.folder / "testbed"

    def job(self, name: str, timeout: float = 600) -> object:
        """Wait for the whole-benchmark check ``name``; its result (a traceback: an error)."""
        file, deadline = self.folder / "jobs" / f"{name}.json", time.monotonic() + timeout
        while not file.is_file():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the check {name!r} did not finish:\n{self.log()}")
            time.sleep(0.5)
        result = json.loads(file.read_text())
        if "error" in result:
            raise RuntimeError(f"the check {name!r} failed:\n{result['error']}")
        return result["value"]

    def log(self) -> str:
        text = (self.folder / "log.txt").read_text(errors="replace")
        return text[-6000:]

    def stop(self) -> None:
        """End the process and everything it started (its kernels) if it still runs."""
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


def start(folder: Path) -> QuickBook:
    """Copy the sources and start building the quick book in the background."""
    copy_sources(folder / "book")
    copy_sources(folder / "alone", folders=("notebooks",))
    log = (folder / "log.txt").open("w")
    cmd = [sys.executable, __file__, str(folder)]
    process = subprocess.Popen(
        cmd,
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=folder,
        env={**os.environ, **ONE_THREAD},  # one core's worth: the other is the suite's
        start_new_session=True,
        preexec_fn=lambda: os.nice(19),  # the suite's own tests first, the book on what is left
    )
    return QuickBook(folder, process)


def run_jobs(folder: Path, names: tuple[str, ...]) -> None:
    """Each whole-benchmark check ``names`` (of ``wholebench.JOBS``) into ``folder / NAME.json``
    (``{"value": ...}`` or ``{"error": traceback}``), written whole or not at all."""
    import wholebench

    folder.mkdir(exist_ok=True)
    for name in names:
        try:
            result = {"value": getattr(wholebench, name)()}
        except Exception:
            result = {"error": traceback.format_exc()}
        (folder / f"{name}.tmp").write_text(json.dumps(result))
        (folder / f"{name}.tmp").rename(folder / f"{name}.json")


def copy_cache(cache: Path, into: Path) -> None:
    """A copy of a testbed cache that the quick book may be writing to: its complete
    artifacts (never removed once made), not the temporary folders of those in progress, and
    its score cache through SQLite's own backup (a plain read of a database file that this
    process also holds open through SQLite, closed again, drops every POSIX lock the process
    holds on it: another process's writes then land beside this one's, and the file is
    corrupted — the quick book's chapters and the suite share that file)."""
    import sqlite3

    skip = shutil.ignore_patterns("*.partial-*", "*.sqlite", "*.sqlite-*")
    shutil.copytree(cache, into, symlinks=True, ignore=skip)
    for db in cache.rglob("*.sqlite"):
        if any(".partial-" in part for part in db.relative_to(cache).parts):
            continue
        target = into / db.relative_to(cache)
        target.parent.mkdir(parents=True, exist_ok=True)
        opened = (
            contextlib.closing(sqlite3.connect(db)),
            contextlib.closing(sqlite3.connect(target)),
        )
        with opened[0] as source, opened[1] as copy:
            source.backup(copy)


UNTRAINED = ("corpus", "variants")  # store kinds no torch thread touches


def seed_untrained(cache: Path, into: Path) -> None:
    """The quick testbed's corpus and variants into the rerun's cache: text and sandbox work
    that no thread count enters, so the rerun trains and scores (what threads could change)
    without building them again."""
    for kind in UNTRAINED:
        copy_cache(cache / kind, into / kind)


SANITIZE = Path(__file__).with_name("nbval-sanitize.cfg")


def validate(root: Path, notebooks: list[Path], into: Path, environ: dict[str, str]) -> None:
    """nbval re-executes each executed chapter in ``root`` (its injected quick parameters
    included, in a kernel started where JupyterLab would start it, beside the notebook) and
    compares every cell's outputs with the book's, after ``SANITIZE``'s rules; its exit status
    and report into ``into`` (JSON), with the cache files the rerun made (``cache_files``: none
    when every chapter reads what the book made). Its kernels start from ``environ`` with the
    book's kernel settings (``runner.kernel_environment``)."""
    from srlib.book import runner

    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-o", "addopts=",
           "--rootdir", str(root), "--nbval", "--nbval-current-env", "--nbval-cell-timeout",
           "600", "--nbval-sanitize-with", str(SANITIZE), *map(str, notebooks)]  # fmt: skip
    log = root / runner.EXECUTED / "nbval-progress.log"
    env = runner.kernel_environment(log, environ)
    before = cache_files(root)
    done = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True)
    report = {
        "returncode": done.returncode,
        "output": (done.stdout + done.stderr)[-20000:],
        "made": sorted(cache_files(root) - before),  # what the rerun did not read from cache
    }
    into.write_text(json.dumps(report))


def cache_files(root: Path) -> set[str]:
    """Every file of the caches a chapter can write, under ``root`` (the book's
    ``.srlib-cache``, followed through its link to the testbed) and beside the notebooks (where a
    chapter that did not move to the project's folder would write), SQLite's journals aside."""
    from srlib.book.runner import EXECUTED

    skip = ("-wal", "-shm", "-journal", ".log", ".ipynb")
    found = set()
    for top in (root / ".srlib-cache", root / EXECUTED, root / "notebooks"):
        for folder, _, files in os.walk(top, followlinks=True):
            found |= {str(Path(folder, f).relative_to(root)) for f in files if not f.endswith(skip)}
    return found


def main(folder: Path) -> None:
    """Build the quick testbed, compute the whole-benchmark checks, execute and build the quick
    book, then the testbed and detection chapters again; write the result."""
    import wholebench

    from srlib.book import runner as book
    from srlib.testbed.build import build
    from srlib.testbed.config import profile

    result: dict = {}
    try:
        start_time = time.perf_counter()
        build(profile("quick"), folder / "testbed", progress=False)
        (folder / "testbed-ready").touch()
        run_jobs(folder / "jobs", wholebench.EARLY)
        (folder / "book" / ".srlib-cache").mkdir(parents=True)
        (folder / "book" / ".srlib-cache" / "testbed").symlink_to(folder / "testbed")
        outputs = book.execute(folder / "book", quick=True, force=True, jobs=1)
        result["outputs"] = [str(p) for p in outputs]
        run_jobs(folder / "jobs", wholebench.LATE)
        # the HTML build (a jupyter-book process, then the checks) and nbval's rerun of every
        # chapter beside the testbed chapters' rerun: by now the suite's own tests are ending
        with ThreadPoolExecutor(max_workers=2) as pool:
            html = pool.submit(book.build, folder / "book")
            checked = pool.submit(validate, folder / "book", outputs, folder / "nbval.json",
                                  dict(os.environ))  # fmt: skip
            seed_untrained(folder / "testbed", folder / "alone" / ".srlib-cache" / "testbed")
            os.environ.update(OTHER_KERNELS)  # a caller's shell: the kernels must not follow it
            alone = book.execute(folder / "alone", quick=True, force=True, jobs=2, only=ALONE)
            result["alone"] = [str(p) for p in alone if p.stem in COMPARED]
            result["index"] = str(html.result())
            checked.result()
        result["book_seconds"] = round(time.perf_counter() - start_time, 1)
    except BaseException:
        result["error"] = traceback.format_exc()
    (folder / "result.json").write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
