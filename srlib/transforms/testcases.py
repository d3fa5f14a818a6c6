"""Test-case transformation (τt): new inputs for a sample's tests, outputs from its own solution.

A *case* is one call of the function under test with literal arguments and a literal
expected value: an ``assert`` in the hidden tests (``== y``, ``is True``, ``abs(f(x) - y) <
tol``, ``math.isclose(f(x), y)``, a wrapper such as ``set(f(x)) == {...}``, or a bare
truth test), or an example in the prompt (``>>> f(x)`` with its output line, ``f(x) == y``,
``f(x) ➞ y``, ``f(x) -> y`` ...; MBPP prompts list the asserts themselves). Each case gets
mutated arguments (``mutate``); the expected value comes from running the **original**
solution on them in the sandbox, and inputs that raise or time out are dropped. Only the
argument and expected-value spans change; every other byte stays (so literals written over
several lines are left as they are).

Plans and cases are immutable values: ``mutations`` lists the inputs to try,
``evaluation_program`` turns them into a program, and ``read_evaluations`` returns a *new*
plan with each case's evaluated candidates; each candidate's evaluation may use ``CASE_CPU_SECONDS``
of CPU (``ITIMER_PROF``: the same under any load) and ``CASE_WALL_SECONDS`` on the clock, the net
for a case that sleeps or spins in a thread of its own. A prompt quotation of a hidden case (MBPP)
refers to it by index (``mirror_of``), so copies of a plan behave exactly like the original.
"""

from __future__ import annotations

import ast
import json
import random
import re
import warnings
from dataclasses import dataclass, replace
from typing import Any

from srlib.codetext import NEWLINE, char_offset, line_starts
from srlib.samples import Sample
from srlib.transforms.edits import Edit
from srlib.transforms.mutate import Style, mutate_args, render

CALL_SLOT = "__srlib_call__"
_SEP = re.compile(r"\s*(?:==>|==|➞|->|=>|→|should return|returns|=)\s*")


Candidate = tuple[tuple[Any, ...], str | None, bool | None]
"""Mutated arguments, repr of the original solution's result (None: failed), truthiness."""
Mutations = tuple[tuple[int, tuple[Any, ...]], ...]
"""(case index, mutated arguments) per evaluation, in the order the program runs them."""


@dataclass(frozen=True)
class Case:
    """One call with literal arguments and (unless a truth test) a literal expected value."""

    field: str
    args: tuple[Any, ...]
    arg_spans: tuple[tuple[int, int], ...]
    arg_styles: tuple[Style, ...]
    keywords: tuple[str | None, ...]  # keyword name per argument, None for positional
    template: str  # expression to evaluate, CALL_SLOT standing for the call
    expected_span: tuple[int, int] | None
    expected_style: Style
    mode: str  # "value", "truthy" or "falsy"
    mirror_of: int | None = None  # a prompt quotation of the hidden case at this index
    candidates: tuple[Candidate, ...] = ()  # evaluated mutations (``read_evaluations``)

    @property
    def mirror(self) -> bool:
        """Whether this case quotes a hidden case (and so takes that case's inputs)."""
        return self.mirror_of is not None


@dataclass(frozen=True)
class TestPlan:
    """The transformable cases of a sample, or why there are none."""

    cases: tuple[Case, ...]
    reason: str = ""


def _char_offsets(text: str):
    starts = line_starts(text)
    return lambda line, col_bytes: char_offset(text, starts, line, col_bytes)


def _span(node: ast.AST, offset) -> tuple[int, int]:
    return offset(node.lineno, node.col_offset), offset(node.end_lineno, node.end_col_offset)


def _literal(node: ast.AST) -> tuple[bool, Any]:
    try:
        return True, ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None


