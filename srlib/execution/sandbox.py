"""Run untrusted Python (benchmark solutions, model outputs) with limits, and say how it went.

Each run gets an isolated interpreter (``python -I``: a fresh one for ``run_program``
alone, a child forked from a fork server's for each program of ``run_programs``, see
``srlib.execution.forkserver``) in its own session and process group, a temporary working
directory removed afterwards, a stripped environment, and resource limits (address space,
CPU time, file size, processes). The limit that decides a timeout is CPU time, which a busy
machine does not change: under a wall-clock limit a program that needs 5 s of CPU passes
alone and times out beside other work, and a sample is dropped from one build and kept in
the next. A wall-clock net, well above it, stops programs that sleep or block. When the
caller is root (containers, CI) it also gets a private network namespace and an
unprivileged uid of its own, which can read but not write the machine's files, and every
process of that uid is killed when the run ends. A program passes only if it exits 0
*and* the launcher reports that it ran to its end (``sys.exit(0)`` before the tests is not
a pass).

The sandbox contains accidents and hostile test programs; it is not a boundary against an
adversary who targets this code (the program runs in the launcher's interpreter).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import itertools
import math
import os
import queue
import re
import secrets
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from srlib.execution import launcher as _launcher
from srlib.execution.forkserver import (
    LAUNCHER,
    ForkServer,
    ServerGone,
    ServerUnavailable,
    interpreter_flags,
    start_server,
)
from srlib.execution.progress import tqdm

Status = Literal["passed", "failed", "timeout", "memory", "crashed"]
_UID_BASE = 1_500_000_000
_uid_counter = itertools.count()
_uid_lock = threading.Lock()


@dataclass
class Limits:
    """Resource limits for one run."""

    timeout: float = 10.0  # CPU seconds the program may use (RLIMIT_CPU, whole seconds, rounded up)
    wall: float | None = None  # wall-clock seconds before the process group is killed (a program
    # that sleeps or blocks); None: ``3 × timeout + 5``, room for a CPU shared with other work

    def wall_seconds(self) -> float:
        """The wall-clock net: ``wall``, or three times the CPU limit and five seconds."""
        return self.wall if self.wall is not None else 3 * self.timeout + 5

    memory_mb: int = 2048  # address-space limit (RLIMIT_AS)
    file_mb: int = 16  # largest file the program may write, stdout/stderr included
    processes: int = 64  # processes + threads of the sandbox uid (enforced when root)
    stack_mb: int = 64  # main-thread stack: runaway C recursion crashes instead of swapping
    max_output: int = 10_000  # characters of stdout/stderr kept in the result


@dataclass
class ExecResult:
    """What happened to one program."""

    status: Status
    exit_code: int | None
    stdout: str
    stderr: str
    duration: float
    reason: str = ""
    isolation: dict[str, bool] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        """True when the program ran to its end and exited 0."""
        return self.status == "passed"


def _sandbox_uid() -> int | None:
    """A uid no other concurrent run uses, or None when we cannot switch users."""
    if os.geteuid() != 0:
        return None
    with _uid_lock:
        n = next(_uid_counter)
    return _UID_BASE + (os.getpid() % 100_000) * 1000 + n % 1000


def _env(work: Path, hash_seed: int | None) -> dict[str, str]:
    """A minimal environment: nothing of the caller's (no tokens, no keys) leaks in."""
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(work),
        "TMPDIR": str(work),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "MPLBACKEND": "Agg",
    }
    if hash_seed is not None:
        env["PYTHONHASHSEED"] = str(hash_seed)
    return env


def _wait(proc: subprocess.Popen, timeout: float) -> bool:
    """Wait for ``proc`` to exit; False on timeout. Uses a pidfd, so the exit is seen at once
    (``Popen.wait(timeout)`` polls with sleeps of up to 50 ms, most of a short run's cost)."""
    try:
        pidfd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        try:
            proc.wait(timeout=timeout)
            return True
        except subprocess.TimeoutExpired:
            return False
    try:
        ready, _, _ = select.select([pidfd], [], [], timeout)
    finally:
        os.close(pidfd)
    if ready:
        proc.wait()
    return bool(ready)


def _kill_all(pgid: int, uid: int | None) -> None:
    """Kill the run's process group and, when it had its own uid, every process of that uid."""
    for _ in range(20):
        found = False
        try:
            os.killpg(pgid, signal.SIGKILL)
            found = True
        except (ProcessLookupError, PermissionError):
            pass
        if uid is not None:
            for pid in _pids_of(uid):
                found = True
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        if not found:
            return
        time.sleep(0.01)


