"""Sandbox launcher: confine this interpreter, then run one untrusted program in it.

Run by ``srlib.execution.sandbox`` as ``python -I launcher.py KEY=VALUE ...``, one argument
for each key of ``SPEC`` below, exactly (``uid`` -1: keep the caller's; limits in seconds and
bytes; booleans ``true``/``false``); a spec that does not match is refused before anything
runs. It imports nothing from srlib, nor anything slow (startup is most of a short run's cost:
parsing the spec as JSON imported ``re`` and ``enum``, 40% of a trivial program's launch), and
reports on a private pipe:
``NONCE start net=N uid=N`` before the program runs and ``NONCE done`` only after it finished
without an exception, so an early ``sys.exit(0)`` or ``os._exit(0)`` never counts as passed.
"""

import ctypes
import os
import resource
import sys

SPEC = {
    "program": str,
    "nonce": str,
    "report_fd": int,
    "uid": int,
    "isolate_network": bool,
    "cpu_seconds": int,
    "memory_bytes": int,
    "file_bytes": int,
    "processes": int,
    "stack_bytes": int,
}

CLONE_NEWNET = 0x40000000
PR_SET_KEEPCAPS = 8
PR_SET_NO_NEW_PRIVS = 38
CAP_DAC_READ_SEARCH = 2
LINUX_CAPABILITY_VERSION_3 = 0x20080522


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def _isolate_network(libc) -> bool:
    """Move into a fresh network namespace (loopback down, no routes); needs root."""
    return os.geteuid() == 0 and libc.unshare(CLONE_NEWNET) == 0


def _drop_privileges(libc, uid: int) -> bool:
    """Become ``uid`` keeping only CAP_DAC_READ_SEARCH, so the interpreter can still read
    its own library wherever it is installed, but nothing can be written, deleted or
    signalled outside the sandbox and RLIMIT_NPROC applies."""
    if os.geteuid() != 0:
        return False
    libc.prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0)
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)
    header = (ctypes.c_uint32 * 2)(LINUX_CAPABILITY_VERSION_3, 0)
    keep = 1 << CAP_DAC_READ_SEARCH
    data = (ctypes.c_uint32 * 6)(keep, keep, 0, 0, 0, 0)
    if libc.capset(header, data) != 0:
        data = (ctypes.c_uint32 * 6)(0, 0, 0, 0, 0, 0)
        libc.capset(header, data)
    return True


def encode_spec(spec: dict) -> list:
    """The launcher's arguments for ``spec``: one ``KEY=VALUE`` each (what ``read_spec`` reads)."""
    text = lambda v: ("true" if v else "false") if type(v) is bool else str(v)  # noqa: E731
    return [f"{key}={text(value)}" for key, value in spec.items()]


def _value(key: str, text: str, kind: type):
    """``text`` as ``kind``; SystemExit naming ``key`` when it is not one."""
    if kind is bool and text in ("true", "false"):
        return text == "true"
    if kind is int and text.removeprefix("-").isdigit() and text.isascii():
        return int(text)
    if kind is str:
        return text
    raise SystemExit(f"srlib launcher: spec {key!r} must be {kind.__name__}: {text!r}")


def read_spec(argv: list) -> dict:
    """One ``KEY=VALUE`` argument per key of ``SPEC``, values of its types; SystemExit
    naming what is wrong otherwise (a missing, extra, repeated or mistyped key)."""
    spec: dict = {}
    for arg in argv:
        key, sep, text = arg.partition("=")
        if not sep or key not in SPEC or key in spec:
            raise SystemExit(
                f"srlib launcher: argument {arg[:80]!r} is not one KEY=VALUE of {sorted(SPEC)}"
            )
        spec[key] = _value(key, text, SPEC[key])
    missing = sorted(set(SPEC) - set(spec))
    if missing:
        raise SystemExit(f"srlib launcher: spec keys {missing} are missing")
    return spec


def main() -> None:
    """One program: from the arguments (``python -I launcher.py KEY=VALUE ...``), or, with
    ``--serve REQUESTS REPLIES``, one per request, each in a child forked from this
    interpreter (``serve`` returns only in such a child)."""
    if sys.argv[1:2] == ["--serve"]:
        spec = serve(int(sys.argv[2]), int(sys.argv[3]))
    else:
        spec = read_spec(sys.argv[1:])
    confine_and_run(spec)


