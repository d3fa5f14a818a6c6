"""Benchmark samples: one record type for every benchmark, and JSONL in/out."""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from srlib.errors import InputError
from srlib.jsonl import iter_jsonl
from srlib.store import atomic_path

Format = Literal["completion", "standalone", "stdio"]
FORMATS: tuple[str, ...] = ("completion", "standalone", "stdio")
TEXT_FIELDS: tuple[str, ...] = ("prompt", "solution", "tests")


class SampleFormatError(InputError):
    """A sample record (or a JSONL line holding one) is malformed."""


@dataclass
class Sample:
    """One benchmark problem with its reference solution and its tests.

    ``format`` says how ``program()`` assembles the code that is executed:

    - ``completion``: the solution completes the prompt (HumanEval, BigCodeBench):
      program = prompt + solution + setup + tests + runner.
    - ``standalone``: the solution is a whole program, the prompt is prose (MBPP):
      program = solution + setup + tests + runner.
    - ``stdio``: the solution reads stdin and writes stdout (APPS); ``tests`` is a JSON
      list of ``[input, expected_output]`` pairs, checked by a generated harness.

    ``setup`` is test set-up code run between the solution and the tests (MBPP's
    ``test_setup_code``, which builds objects of classes the solution defines). ``tests`` keep
    the benchmark's published form; ``runner`` is what the benchmark's own harness appends
    to run them, with ``{entry_point}`` standing for the entry point's current name
    (HumanEval: ``check({entry_point})``; BigCodeBench: its unittest runner).
    ``text`` is the surface form a model is scored on: the fields named in
    ``text_fields`` joined by ``text_sep`` (prompt + solution by default).
    """

    id: str
    benchmark: str
    prompt: str
    solution: str
    tests: str
    entry_point: str = ""
    runner: str = ""
    format: Format = "completion"
    setup: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    text_fields: tuple[str, ...] = ("prompt", "solution")
    text_sep: str = ""

    def __post_init__(self) -> None:
        names = ("id", "benchmark", "prompt", "solution", "tests", "entry_point", "runner", "setup")
        for name in names:
            if not isinstance(getattr(self, name), str):
                raise SampleFormatError(f"sample {self.id!r}: field {name!r} must be a string")
        if self.format not in FORMATS:
            raise SampleFormatError(
                f"sample {self.id!r}: format {self.format!r} is not one of {FORMATS}"
            )
        self.text_fields = tuple(self.text_fields)
        unknown = [f for f in self.text_fields if f not in TEXT_FIELDS]
        if unknown or not self.text_fields:
            raise SampleFormatError(
                f"sample {self.id!r}: text_fields {self.text_fields!r} must be a non-empty "
                f"subset of {TEXT_FIELDS}"
            )
        if not isinstance(self.metadata, dict):
            raise SampleFormatError(f"sample {self.id!r}: metadata must be a JSON object")

    @property
    def text(self) -> str:
        """The text a model is scored on: ``text_fields`` joined by ``text_sep``."""
        return self.text_sep.join(getattr(self, f) for f in self.text_fields)

    @property
    def code(self) -> str:
        """The complete solution code (prompt included when the solution completes it)."""
        return self.prompt + self.solution if self.format == "completion" else self.solution

    def program(self) -> str:
        """A Python program that exits 0 if and only if the solution passes the tests."""
        if self.format == "stdio":
            return stdio_program(_join(self.solution, self.setup), self.tests)
        runner = self.runner.replace("{entry_point}", self.entry_point)
        return _join(_join(_join(self.code, self.setup), self.tests), runner)

    def with_text_fields(self, *fields: str, sep: str | None = None) -> Sample:
        """A copy scored on other fields, e.g. ``("solution",)`` for code-only scoring."""
        return dataclasses.replace(
            self, text_fields=fields, text_sep=self.text_sep if sep is None else sep
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable dict of every field."""
        d = dataclasses.asdict(self)
        d["text_fields"] = list(self.text_fields)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Sample:
        """Build a sample from a dict; unknown or missing keys are a ``SampleFormatError``."""
        if not isinstance(d, dict):
            raise SampleFormatError(f"expected a JSON object, got {type(d).__name__}")
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(d) - names)
        if unknown:
            raise SampleFormatError(f"unknown field(s) {unknown}")
        missing = [n for n in ("id", "benchmark", "prompt", "solution", "tests") if n not in d]
        if missing:
            raise SampleFormatError(f"missing field(s) {missing}")
        return cls(**d)


def _join(first: str, second: str) -> str:
    """Concatenate two code blocks with a newline between them when needed."""
    if not first:
        return second
    if not second:
        return first
    return first + ("" if first.endswith("\n") else "\n") + second


def write_jsonl(samples: Iterable[Sample], path: str | os.PathLike[str]) -> Path:
    """Write samples as JSONL atomically (complete or absent, never half-written)."""
    path = Path(path)
    with atomic_path(path) as tmp, tmp.open("w", encoding="utf-8") as fh:
        for s in samples:
            fh.write(json.dumps(s.to_dict(), ensure_ascii=False) + "\n")
    return path


def read_jsonl(path: str | os.PathLike[str], record_type: type[Sample] | None = None) -> list:
    """Read samples (or ``record_type`` records, e.g. ``Variant``) from JSONL; a bad line
    raises ``SampleFormatError`` naming file and line."""
    record_type = record_type or Sample
    samples = []
    for lineno, record in iter_jsonl(path, SampleFormatError):
        try:
            samples.append(record_type.from_dict(record))
        except (SampleFormatError, TypeError) as e:
            raise SampleFormatError(f"{path}:{lineno}: {e}") from e
    return samples


# --- generated test harnesses for benchmarks whose tests are data, not code (APPS) ---

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
