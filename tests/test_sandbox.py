"""The sandbox classifies outcomes and contains hostile programs without harming the caller."""

import os
import socket
import textwrap
import time
from pathlib import Path

import pytest

from srlib.execution.sandbox import Limits, run_program, run_programs

IS_ROOT = os.geteuid() == 0
needs_root = pytest.mark.skipif(
    not IS_ROOT, reason="uid separation and network namespaces need root (CI runs as root)"
)


def launched(code, **kw):
    """``code`` in a fresh interpreter (``run_program`` alone: the reference)."""
    return run_program(textwrap.dedent(code), **{"timeout": 5.0, **kw})


def served(code, **kw):
    """``code`` in a child of a fork server (the way ``run_programs`` runs every batch)."""
    return run_programs(
        [textwrap.dedent(code)], workers=1, progress=False, **{"timeout": 5.0, **kw}
    )[0]


@pytest.fixture(params=[launched, served], ids=["launched", "served"])
def run(request):
    """Each test's programs both ways: the fork server must classify and contain as the
    launcher does."""
    return request.param


def test_passing_program_reports_output(run):
    r = run("print('hello')")
    assert (r.status, r.exit_code, r.stdout) == ("passed", 0, "hello\n")
    assert r.passed and r.duration > 0


def test_failing_assert_is_failed_with_traceback(run):
    r = run("assert 1 + 1 == 3")
    assert r.status == "failed" and r.exit_code == 1
    assert "AssertionError" in r.stderr


def test_syntax_error_is_failed(run):
    assert run("def f(:\n  pass").status == "failed"


@pytest.mark.parametrize(
    "exit_call", ["import sys; sys.exit(0)", "import os; os._exit(0)", "exit()"]
)
def test_early_exit_zero_is_not_a_pass(run, exit_call):
    r = run(f"{exit_call}\nassert False, 'tests never ran'")
    assert r.exit_code == 0
    assert r.status == "failed" and "early exit" in r.reason


def test_infinite_loop_times_out_quickly(run):
    start = time.perf_counter()
    r = run("while True:\n    pass", timeout=1.0)
    assert r.status == "timeout" and "CPU-time" in r.reason
    assert time.perf_counter() - start < Limits(timeout=1.0).wall_seconds()


BUSY = "import time\nt = time.process_time()\nwhile time.process_time() - t < {}:\n    pass"


def test_time_spent_waiting_is_not_cpu_time(run):
    r = run("import time\ntime.sleep(2.5)", timeout=1.0)
    assert r.passed and r.duration > 2.5


def test_a_program_sharing_the_cpu_passes_as_it_does_alone():
    """Three programs needing 0.6 s of CPU each, under a 1 s limit, share one core (pinned, on
    any machine): each passes, though the crowd keeps them over a second on the clock, where a
    wall-clock limit would drop them."""
    saved = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(saved)})  # the pool's threads and their programs inherit it
    try:
        results = run_programs([BUSY.format(0.6)] * 3, workers=3, progress=False, timeout=1.0)
    finally:
        os.sched_setaffinity(0, saved)
    assert all(r.passed for r in results), {r.reason for r in results}
    assert max(r.duration for r in results) > 1.0


def test_a_program_that_sleeps_past_the_wall_clock_net_times_out_naming_it(run):
    r = run("import time\ntime.sleep(30)", limits=Limits(timeout=1.0, wall=1.5), timeout=1.0)
    assert r.status == "timeout" and "wall-clock" in r.reason and r.duration < 10


def test_the_wall_clock_net_is_well_above_the_cpu_limit_unless_given():
    assert Limits(timeout=10.0).wall_seconds() == 35.0
    assert Limits(timeout=10.0, wall=2.0).wall_seconds() == 2.0
    with pytest.raises(ValueError, match="wall"):
        run_program("pass", limits=Limits(wall=0.0))


def test_sleeping_child_process_is_killed_with_the_group(run):
    r = run(
        """
        import subprocess, sys
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        import time; time.sleep(60)
        """,
        timeout=1.0,
        limits=Limits(wall=1.0),
    )
    assert r.status == "timeout" and "wall-clock" in r.reason


def test_fork_bomb_is_contained(run):
    r = run(
        """
        import os
        while True:
            try:
                os.fork()
            except OSError:
                pass
        """,
        timeout=2.0,
        limits=Limits(timeout=2.0, processes=32, wall=2.0),
    )
    assert r.status in {"timeout", "failed"}
    assert run("print(1)").passed  # the caller can still start programs
    if IS_ROOT:  # no process of the run is still alive (zombies wait for init to reap them)
        assert _live_sandbox_processes() == []


def _live_sandbox_processes():
    """Pids of processes owned by this test process's sandbox uids that are not zombies
    (another test worker's sandboxes may be running beside)."""
    from srlib.execution.sandbox import _UID_BASE

    first = _UID_BASE + (os.getpid() % 100_000) * 1000
    live = []
    for entry in os.scandir("/proc"):
        try:
            if entry.name.isdigit() and first <= entry.stat().st_uid < first + 1000:
                stat = Path(f"/proc/{entry.name}/stat").read_text()
                state = stat.rsplit(")", 1)[1].split()[0]
                live += [] if state in "ZX" else [int(entry.name)]
        except (FileNotFoundError, ProcessLookupError, IndexError):
            continue
    return live


