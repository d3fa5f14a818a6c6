"""The fork server runs each program as a fresh launcher would, and one program's run leaves
nothing to the next (``tests/test_sandbox.py`` runs every hostile program both ways)."""

import os

from srlib.benchmarks import load_benchmark
from srlib.execution.sandbox import run_program, run_programs


def served(codes, **kw):
    """``codes`` through one fork server, in order."""
    return run_programs(codes, workers=1, progress=False, **{"timeout": 5.0, **kw})


def test_a_run_leaves_nothing_to_the_next():
    first, second = served(
        [
            "import sys, os\nsys.marker = 1\nos.environ['MARK'] = '1'\nopen('left', 'w')",
            "import sys, os\nassert not hasattr(sys, 'marker') and 'MARK' not in os.environ\n"
            "assert not os.path.exists('left') and os.listdir('.') == []",
        ]
    )
    assert first.passed and second.passed, second.stderr


def test_a_served_program_gets_the_environment_a_launched_one_gets():
    code = "import os\nprint(sorted(os.environ.items()), os.getcwd())"
    (forked,), launched = served([code]), run_program(code, timeout=5.0)
    assert forked.passed and launched.passed
    env, cwd = forked.stdout.rsplit(" ", 1)
    assert f"('HOME', '{cwd.strip()}')" in env and f"('TMPDIR', '{cwd.strip()}')" in env
    other_cwd = launched.stdout.rsplit(" ", 1)[1].strip()
    assert env == launched.stdout.rsplit(" ", 1)[0].replace(other_cwd, cwd.strip())


def test_a_served_program_holds_only_its_own_descriptors():
    (r,) = served(["import os\nprint(sorted(int(f) for f in os.listdir('/proc/self/fd')))"])
    assert r.passed and r.stdout.strip() in ("[0, 1, 2, 3]", "[0, 1, 2, 3, 4]")  # 4: listdir's


def test_a_program_that_kills_its_server_ends_itself_and_not_the_batch():
    kill = "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\nimport time\ntime.sleep(5)"
    results = served([kill, "print('after')", kill, "print('again')"])
    if os.geteuid() == 0:  # another uid: it may not signal the server
        assert results[0].status == "failed" and "PermissionError" in results[0].stderr
    else:
        assert results[0].status == "crashed" and "fork server" in results[0].reason
    assert [r.stdout for r in results[1::2]] == ["after\n", "again\n"]


def test_served_and_launched_runs_agree_on_benchmark_programs():
    """HumanEval's first 20 reference solutions, and each with a broken test, both ways."""
    samples = load_benchmark("humaneval")[:20]
    codes = [s.program() for s in samples]
    codes += [c + "\nassert False, 'broken'\n" for c in codes]
    launched = [run_program(c, timeout=30.0) for c in codes]
    forked = run_programs(codes, workers=2, progress=False, timeout=30.0)
    assert [(r.status, r.exit_code, r.stdout) for r in forked] == [
        (r.status, r.exit_code, r.stdout) for r in launched
    ]
    assert sum(r.passed for r in forked) == 20


def test_a_server_that_ends_mid_run_is_replaced(monkeypatch):
    import threading
    import time

    import srlib.execution.sandbox as sandbox

    started, original = [], sandbox.start_server

    def recording(*args, **kwargs):
        started.append(original(*args, **kwargs))
        return started[-1]

    monkeypatch.setattr(sandbox, "start_server", recording)

    def kill_once_running():
        while not started:
            time.sleep(0.05)
        time.sleep(1.0)  # the first program is asleep by now
        started[0].proc.kill()

    threading.Thread(target=kill_once_running).start()
    results = served(["import time\ntime.sleep(6)", "print('next')"])
    assert results[0].status == "crashed" and "fork server" in results[0].reason
    assert results[1].stdout == "next\n" and len(started) == 2


def test_a_program_whose_server_had_ended_runs_on_a_new_one(monkeypatch):
    import srlib.execution.sandbox as sandbox

    started, original = [], sandbox.start_server

    def first_ends(*args, **kwargs):
        started.append(original(*args, **kwargs))
        if len(started) == 1:
            started[0].proc.kill()
            started[0].proc.wait()
        return started[-1]

    monkeypatch.setattr(sandbox, "start_server", first_ends)
    results = served(["print('ran')", "print('too')"])
    assert [r.stdout for r in results] == ["ran\n", "too\n"] and len(started) == 2
