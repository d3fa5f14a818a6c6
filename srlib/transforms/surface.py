"""Byte-level audit of a rename: only identifiers differ, each as the mapping says.

Two checks, both on the exact strings: (1) a word-level alignment of original and variant in
which every difference is an identifier replaced by one of its new names, so every other
byte (whitespace, comments, quotes, line ends) is identical; (2) a Python-token alignment of
the code in which every difference is a NAME token, or a STRING/COMMENT token that differs
only by mentions of a renamed *function* (or, in an f-string, by renamed names in its fields:
Python 3.11 tokenizes an f-string as one STRING token).
"""

from __future__ import annotations

import io
import re
import tokenize

from srlib.samples import Sample
from srlib.transforms.edits import Module

_WORDS = re.compile(r"[A-Za-z_]\w*|\s|.", re.S)


def word_diff(a: str, b: str) -> list[tuple[str, str]] | None:
    """The differing word pairs of two strings aligned word by word (None if unalignable)."""
    wa, wb = _WORDS.findall(a), _WORDS.findall(b)
    if len(wa) != len(wb):
        return None
    return [(x, y) for x, y in zip(wa, wb, strict=True) if x != y]


def rename_problems(original: Sample, variant: Sample, renames: list[dict[str, str]]) -> list[str]:
    """Everything about ``variant`` that the ``renames`` (kind, scope, old, new) of
    ``original`` could not produce; empty when the variant is a pure, byte-exact rename."""
    allowed: dict[str, set[str]] = {}
    for r in renames:
        allowed.setdefault(r["old"], set()).add(r["new"])
    functions = {r["old"] for r in renames if r["kind"] == "function"}
    problems = []
    for name in ("prompt", "solution", "setup", "tests"):
        diff = word_diff(getattr(original, name), getattr(variant, name))
        if diff is None:
            problems.append(f"{name}: not aligned word for word")
            continue
        problems += [
            f"{name}: {x!r} -> {y!r} not in the mapping"
            for x, y in diff
            if y not in allowed.get(x, ())
        ]
    if not problems:
        problems += _token_problems(
            Module.of(original).text, Module.of(variant).text, allowed, functions
        )
    return problems


def _tokens(code: str) -> list[tokenize.TokenInfo] | None:
    try:
        return list(tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None


def _token_problems(a: str, b: str, allowed, functions: set[str]) -> list[str]:
    ta, tb = _tokens(a), _tokens(b)
    if ta is None or tb is None:
        return ["code does not tokenize"] if (ta is None) != (tb is None) else []
    if len(ta) != len(tb):
        return ["different number of Python tokens"]
    problems = []
    for x, y in zip(ta, tb, strict=True):
        if x.string == y.string:
            continue
        if x.type != y.type:
            problems.append(f"token type changed at {x.start}: {x.string!r} -> {y.string!r}")
        elif x.type == tokenize.NAME:
            if y.string not in allowed.get(x.string, ()):
                problems.append(f"NAME {x.string!r} -> {y.string!r} not in the mapping")
        elif x.type in (tokenize.STRING, tokenize.COMMENT):
            diff = word_diff(x.string, y.string) or [("?", "?")]
            prefix = re.match(r"[A-Za-z]*", x.string).group().lower()
            mentionable = allowed.keys() if "f" in prefix else functions  # f-string fields
            bad = [(o, n) for o, n in diff if o not in mentionable or n not in allowed.get(o, ())]
            if bad:
                kind = tokenize.tok_name[x.type]
                problems.append(f"{kind} at {x.start} changed beyond function mentions: {bad}")
        else:
            problems.append(f"{tokenize.tok_name[x.type]} token changed at {x.start}")
    return problems