def test_the_launcher_refuses_a_spec_that_breaks_the_contract(tmp_path):
    import subprocess
    import sys

    from srlib.execution.launcher import encode_spec, read_spec
    from srlib.execution.sandbox import LAUNCHER, launch_spec

    program = tmp_path / "p.py"
    program.write_text("open('ran', 'w').write('yes')\n")
    spec = launch_spec(program, "n0nce", 1, None, False, Limits())
    assert read_spec(encode_spec(spec)) == spec  # the round trip, types included
    args = encode_spec(spec)
    for bad, named in (
        ([a for a in args if not a.startswith("memory_bytes=")], "memory_bytes"),
        ([*args[:-1], "stack_bytes=10e6"], "stack_bytes"),
        ([*args[:-1], "stack_bytes=٣"], "stack_bytes"),  # a digit, but not an ASCII one
        ([*args, "extra=1"], "extra"),
        ([*args, args[0]], "program"),  # a key given twice
        ([a.replace("isolate_network=false", "isolate_network=0") for a in args], "isolate"),
    ):
        done = subprocess.run(
            [sys.executable, "-I", str(LAUNCHER), *bad],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert done.returncode != 0 and named in done.stderr, (bad, done.stderr)
        assert not (tmp_path / "ran").exists()
    with pytest.raises(ValueError, match="memory_bytes"):
        launch_spec(program, "n0nce", 1, None, False, Limits(memory_mb=0))


def test_allocating_10_gb_is_a_memory_error(run):
    r = run("x = bytearray(10 * 2**30)", memory_mb=512)
    assert r.status == "memory"


@needs_root
def test_deleting_a_file_outside_the_temp_dir_fails(run, tmp_path):
    victim = tmp_path / "precious.txt"
    victim.write_text("keep me")
    os.chmod(tmp_path, 0o755)
    r = run(f"import os\nos.remove({str(victim)!r})")
    assert r.status == "failed" and "PermissionError" in r.stderr
    assert victim.read_text() == "keep me"


def test_files_written_in_the_temp_dir_are_removed(run):
    r = run("import os\nopen('out.txt', 'w').write('x')\nprint(os.getcwd())")
    assert r.passed
    assert not os.path.exists(r.stdout.strip())


@needs_root
def test_network_connection_is_refused(run):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]
    try:
        r = run(f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=2)")
    finally:
        server.close()
    assert r.status == "failed"
    assert "Network is unreachable" in r.stderr or "Connection refused" in r.stderr
    assert r.isolation["network"]


def test_stdout_flood_is_truncated_and_bounded(run):
    r = run("while True:\n    print('x' * 1000)", limits=Limits(timeout=5.0, file_mb=1))
    assert r.status in {"failed", "timeout"}
    assert len(r.stdout) <= Limits().max_output
    assert "output truncated" in r.reason


def test_segfault_is_crashed(run):
    r = run("import ctypes\nctypes.string_at(0)")
    assert r.status == "crashed" and "SIGSEGV" in r.reason


def test_unbounded_recursion_is_contained(run):
    r = run("def f(n):\n    return f(n + 1)\nf(0)")
    assert r.status == "failed" and "RecursionError" in r.stderr
    deep = "import sys\nsys.setrecursionlimit(10**9)\ndef f(n):\n    return f(n + 1)\nf(0)"
    r = run(deep, memory_mb=256, timeout=5.0)
    assert r.status in {"failed", "memory", "crashed", "timeout"}
    assert run("print(1)").passed


def test_secret_environment_variables_do_not_leak(run, monkeypatch):
    monkeypatch.setenv("SRLIB_TEST_API_KEY", "sk-secret-value-123")
    r = run(
        """
        import os
        print(sorted(os.environ.items()))
        try:
            print(open(f"/proc/{os.getppid()}/environ", "rb").read())
        except OSError as e:
            print("blocked", e.errno)
        """
    )
    assert r.passed
    assert "sk-secret-value-123" not in r.stdout
    assert "SRLIB_TEST_API_KEY" not in r.stdout


@needs_root
def test_program_runs_as_unprivileged_user(run):
    r = run("import os\nprint(os.getuid())")
    assert r.passed and int(r.stdout) != 0 and r.isolation["uid"]


def test_batch_keeps_order_and_runs_in_parallel():
    codes = [f"print({i})" for i in range(12)] + ["raise SystemExit(3)"]
    results = run_programs(codes, workers=2, progress=False, timeout=5.0)
    assert [r.stdout for r in results[:-1]] == [f"{i}\n" for i in range(12)]
    assert results[-1].status == "failed" and results[-1].exit_code == 3


def test_hash_seed_makes_string_sets_deterministic(run):
    code = "print(list({'alpha', 'beta', 'gamma', 'delta', 'epsilon'}))"
    outs = {run(code, hash_seed=0).stdout for _ in range(3)}
    assert len(outs) == 1


def test_an_explicit_timeout_overrides_the_limits_it_is_given_with():
    r = run_program("while True:\n    pass", timeout=1.0, limits=Limits(timeout=60.0))
    assert r.status == "timeout" and "CPU-time" in r.reason and r.duration < 20
