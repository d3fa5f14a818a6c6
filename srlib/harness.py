"""Generated test harnesses for benchmarks whose tests are data, not code (APPS)."""

from __future__ import annotations

import json
from typing import Any

_STDIO = '''\
import contextlib as _cl, io as _io, json as _json, sys as _sys

_SOLUTION = {solution!r}
_CASES = _json.loads({cases!r})


def _tokens(text):
    """Output compared line by line, whitespace-insensitive, trailing blank lines ignored."""
    return [line.split() for line in text.rstrip().splitlines()]


_code = compile(_SOLUTION, "<solution>", "exec")
for _i, (_inp, _want) in enumerate(_CASES):
    _sys.stdin = _io.StringIO(_inp)
    _out = _io.StringIO()
    with _cl.redirect_stdout(_out):
        try:
            exec(_code, {{"__name__": "__main__"}})
        except SystemExit as _e:
            if _e.code not in (None, 0):
                raise AssertionError(f"case {{_i}}: exited with {{_e.code!r}}") from None
    if _tokens(_out.getvalue()) != _tokens(_want):
        raise AssertionError(f"case {{_i}}: wrong output")
_sys.stdin = _sys.__stdin__
'''

_CALL = '''\
import json as _json

_CASES = _json.loads({cases!r})


def _same(got, want):
    """APPS convention: tuples compare as lists; expected values may be wrapped in a list."""
    got = list(got) if isinstance(got, tuple) else got
    return got == want or (isinstance(want, list) and len(want) == 1 and got == want[0])


_fn = {target}
for _i, (_args, _want) in enumerate(_CASES):
    _got = _fn(*_args)
    if not _same(_got, _want):
        raise AssertionError(f"case {{_i}}: wrong result")
'''


def stdio_program(solution: str, tests: str) -> str:
    """A program that runs a stdin/stdout solution on each ``[input, output]`` case in ``tests``.

    The solution is executed in-process once per case with ``sys.stdin``/``sys.stdout``
    replaced, so it must read input through ``input()`` or ``sys.stdin`` (not fd 0).
    """
    cases = json.loads(tests)
    if not isinstance(cases, list) or not all(
        isinstance(c, list) and len(c) == 2 and all(isinstance(x, str) for x in c) for c in cases
    ):
        raise ValueError("stdio tests must be a JSON list of [input, output] string pairs")
    return _STDIO.format(solution=solution, cases=tests)


def call_tests(fn_name: str, cases: list[tuple[list[Any], Any]], in_class: bool = False) -> str:
    """Test code that calls ``fn_name(*args)`` (a ``Solution`` method if ``in_class``) per case."""
    if not fn_name.isidentifier():
        raise ValueError(f"fn_name {fn_name!r} is not a Python identifier")
    target = f"Solution().{fn_name}" if in_class else fn_name
    return _CALL.format(cases=json.dumps([[list(a), w] for a, w in cases]), target=target)
