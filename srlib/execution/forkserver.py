"""A fork server for the sandbox: one interpreter started once (``launcher.py --serve``) forks
a child per program, and the child confines itself and runs the program exactly as a launcher
started for it alone (``launcher.confine_and_run``): the same limits, uid, network namespace,
session, working directory, environment and report. What a run no longer pays is an
interpreter's start (most of a short program's cost), which also no longer counts against its
CPU and wall-clock limits. What a program could see differ from a fresh launcher: its parent
is the server (root, when the server is), and the programs one server forks share its
string-hash secret, where each fresh interpreter drew its own (pass ``hash_seed`` where an
order of strings matters; a server is started per ``hash_seed``). ``sandbox.run_programs``
runs its batches on a pool of them; ``sandbox.run_program`` alone starts a fresh
interpreter, the reference that ``tests/test_sandbox.py`` holds both to."""

from __future__ import annotations

import os
import select
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from srlib.execution import launcher as _launcher

LAUNCHER = Path(_launcher.__file__)


class ServerGone(RuntimeError):
    """The server ended while it ran a program (a program of the same uid may kill it)."""


class ServerUnavailable(ServerGone):
    """The server could not start a program (it had ended, or did not answer): the program
    never ran, and another server may run it."""


REPLY_SECONDS = 60.0  # how long a server may take to fork a child and say so


class ForkServer:
    """One ``launcher.py --serve`` process: ``run`` one program at a time."""

    def __init__(self, python: str, flags: list[str], env: dict[str, str]) -> None:
        requests_read, self._requests = os.pipe()
        self._replies, replies_write = os.pipe()
        self._home = tempfile.mkdtemp(prefix="srlib-forkserver-")
        try:
            self.proc = subprocess.Popen(
                [python, *flags, str(LAUNCHER), "--serve", str(requests_read), str(replies_write)],
                cwd=self._home,
                env={**env, "HOME": self._home, "TMPDIR": self._home},
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                pass_fds=(requests_read, replies_write),
                start_new_session=True,
            )
        except BaseException:
            for fd in (self._requests, self._replies):
                os.close(fd)
            shutil.rmtree(self._home, ignore_errors=True)
            raise
        finally:
            os.close(requests_read)
            os.close(replies_write)
        self._buffer = b""

    @property
    def alive(self) -> bool:
        """Whether it still takes requests (not closed, not ended)."""
        return self._requests >= 0 and self.proc.poll() is None

    def _line(self, timeout: float | None) -> str | None:
        """The next reply line; None once ``timeout`` seconds pass without one."""
        while b"\n" not in self._buffer:
            ready, _, _ = select.select([self._replies], [], [], timeout)
            if not ready:
                return None
            chunk = os.read(self._replies, 4096)
            if not chunk:
                raise ServerGone("the sandbox's fork server ended")
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode()

    def start(self, where: dict[str, str], env: dict[str, str], spec_args: list[str]) -> int:
        """Send one program's request; the forked child's pid."""
        fields = [f"{k}={where[k]}" for k in ("cwd", "stdout", "stderr", "report")]
        fields += [f"env:{k}={v}" for k, v in env.items()] + spec_args
        if any(("\0" in f or "\n" in f) for f in fields):
            raise ValueError(f"a request field holds a NUL or a newline: {fields}")
        try:
            os.write(self._requests, ("\0".join(fields) + "\n").encode())
            kind, _, pid = (self._line(REPLY_SECONDS) or "").partition(" ")
        except (OSError, ServerGone) as e:
            raise ServerUnavailable(f"the fork server did not start the program ({e})") from e
        if kind != "pid":
            raise ServerUnavailable(f"the fork server answered {kind!r} to a request")
        return int(pid)

    def wait(self, timeout: float) -> int | None:
        """The child's exit code (``-SIGNAL`` when a signal ended it; the server has reaped
        it); None once ``timeout`` seconds pass first."""
        line = self._line(timeout)
        if line is None:
            return None
        kind, _, code = line.partition(" ")
        if kind != "exit":
            raise ServerGone(f"the fork server answered {kind!r}")
        return int(code)

    def run(self, where, env, spec_args, wall: float, kill) -> tuple[int, bool]:
        """One program: (its exit code, whether the wall-clock net of ``wall`` seconds stopped
        it); ``kill(pid)`` kills what is left of its process group once it ended or the net
        fell. ``ServerUnavailable``: it never started; ``ServerGone``: the server ended while
        it ran (what is left of it killed); either way this server is closed."""
        pid = None
        try:
            pid = self.start(where, env, spec_args)
            code = self.wait(wall)
            timed_out = code is None
            kill(pid)
            if timed_out:
                code = self.wait(wall)
                if code is None:
                    raise ServerGone("the fork server did not see its killed child end")
                kill(pid)
            return code, timed_out
        except (ServerGone, OSError) as e:
            self.close()
            if pid is None:
                raise ServerUnavailable(str(e)) from e
            kill(pid)
            raise ServerGone(f"the sandbox's fork server ended while the program ran ({e})") from e

    def close(self) -> None:
        """End the server (end of its input) and remove its home."""
        if self._requests < 0:
            return
        for fd in (self._requests, self._replies):
            os.close(fd)
        self._requests = self._replies = -1
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self._home, ignore_errors=True)


def interpreter_flags(hash_seed: int | None) -> list[str]:
    """How a launcher or a server is started: ``-I``, or ``-s -P`` where ``PYTHONHASHSEED``
    fixes the hash secret (``-I`` ignores that variable)."""
    return ["-I"] if hash_seed is None else ["-s", "-P"]


def start_server(env: dict[str, str], hash_seed: int | None, python: str = sys.executable):
    """A server started as ``run_program`` starts a launcher."""
    return ForkServer(python, interpreter_flags(hash_seed), env)
