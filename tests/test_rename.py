"""Scope-aware renaming on code that would break a regex or ast-based renamer."""

import dataclasses
import random
import textwrap

import pytest

from srlib.execution.sandbox import run_program
from srlib.samples import Sample
from srlib.transforms.edits import apply_edits
from srlib.transforms.rename import analyze, mention_pattern, rename_edits
from srlib.transforms.surface import rename_problems


def sample(code, tests, prompt="Solve it.", fmt="standalone", entry="f"):
    return Sample(
        id="t/1",
        benchmark="toy",
        prompt=prompt,
        solution=textwrap.dedent(code) if fmt == "standalone" else code,
        tests=textwrap.dedent(tests),
        entry_point=entry,
        format=fmt,
    )


def renamed(s, kinds=("function", "variable"), seed=0):
    """Rename, check the variant still passes and is a byte-exact rename; return both."""
    analysis = analyze(s)
    edits, renames = rename_edits(analysis, kinds, random.Random(seed))
    v = dataclasses.replace(s, **apply_edits(s, edits))
    assert run_program(s.program()).passed
    assert run_program(v.program()).passed, v.program()
    assert rename_problems(s, v, renames) == []
    return v, {(r["scope"], r["old"]): r["new"] for r in renames}


def names(mapping):
    return {old for _, old in mapping}


def test_closure_and_nested_function_renamed_consistently():
    v, m = renamed(
        sample(
            """
            def f(xs):
                total = 0
                def add(value):
                    nonlocal total
                    total += value
                for item in xs:
                    add(item)
                return total
            """,
            "assert f([1, 2, 3]) == 6\n",
        )
    )
    assert "total" not in names(m)  # used by nonlocal: never renamed
    assert {"f", "add", "xs", "value", "item"} <= names(m)
    assert "nonlocal total" in v.solution


def test_globals_attributes_builtins_imports_untouched():
    v, m = renamed(
        sample(
            """
            import math
            LIMIT = 3
            class Box:
                def __init__(self, count):
                    self.count = count
            def f(box, count):
                global LIMIT
                size = len(str(box.count)) + math.floor(count)
                return min(size, LIMIT)
            """,
            "assert f(Box(12345), 2.5) == 3\n",
        )
    )
    assert not names(m) & {"math", "LIMIT", "Box", "len", "str", "min", "self", "__init__"}
    assert ("Box.__init__", "count") in m  # a method's parameter is a local like any other
    assert "self.count = " in v.solution  # ... but the attribute keeps its name
    assert f"{m[('f', 'box')]}.count" in v.solution


def test_parameter_passed_by_keyword_keeps_its_name():
    v, m = renamed(
        sample(
            """
            def f(a, b=2):
                key = a * b
                return sorted([key, a], key=abs)
            """,
            "assert f(1, b=3) == [1, 3]\n",
        )
    )
    assert "b" not in names(m) and "a" in names(m) and "key" in names(m)
    assert "key=abs" in v.solution  # the keyword of another callee is not the local


def test_fstrings_comprehensions_lambda_except_with_walrus():
    v, m = renamed(
        sample(
            """
            import io
            def f(words):
                pairs = [(w, len(w)) for w in words if (n := len(w)) > 1]
                longest = max(pairs, key=lambda p: p[1])
                try:
                    1 / 0
                except ZeroDivisionError as err:
                    kind = type(err).__name__
                with io.StringIO() as buf:
                    buf.write(f"{longest[0]}:{kind}:{n!r} words")
                    return buf.getvalue()
            """,
            "assert f(['a', 'abc', 'de']) == 'abc:ZeroDivisionError:2 words'\n",
        )
    )
    assert {"words", "pairs", "w", "longest", "p", "err", "kind", "buf"} <= names(m)
    # libcst binds a walrus target in the comprehension, Python in the function: the
    # symtable cross-check rejects that rename, so `n` keeps its name everywhere
    assert "n" not in names(m) and "(n := len(" in v.solution
    assert ' words")' in v.solution  # string content 'words' is not the parameter