def _pids_of(uid: int) -> list[int]:
    """Process ids owned by ``uid`` (from /proc)."""
    pids = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    pids.append(int(entry.name))
            except FileNotFoundError:
                continue
    return pids


def _read(path: Path, limit: int) -> tuple[str, bool]:
    """The first ``limit`` characters of a file, and whether it was longer."""
    with path.open("rb") as fh:
        data = fh.read(limit * 4 + 4)
    text = data.decode("utf-8", errors="replace")
    return text[:limit], len(text) > limit or path.stat().st_size > len(data)


def _classify(
    code: int | None, timed_out: bool, report: str, nonce: str, stderr: str
) -> tuple[Status, str]:
    """Map exit code, timeout flag and launcher report to a status and a reason."""
    if timed_out:
        return "timeout", "wall-clock limit reached (the program waited or was starved of CPU)"
    if f"{nonce} memory" in report or (code == 1 and "MemoryError" in stderr[-2000:]):
        return "memory", "memory limit reached"
    if code is not None and code < 0:
        sig = -code
        if sig in (signal.SIGXCPU, signal.SIGKILL):
            return "timeout", f"CPU-time limit reached ({signal.Signals(sig).name})"
        if sig == signal.SIGXFSZ:
            return "failed", "file-size limit reached"
        return "crashed", f"killed by signal {signal.Signals(sig).name}"
    if f"{nonce} start" not in report:
        return "crashed", "the sandbox launcher failed before the program started"
    if code == 0:
        if f"{nonce} done" in report:
            return "passed", ""
        return "failed", "exited 0 before the program finished (early exit)"
    return "failed", f"exit code {code}"


def launch_spec(
    program: Path, nonce: str, report_fd: int, uid: int | None, isolate: bool, lim: Limits
) -> dict[str, object]:
    """The spec ``launcher.py`` runs one program by, checked here by the launcher's own
    ``read_spec`` before it is sent (and again by the launcher when it starts)."""
    spec = {
        "program": str(program),
        "nonce": nonce,
        "report_fd": report_fd,
        "uid": -1 if uid is None else uid,
        "isolate_network": bool(isolate),
        "cpu_seconds": max(1, math.ceil(lim.timeout)),
        "memory_bytes": lim.memory_mb * 2**20,
        "file_bytes": lim.file_mb * 2**20,
        "processes": lim.processes,
        "stack_bytes": lim.stack_mb * 2**20,
    }
    bad = [k for k, v in spec.items() if type(v) is int and v < (-1 if k == "uid" else 1)]
    if not lim.wall_seconds() > 0:
        bad.append(f"wall={lim.wall}")
    if bad:
        raise ValueError(f"invalid sandbox limits {bad}: {spec}")
    try:
        _launcher.read_spec(_launcher.encode_spec(spec))
    except SystemExit as e:
        raise ValueError(str(e)) from None
    return spec


