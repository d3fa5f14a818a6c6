"""Plausible alternative identifiers from a curated programming-vocabulary lexicon.

``has_close_elements`` becomes ``contains_close_elements`` or ``has_near_items``: the name is
split into words (snake_case and camelCase), words are replaced by alternatives from
``lexicon.txt``, and the result is joined in the original style. Names the lexicon cannot
vary fall back to common affixes (``compute_fib``, ``my_total``).
"""

from __future__ import annotations

import builtins
import itertools
import keyword
import random
import re
from functools import cache
from pathlib import Path

LEXICON_FILE = Path(__file__).with_name("lexicon.txt")
FUNCTION_AFFIXES = ("compute_{}", "get_{}", "{}_fn", "calc_{}", "do_{}")
VARIABLE_AFFIXES = ("{}_val", "my_{}", "the_{}", "{}_value", "cur_{}")
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
RESERVED = frozenset(keyword.kwlist) | frozenset(keyword.softkwlist) | frozenset(dir(builtins))


@cache
def lexicon() -> dict[str, tuple[str, ...]]:
    """The lexicon as ``word -> alternatives`` (lowercase), read once from ``lexicon.txt``."""
    table: dict[str, tuple[str, ...]] = {}
    for lineno, line in enumerate(LEXICON_FILE.read_text(encoding="utf-8").splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        word, sep, alts = line.partition(":")
        if not sep or not alts.split():
            raise ValueError(f"{LEXICON_FILE}:{lineno}: expected 'word: alternative ...'")
        table[word.strip()] = tuple(a for a in alts.split() if a != word.strip())
    return table


def split_identifier(name: str) -> tuple[str, list[str], str, str]:
    """Split into (leading underscores, words, trailing underscores, style: snake|camel|single)."""
    core = name.strip("_")
    lead = name[: len(name) - len(name.lstrip("_"))]
    trail = name[len(name.rstrip("_")) :] if core else ""
    if "_" in core:
        return lead, [w for w in core.split("_") if w], trail, "snake"
    words = _WORD.findall(core)
    if len(words) > 1 and "".join(words) == core:
        return lead, words, trail, "camel"
    return lead, [core], trail, "single"


def _join(lead: str, words: list[str], trail: str, style: str) -> str:
    if style == "camel":
        first, *rest = words
        return lead + first + "".join(w[:1].upper() + w[1:] for w in rest) + trail
    return lead + "_".join(words) + trail


def _recase(alt: str, like: str) -> str:
    """Give ``alt`` the letter case of the word it replaces."""
    if like.isupper() and len(like) > 1:
        return alt.upper()
    if like[:1].isupper():
        return alt[:1].upper() + alt[1:]
    return alt


def lexical_alternatives(name: str) -> list[str]:
    """Names made by replacing words of ``name`` with lexicon alternatives, fewest changes first."""
    lead, words, trail, style = split_identifier(name)
    table = lexicon()
    options = [
        [w] if w.isdigit() else [w] + [_recase(a, w) for a in table.get(w.lower(), ())]
        for w in words
    ]
    if name.isupper():
        options = [[o.upper() for o in opts] for opts in options]
    combos = [list(c) for c in itertools.product(*options)]
    combos.sort(key=lambda c: sum(a != b for a, b in zip(c, words, strict=True)))
    return _valid(_join(lead, c, trail, style) for c in combos if c != words)


def affixed_alternatives(name: str, kind: str = "variable") -> list[str]:
    """Fallback names made with common affixes (``compute_fib``, ``my_total``)."""
    core = name.strip("_")
    lead = name[: len(name) - len(name.lstrip("_"))]
    trail = name[len(name.rstrip("_")) :] if core else ""
    affixes = FUNCTION_AFFIXES if kind == "function" else VARIABLE_AFFIXES
    return _valid(lead + a.format(core) + trail for a in affixes)


def _valid(names) -> list[str]:
    return [n for n in dict.fromkeys(names) if n.isidentifier() and n not in RESERVED]


def choose_name(
    name: str,
    taken: set[str],
    rng: random.Random,
    kind: str = "variable",
    lexical_share: float = 0.8,
) -> str:
    """A random plausible alternative to ``name`` not in ``taken``: a lexicon-based name with
    probability ``lexical_share`` (when one is free), otherwise an affixed one."""
    lexical = [n for n in lexical_alternatives(name) if n not in taken and n != name]
    affixed = [n for n in affixed_alternatives(name, kind) if n not in taken and n != name]
    if lexical and (not affixed or rng.random() < lexical_share):
        return rng.choice(lexical)
    if affixed:
        return rng.choice(affixed)
    for i in itertools.count(2):
        if f"{name}{i}" not in taken and f"{name}{i}" not in RESERVED:
            return f"{name}{i}"
    raise AssertionError("unreachable")