def test_recursion_and_decorators():
    v, m = renamed(
        sample(
            """
            import functools
            def trace(fn):
                @functools.wraps(fn)
                def inner(*args):
                    return fn(*args)
                return inner
            @trace
            @functools.lru_cache(maxsize=None)
            def fib(n):
                return n if n < 2 else fib(n - 1) + fib(n - 2)
            """,
            "assert fib(20) == 6765\n",
            entry="fib",
        )
    )
    new_fib, new_trace = m[("<module>", "fib")], m[("<module>", "trace")]
    assert f"@{new_trace}\n" in v.solution and f"{new_fib}(n" not in v.solution
    assert f"assert {new_fib}(20)" in v.tests and "functools.lru_cache" in v.solution


def test_dynamic_scope_functions_are_left_alone():
    v, m = renamed(
        sample(
            """
            def f(x):
                y = x + 1
                return eval("y * 2")
            """,
            "assert f(1) == 4\n",
        )
    )
    assert names(m) == {"f"}


def test_local_shadowing_its_own_function_name():
    v, m = renamed(
        sample(
            """
            def best(xs):
                best = max(xs)
                return best
            """,
            "assert best([1, 5]) == 5\n",
            entry="best",
        )
    )
    assert ("<module>", "best") in m and ("best", "best") in m


def test_comprehension_condition_missed_by_libcst_is_rejected():
    s = sample(
        """
        def f(lst, x):
            return [(i, j) for i in range(len(lst)) for j in range(len(lst[i])) if lst[i][j] == x]
        """,
        "assert f([[1, 2], [2]], 2) == [(0, 1), (1, 0)]\n",
    )
    analysis = analyze(s)
    assert "scope check rejected" in analysis.reason and ":j" in analysis.reason
    renamed(s)


def test_crlf_and_mixed_tab_indentation_stay_byte_exact():
    code = "def f(x,y):\r\n  if x == y:\r\n\t   return True\r\n  else:\r\n     return False"
    s = sample(code, "assert f(1, 1) == True\n")
    v, m = renamed(s)
    assert v.solution.count("\r\n") == 4 and "\t   return True" in v.solution


def test_docstring_doctest_and_comment_mentions_follow_function_renames():
    prompt = (
        'def add_numbers(a, b):\n    """Add two numbers.\n    >>> add_numbers(1, 2)\n    3\n'
        '    """\n'
    )
    s = sample(
        "    return a + b  # add_numbers is simple\n",
        "assert add_numbers(2, 2) == 4\n",
        prompt=prompt,
        fmt="completion",
        entry="add_numbers",
    )
    v, m = renamed(s, kinds=("function",))
    new = m[("<module>", "add_numbers")]
    assert f">>> {new}(1, 2)" in v.prompt and f"# {new} is simple" in v.solution
    assert "Add two numbers." in v.prompt


def test_single_word_function_mentions_only_as_calls():
    pattern = mention_pattern("add")
    assert [m.start() for m in pattern.finditer("add two numbers: add(1, 2), x.add(3)")] == [17]
    assert len(mention_pattern("add_numbers").findall("use add_numbers here")) == 1


def test_unparseable_code_is_reported():
    s = sample("def f(:\n  pass\n", "")
    assert "cannot parse" in analyze(s).reason


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_new_names_never_collide(seed):
    s = sample(
        """
        def f(idx, ind, i):
            value = idx + ind + i
            val = value * 2
            return val
        """,
        "assert f(1, 2, 3) == 12\n",
    )
    v, m = renamed(s, seed=seed)
    new = list(m.values())
    assert len(new) == len(set(new)) and not set(new) & {"idx", "ind", "i", "value", "val", "f"}


def test_a_sample_is_analysed_once_and_each_caller_gets_its_own_copy(monkeypatch):
    from srlib.transforms import rename

    s = sample(
        "def f(values):\n    total = sum(values)\n    return total\n", "assert f([1]) == 1\n"
    )
    calls = []
    real = rename._analyze
    monkeypatch.setattr(rename, "_analyze", lambda x: calls.append(x) or real(x))
    rename._ANALYSES.clear()
    first = analyze(s)
    first.symbols.clear()  # a caller changing what it got
    first.taken.add("mine")
    second = analyze(s)
    assert len(calls) == 1 and {sym.name for sym in second.symbols} == {"f", "values", "total"}
    assert "mine" not in second.taken
    analyze(dataclasses.replace(s, solution=s.solution.replace("total", "acc")))
    assert len(calls) == 2  # other code: analysed afresh
