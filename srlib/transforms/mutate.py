"""Plausible perturbations of literal test inputs, and rendering in the original's style."""

from __future__ import annotations

import random
import string
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Style:
    """How the original literal was written: quote character and separator after commas."""

    quote: str = "'"
    sep: str = ", "

    @classmethod
    def of(cls, source: str) -> Style:
        """Guess the style of a literal's source text."""
        quote = next((c for c in source if c in "'\""), "'")
        sep = ", " if ", " in source or "," not in source else ","
        return cls(quote, sep)


def render(value: Any, style: Style = Style()) -> str:
    """Python source for ``value`` (a literal) in ``style``; ``literal_eval`` gives it back."""
    if isinstance(value, str):
        text = repr(value)
        if style.quote == '"' and text.startswith("'") and '"' not in value:
            text = '"' + text[1:-1].replace("\\'", "'") + '"'
        return text
    if isinstance(value, list):
        return "[" + style.sep.join(render(v, style) for v in value) + "]"
    if isinstance(value, tuple):
        inner = style.sep.join(render(v, style) for v in value)
        return "(" + inner + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, dict):
        items = (f"{render(k, style)}: {render(v, style)}" for k, v in value.items())
        return "{" + style.sep.join(items) + "}"
    if isinstance(value, set | frozenset):
        if not value:
            return "set()"
        return "{" + style.sep.join(render(v, style) for v in sorted(value, key=repr)) + "}"
    return repr(value)


def _mutate_int(v: int, rng: random.Random) -> int:
    spread = max(2, abs(v) // 4)
    new = v
    while new == v:
        new = v + rng.randint(-spread, spread)
        new = abs(new) if v >= 0 else new
    return new


def _mutate_float(v: float, rng: random.Random) -> float:
    text = repr(v)
    decimals = len(text.split(".")[1]) if "." in text and "e" not in text else 2
    new = v
    while new == v:
        new = round(v + rng.uniform(-1, 1) * max(1.0, abs(v) * 0.25), min(decimals, 6))
        new = abs(new) if v >= 0 else new
    return new


def _same_class_char(c: str, rng: random.Random) -> str:
    for pool in (string.ascii_lowercase, string.ascii_uppercase, string.digits):
        if c in pool:
            return rng.choice(pool.replace(c, ""))
    return c


def _mutate_str(v: str, rng: random.Random) -> str:
    if not v:
        return rng.choice(string.ascii_lowercase)
    editable = [i for i, c in enumerate(v) if c.isalnum()]
    if not editable:
        return v + v[-1]
    i = rng.choice(editable)
    op = rng.choice(("replace", "insert", "delete") if len(v) > 1 else ("replace", "insert"))
    if op == "replace":
        return v[:i] + _same_class_char(v[i], rng) + v[i + 1 :]
    if op == "insert":
        return v[:i] + _same_class_char(v[i], rng) + v[i:]
    return v[:i] + v[i + 1 :]


def _mutate_seq(v: list, rng: random.Random) -> list:
    if not v:
        return v
    out = list(v)
    op = rng.choice(("element", "element", "swap", "drop", "grow"))
    if op == "swap" and len(out) > 1 and len(set(map(repr, out))) > 1:
        i, j = rng.sample(range(len(out)), 2)
        out[i], out[j] = out[j], out[i]
    elif op == "drop" and len(out) > 1:
        del out[rng.randrange(len(out))]
    elif op == "grow":
        out.insert(rng.randrange(len(out) + 1), mutate(rng.choice(out), rng))
    else:
        i = rng.randrange(len(out))
        out[i] = mutate(out[i], rng)
    return out


def mutate(value: Any, rng: random.Random) -> Any:
    """A nearby value of the same type and shape; containers change one element or length."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return _mutate_int(value, rng)
    if isinstance(value, float):
        return _mutate_float(value, rng)
    if isinstance(value, str):
        return _mutate_str(value, rng)
    if isinstance(value, list):
        return _mutate_seq(value, rng)
    if isinstance(value, tuple):
        return tuple(_mutate_seq(list(value), rng))
    if isinstance(value, set | frozenset):
        return type(value)(_mutate_seq(sorted(value, key=repr), rng))
    if isinstance(value, dict):
        if not value:
            return value
        key = rng.choice(list(value))
        if len(value) > 1 and rng.random() < 0.3:
            return {k: v for k, v in value.items() if k != key}
        return {**value, key: mutate(value[key], rng)}
    return value


def mutate_args(args: list[Any], rng: random.Random) -> list[Any]:
    """Mutate at least one of ``args`` (each with probability 1/2); may return ``args``
    unchanged when nothing in them can vary (booleans, None, empty containers)."""
    out = [mutate(a, rng) if rng.random() < 0.5 else a for a in args]
    if out == args and args:
        i = rng.randrange(len(args))
        out[i] = mutate(args[i], rng)
    return out