def _target_call(node: ast.AST, targets: set[str]) -> ast.Call | None:
    calls = [
        n
        for n in ast.walk(node)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in targets
    ]
    if len(calls) != 1:
        return None
    call = calls[0]
    values = list(call.args) + [k.value for k in call.keywords]
    if any(isinstance(a, ast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords
    ):
        return None
    if not all(_literal(v)[0] for v in values):
        return None
    return call


def _case(text, fld, call, template_node, expected, mode, offset) -> Case | None:
    """Build a case from a target call, the expression around it, and the expected node."""
    values = list(call.args) + [k.value for k in call.keywords]
    spans = [_span(v, offset) for v in values]
    if not values:
        return None
    start, end = _span(template_node, offset)
    cstart, cend = _span(call, offset)
    template = text[start:cstart] + CALL_SLOT + text[cend:end]
    exp_span = _span(expected, offset) if expected is not None else None
    exp_src = text[exp_span[0] : exp_span[1]] if exp_span else ""
    if any(NEWLINE.search(text[a:b]) for a, b in spans) or NEWLINE.search(exp_src):
        return None  # a literal laid out over several lines: re-rendering would change layout
    return Case(
        field=fld,
        args=tuple(_literal(v)[1] for v in values),
        arg_spans=tuple(spans),
        arg_styles=tuple(Style.of(text[a:b]) for a, b in spans),
        keywords=(None,) * len(call.args) + tuple(k.arg for k in call.keywords),
        template=" ".join(template.split()),
        expected_span=exp_span,
        expected_style=Style.of(exp_src),
        mode=mode,
    )


def _assert_case(text: str, fld: str, test: ast.expr, targets: set[str], offset) -> Case | None:
    """Recognise the assert forms listed in the module docstring."""
    call = _target_call(test, targets)
    if call is None:
        return None
    if test is call:
        return _case(text, fld, call, call, None, "truthy", offset)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and test.operand is call:
        return _case(text, fld, call, call, None, "falsy", offset)
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        left, right, op = test.left, test.comparators[0], test.ops[0]
        if isinstance(op, ast.Eq | ast.Is):
            for side, other in ((left, right), (right, left)):
                if call in ast.walk(side) and _literal(other)[0]:
                    return _case(text, fld, call, side, other, "value", offset)
        if isinstance(op, ast.Lt | ast.LtE) and isinstance(left, ast.Call) and len(left.args) == 1:
            inner = left.args[0]
            fname = ast.unparse(left.func)
            if fname in ("abs", "math.fabs", "fabs") and isinstance(inner, ast.BinOp):
                for side, other in ((inner.left, inner.right), (inner.right, inner.left)):
                    if call in ast.walk(side) and _literal(other)[0]:
                        return _case(text, fld, call, side, other, "value", offset)
    if isinstance(test, ast.Call) and ast.unparse(test.func) in ("math.isclose", "isclose"):
        a = test.args[:2]
        for side, other in ((a[0], a[1]), (a[1], a[0])) if len(a) == 2 else ():
            if call in ast.walk(side) and _literal(other)[0]:
                return _case(text, fld, call, side, other, "value", offset)
    return None


def _hidden_cases(sample: Sample, targets: set[str]) -> tuple[list[Case], int]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(sample.tests)
    except SyntaxError:
        return [], 0
    offset = _char_offsets(sample.tests)
    asserts = [n for n in ast.walk(tree) if isinstance(n, ast.Assert)]
    cases = [_assert_case(sample.tests, "tests", a.test, targets, offset) for a in asserts]
    return [c for c in cases if c], len(asserts)


def _prompt_examples(sample: Sample) -> list[Case]:
    """Examples in a code prompt's docstring: ``>>> f(x)`` + output, or ``f(x) <sep> y``."""
    text, name, cases = sample.prompt, sample.entry_point, []
    if not name:
        return cases
    for m in re.finditer(rf"(?<![\w.]){re.escape(name)}\(", text):
        line_end = text.find("\n", m.start())
        line_end = len(text) if line_end < 0 else line_end
        call_end = _balanced(text, m.end() - 1, line_end)
        if call_end is None:
            continue
        try:
            call = ast.parse(text[m.start() : call_end], mode="eval").body
        except SyntaxError:
            continue
        if _target_call(call, {name}) is not call:
            continue
        before = text[text.rfind("\n", 0, m.start()) + 1 : m.start()]
        if before.strip() == ">>>":
            exp_start = line_end + 1
            nl = text.find("\n", exp_start)
            exp_end = len(text) if nl < 0 else nl
        else:
            sep = _SEP.match(text, call_end, line_end)
            if sep is None:
                continue
            exp_start, exp_end = sep.end(), line_end
        raw = text[exp_start:exp_end]
        exp_text = raw.strip().rstrip(".,;")
        if not exp_text or not _literal_text(exp_text):
            continue
        lead = len(raw) - len(raw.lstrip())
        expected = (exp_start + lead, exp_start + lead + len(exp_text))
        case = _shift(call, m.start(), text, expected)
        if case is not None:
            cases.append(case)
    return cases


def _literal_text(src: str) -> bool:
    try:
        ast.literal_eval(src)
        return True
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False


def _balanced(text: str, open_at: int, limit: int) -> int | None:
    depth = 0
    for i in range(open_at, limit):
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        if depth == 0:
            return i + 1
    return None


def _shift(call: ast.Call, base: int, text: str, expected: tuple[int, int]) -> Case | None:
    """A case for a call parsed from ``text[base:]`` (single line, so byte cols ~ chars)."""
    snippet = text[base:]

    def offset(line: int, col: int) -> int:
        return base + len(snippet.encode("utf-8")[:col].decode("utf-8", "ignore"))

    case = _case(text, "prompt", call, call, None, "value", offset)
    if case is None:
        return None
    return replace(
        case, expected_span=expected, expected_style=Style.of(text[expected[0] : expected[1]])
    )


def plan_tests(sample: Sample) -> TestPlan:
    """Find the cases of ``sample`` that τt can transform."""
    if sample.format == "stdio":
        return TestPlan((), "stdin/stdout tests are data, not calls: not transformed")
    targets = {sample.entry_point, "candidate"} - {""}
    hidden, n_asserts = _hidden_cases(sample, targets)
    prompt = _prompt_examples(sample) if sample.format == "completion" else []
    if sample.format == "standalone":
        prompt = _mirror_in_prompt(sample, hidden)
    if not hidden and not prompt:
        why = "tests do not parse" if n_asserts == 0 and sample.tests.strip() else ""
        return TestPlan((), why or f"none of {n_asserts} asserts calls the function on literals")
    return TestPlan(tuple(hidden + prompt))


def _mirror_in_prompt(sample: Sample, hidden: list[Case]) -> list[Case]:
    """MBPP prompts quote the asserts verbatim: the same case at the quoted position, taking
    the inputs of the hidden case it quotes (``hidden`` come first in the plan)."""
    out, search_from = [], 0
    for index, case in enumerate(hidden):
        line_start = sample.tests.rfind("\n", 0, case.arg_spans[0][0]) + 1
        line_end = sample.tests.find("\n", line_start)
        line = sample.tests[line_start : line_end if line_end >= 0 else None]
        at = sample.prompt.find(line, search_from)
        if at < 0:
            continue
        search_from = at + len(line)
        delta = at - line_start
        expected = case.expected_span
        twin = replace(
            case,
            field="prompt",
            mirror_of=index,
            arg_spans=tuple((a + delta, b + delta) for a, b in case.arg_spans),
            expected_span=(expected[0] + delta, expected[1] + delta) if expected else None,
        )
        out.append(twin)
    return out


def call_text(name: str, case: Case, args: list[Any]) -> str:
    """The call with new arguments, rendered in the original's style."""
    parts = [
        (f"{kw}=" if kw else "") + render(a, st)
        for a, st, kw in zip(args, case.arg_styles, case.keywords, strict=True)
    ]
    return f"{name}({', '.join(parts)})"


def mutations(sample: Sample, plan: TestPlan, attempts: int, seed: int) -> Mutations:
    """Up to ``attempts`` distinct mutations of each hidden case's arguments, seeded per
    sample and case (mirrors take their hidden case's)."""
    out = []
    for ci, case in enumerate(plan.cases):
        if case.mirror:
            continue
        rng = random.Random(f"{seed}:{sample.id}:{ci}")
        seen = set()
        for _ in range(attempts * 3):
            args = tuple(mutate_args(list(case.args), rng))
            key = repr(args)
            if args == case.args or key in seen:
                continue
            seen.add(key)
            out.append((ci, args))
            if len(seen) == attempts:
                break
    return tuple(out)


def evaluation_program(sample: Sample, plan: TestPlan, jobs: Mutations) -> str:
    """A program that runs the original solution on each mutation and prints
    ``[job index, repr or None, truthiness]`` per evaluation as JSON."""
    exprs = [
        plan.cases[ci].template.replace(
            CALL_SLOT, call_text(sample.entry_point, plan.cases[ci], list(args))
        )
        for ci, args in jobs
    ]
    body = json.dumps(exprs)
    return (
        sample.code
        + "\n"
        + sample.setup
        + f"\ncandidate = {sample.entry_point}\n"
        + _EVAL_HARNESS.replace("__JOBS__", repr(body))
        .replace("__CPU__", repr(CASE_CPU_SECONDS))
        .replace("__WALL__", repr(CASE_WALL_SECONDS))
    )


#: CPU seconds one mutated case's evaluation may use before it is dropped.
CASE_CPU_SECONDS = 1.0
#: Wall-clock seconds one mutated case's evaluation may take: the net for a case the CPU timer
#: cannot interrupt (one that sleeps, or spins in a thread of its own).
CASE_WALL_SECONDS = 10.0

_EVAL_HARNESS = """
import ast as _ast, contextlib as _cl, io as _io, json as _json, signal as _signal, sys as _sys

def _alarm(*_):
    raise TimeoutError("case used its CPU or wall-clock budget")

_signal.signal(_signal.SIGPROF, _alarm)
_signal.signal(_signal.SIGALRM, _alarm)
_results = []
for _job, _expr in enumerate(_json.loads(__JOBS__)):
    try:
        with _cl.redirect_stdout(_io.StringIO()):
            _signal.setitimer(_signal.ITIMER_PROF, __CPU__)  # CPU time: the same under any load
            _signal.setitimer(_signal.ITIMER_REAL, __WALL__)  # the net: a case that sleeps or spins
            try:  # in a thread (SIGPROF goes to the thread that spins; the main one waits)
                _value = eval(_expr)
            finally:
                _signal.setitimer(_signal.ITIMER_PROF, 0)
                _signal.setitimer(_signal.ITIMER_REAL, 0)
        _text = repr(_value)
        _ok = type(_ast.literal_eval(_text)) is type(_value) and _ast.literal_eval(_text) == _value
        _results.append([_job, _text if _ok else None, bool(_value)])
    except BaseException:
        _results.append([_job, None, None])
_sys.__stdout__.write("\\n@@srlib@@" + _json.dumps(_results) + "\\n")
"""


def read_evaluations(plan: TestPlan, jobs: Mutations, stdout: str) -> TestPlan:
    """A new plan whose cases carry their evaluated candidates (a mirror gets those of the
    hidden case it quotes); an evaluation that printed nothing leaves every result None."""
    marker = stdout.rfind("@@srlib@@")
    try:
        rows = (
            json.loads(stdout[marker + len("@@srlib@@") :].splitlines()[0]) if marker >= 0 else []
        )
    except (json.JSONDecodeError, IndexError):
        rows = []
    results = {job: (text, truth) for job, text, truth in rows}
    found: dict[int, list[Candidate]] = {}
    for job, (ci, args) in enumerate(jobs):
        text, truth = results.get(job, (None, None))
        found.setdefault(ci, []).append((args, text, truth))
    cases = tuple(
        replace(case, candidates=tuple(found.get(source_of(ci, case), ())))
        for ci, case in enumerate(plan.cases)
    )
    return replace(plan, cases=cases)


def source_of(index: int, case: Case) -> int:
    """The index of the case whose inputs ``case`` uses: itself, or the one it quotes."""
    return index if case.mirror_of is None else case.mirror_of


def valid_candidates(case: Case) -> list[tuple[tuple[Any, ...], str | None]]:
    """Mutations whose evaluation succeeded and fit the case's form."""
    out = []
    for args, text, truth in case.candidates:
        if case.mode == "value" and text is not None:
            out.append((args, text))
        elif case.mode in ("truthy", "falsy") and truth is (case.mode == "truthy"):
            out.append((args, None))
    return out


def case_edits(case: Case, choice: tuple[tuple[Any, ...], str | None]) -> list[Edit]:
    """Edits that put a chosen mutation (and its expected value) into the case's field."""
    args, text = choice
    edits = [
        Edit(case.field, a, b, render(v, st))
        for (a, b), v, st in zip(case.arg_spans, args, case.arg_styles, strict=True)
    ]
    if case.expected_span and text is not None:
        a, b = case.expected_span
        edits.append(Edit(case.field, a, b, render(ast.literal_eval(text), case.expected_style)))
    return edits
