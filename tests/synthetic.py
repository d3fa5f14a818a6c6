"""Synthetic duplicated data for the tests and ``bench/dedup.py`` (a fixture, so it lives
here, not in the library): windows of real code (this machine's standard library) with
exact copies and near copies made by one small edit each."""

from __future__ import annotations

import random
import re

from srlib.localfiles import python_sources


def code_windows(
    n: int,
    seed: int = 0,
    width: int = 400,
    exact: float = 1 / 3,
    near: float = 1 / 3,
    max_copies: int = 4,
    chars: int = 8_000_000,
) -> list[str]:
    """``n`` windows of ``width`` characters; after each new window, with probability
    ``exact`` 1..``max_copies`` verbatim copies follow, with probability ``near`` one copy
    with an identifier renamed (``name`` → ``name2``); the result is shuffled."""
    rng = random.Random(seed)
    code = "".join(python_sources(chars, seed=seed))
    out: list[str] = []
    while len(out) < n:
        start = rng.randrange(len(code) - width)
        window = code[start : start + width]
        out.append(window)
        roll = rng.random()
        if roll < exact:
            out += [window] * rng.randint(1, max_copies)
        elif roll < exact + near:
            names = re.findall(r"[A-Za-z_]\w{3,}", window)
            if names:
                old = rng.choice(names)
                out.append(window.replace(old, old + "2", 1))
    rng.shuffle(out)
    return out[:n]