def confine_and_run(spec: dict) -> None:
    """Read the program, confine this process by ``spec`` and run the program in it,
    reporting its start and its end on ``report_fd``."""
    program, nonce = spec["program"], spec["nonce"]
    uid_, cpu_s = spec["uid"], spec["cpu_seconds"]
    memory, file_size, stack = spec["memory_bytes"], spec["file_bytes"], spec["stack_bytes"]
    processes = spec["processes"]
    report = os.fdopen(spec["report_fd"], "w", buffering=1)
    with open(program, encoding="utf-8") as fh:
        source = fh.read()
    libc = _libc()
    net = spec["isolate_network"] and _isolate_network(libc)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 1))
    resource.setrlimit(resource.RLIMIT_FSIZE, (file_size, file_size))
    resource.setrlimit(resource.RLIMIT_STACK, (stack, stack))
    resource.setrlimit(resource.RLIMIT_NPROC, (processes, processes))
    uid = uid_ >= 0 and _drop_privileges(libc, uid_)
    libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    report.write(f"{nonce} start net={int(net)} uid={int(uid)}\n")
    sys.argv = [program]
    code = compile(source, program, "exec")
    del source, libc
    namespace = {"__name__": "__main__", "__builtins__": __builtins__}
    try:
        exec(code, namespace)
    except MemoryError:
        report.write(f"{nonce} memory\n")
        raise
    report.write(f"{nonce} done\n")
    report.close()


REPORT_FD = 3  # where a served child's report file is opened (the spec's ``report_fd``)


def serve(requests_fd: int, replies_fd: int) -> dict:
    """The fork server: for each request line (NUL-separated ``cwd=``, ``stdout=``,
    ``stderr=``, ``report=``, ``env:KEY=VALUE`` and the spec's ``KEY=VALUE`` fields) fork a
    child, reply ``pid N``, reap it and reply ``exit CODE`` (``-SIGNAL`` when a signal ended
    it; the caller then kills what is left of its process group, as after a launcher). In the
    child, return the request's spec with its files in place: ``main`` then confines and
    runs the program exactly as a launcher started for it alone. A malformed request ends
    the server (the caller restarts one); end of input ends it too."""
    requests = os.fdopen(requests_fd, "rb")
    replies = os.fdopen(replies_fd, "w", buffering=1)
    for line in requests:
        fields = line.rstrip(b"\n").decode("utf-8").split("\0")
        where = dict(f.split("=", 1) for f in fields[:4])
        env = dict(f[4:].split("=", 1) for f in fields if f.startswith("env:"))
        spec = read_spec([f for f in fields[4:] if not f.startswith("env:")])
        if spec["report_fd"] != REPORT_FD or sorted(where) != ["cwd", "report", "stderr", "stdout"]:
            raise SystemExit(f"srlib launcher: a malformed request: {fields[:5]}")
        pid = os.fork()
        if pid == 0:
            requests.close()
            replies.close()
            _child_files(where)
            os.environ.clear()
            os.environ.update(env)
            return spec
        replies.write(f"pid {pid}\n")
        _, status = os.waitpid(pid, 0)
        replies.write(f"exit {os.waitstatus_to_exitcode(status)}\n")
    raise SystemExit(0)


def _child_files(where: dict) -> None:
    """A served child's session, directory and descriptors: its own session and process
    group, the run's working directory, stdin from /dev/null, stdout and stderr to the run's
    files, the report file on ``REPORT_FD``, and nothing else of the server's open."""
    os.setsid()
    os.chdir(where["cwd"])
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
    fds = [
        os.open(os.devnull, os.O_RDONLY),
        os.open(where["stdout"], flags, 0o600),
        os.open(where["stderr"], flags, 0o600),
        os.open(where["report"], flags, 0o600),
    ]
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    os.closerange(REPORT_FD + 1, os.sysconf("SC_OPEN_MAX"))


if __name__ == "__main__":
    main()