def run_program(
    code: str,
    *,
    timeout: float | None = None,
    memory_mb: int | None = None,
    limits: Limits | None = None,
    isolate_network: bool = True,
    hash_seed: int | None = None,
    python: str = sys.executable,
    server: ForkServer | None = None,
) -> ExecResult:
    """Run ``code`` in the sandbox and classify the outcome, under ``limits`` (default
    ``Limits()``) with ``timeout`` and ``memory_mb``, where given, taking precedence.

    ``hash_seed`` fixes ``PYTHONHASHSEED`` (set iteration order of strings); it then runs
    ``python -s -P`` instead of ``-I``, because ``-I`` ignores that variable. ``server``: a
    fork server started with the same ``hash_seed`` and ``python`` runs it, instead of a
    fresh interpreter (``srlib.execution.forkserver``).
    """
    lim = limits or Limits()
    if timeout is not None:
        lim = dataclasses.replace(lim, timeout=timeout)
    if memory_mb is not None:
        lim = dataclasses.replace(lim, memory_mb=memory_mb)
    base = Path(tempfile.mkdtemp(prefix="srlib-sbx-"))
    uid = _sandbox_uid()
    nonce = secrets.token_hex(16)
    try:
        os.chmod(base, 0o711)
        work = base / "work"
        work.mkdir()
        if uid is not None:
            os.chown(work, uid, uid)
        os.chmod(work, 0o700)
        program = base / "program.py"
        program.write_text(code, encoding="utf-8")
        os.chmod(program, 0o600)
        out_path, err_path = base / "stdout", base / "stderr"
        start = time.perf_counter()
        if server is None:
            returncode, timed_out, report = _launched(
                program, nonce, uid, isolate_network, lim, work, hash_seed, python
            )
        else:
            try:
                returncode, timed_out, report = _served(
                    server, program, nonce, uid, isolate_network, lim, work, hash_seed
                )
            except ServerUnavailable:
                raise
            except ServerGone as e:
                stdout, _ = _read(out_path, lim.max_output) if out_path.exists() else ("", 0)
                stderr, _ = _read(err_path, lim.max_output) if err_path.exists() else ("", 0)
                duration = time.perf_counter() - start
                return ExecResult("crashed", None, stdout, stderr, duration, str(e), {})
        duration = time.perf_counter() - start
        stdout, out_cut = _read(out_path, lim.max_output)
        stderr, err_cut = _read(err_path, lim.max_output)
        status, reason = _classify(returncode, timed_out, report, nonce, stderr)
        if out_cut or err_cut:
            reason = (reason + "; " if reason else "") + "output truncated"
        started = re.search(rf"^{nonce} start net=(\d) uid=(\d)$", report, re.M)
        isolation = {
            "network": bool(started and started[1] == "1"),
            "uid": bool(started and started[2] == "1"),
        }
        return ExecResult(status, returncode, stdout, stderr, duration, reason, isolation)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _launched(program, nonce, uid, isolate, lim, work, hash_seed, python):
    """Run ``program`` in a fresh interpreter (``launcher.py``); (exit code, whether the
    wall-clock net stopped it, the launcher's report)."""
    base = program.parent
    read_fd, write_fd = os.pipe()
    try:
        spec = launch_spec(program, nonce, write_fd, uid, isolate, lim)
        flags = interpreter_flags(hash_seed)
        with (base / "stdout").open("wb") as out, (base / "stderr").open("wb") as err:
            proc = subprocess.Popen(
                [python, *flags, str(LAUNCHER), *_launcher.encode_spec(spec)],
                cwd=work,
                env=_env(work, hash_seed),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                pass_fds=(write_fd,),
                start_new_session=True,
            )
            os.close(write_fd)
            write_fd = -1
            timed_out = not _wait(proc, lim.wall_seconds())
            _kill_all(proc.pid, uid)
            proc.wait()
        os.set_blocking(read_fd, False)
        try:
            report = os.read(read_fd, 1 << 16).decode("utf-8", errors="replace")
        except BlockingIOError:
            report = ""
        return proc.returncode, timed_out, report
    finally:
        os.close(read_fd)
        if write_fd >= 0:
            os.close(write_fd)


def _served(server, program, nonce, uid, isolate, lim, work, hash_seed):
    """Run ``program`` in a child of the fork ``server``, under the same spec, limits and
    net as ``_launched``, its report in a file of its run; the same triple."""
    base = program.parent
    spec = launch_spec(program, nonce, _launcher.REPORT_FD, uid, isolate, lim)
    where = {"cwd": str(work), "stdout": str(base / "stdout"), "stderr": str(base / "stderr")}
    where["report"] = str(base / "report")
    code, timed_out = server.run(
        where,
        _env(work, hash_seed),
        _launcher.encode_spec(spec),
        lim.wall_seconds(),
        functools.partial(_kill_all, uid=uid),
    )
    report = b""
    with contextlib.suppress(FileNotFoundError), (base / "report").open("rb") as fh:
        report = fh.read(1 << 16)
    return code, timed_out, report.decode("utf-8", errors="replace")


def run_programs(
    codes: Sequence[str],
    *,
    workers: int | None = None,
    progress: bool | str = True,
    **kwargs: object,
) -> list[ExecResult]:
    """Run many programs in parallel, each in a sandbox of its own forked by one of
    ``workers`` fork servers (``srlib.execution.forkserver``; a server that ends is
    replaced); results keep the input order. ``kwargs`` are ``run_program``'s."""
    workers = workers or os.cpu_count() or 1
    desc = progress if isinstance(progress, str) else "sandbox"
    hash_seed, python = kwargs.get("hash_seed"), kwargs.get("python", sys.executable)
    idle: queue.SimpleQueue[ForkServer] = queue.SimpleQueue()
    started: list[ForkServer] = []

    def fresh() -> ForkServer:
        started.append(
            start_server(_env(Path(tempfile.gettempdir()), hash_seed), hash_seed, python)
        )
        return started[-1]

    def one(code: str) -> ExecResult:
        try:
            server = idle.get_nowait()
        except queue.Empty:
            server = fresh()
        try:
            result = run_program(code, server=server, **kwargs)
        except ServerUnavailable:  # the program never ran: once more, on a new server
            server = fresh()
            result = run_program(code, server=server, **kwargs)
        if server.alive:
            idle.put(server)
        return result

    try:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            results = pool.map(one, codes)
            return list(tqdm(results, total=len(codes), desc=desc, disable=not progress))
    finally:
        for server in started:
            server.close()
