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


def equal_family(
    rng,
    seeds: int = 3,
    n: int = 664,
    model_sd: float = 0.2,
    ease_sd: float = 0.5,
    signal: dict[str, float] | None = None,
    shared_split: bool = False,
):
    """SR gray, SR black and the six baselines of equal strength in expectation, as parts
    (``operating.from_arrays``) of the book's design (seeds × problems): each seed's models
    are stronger or weaker per detector (model-to-model variance, ``model_sd``: what spreads
    the per-seed differences), each seed draws its own leaked half, and every problem keeps
    an effect of its own on each detector in every seed (``ease_sd``: shared by the seeds).
    A rule flags where its score (its margin + 1) is above 1. The true difference of every
    pair is zero unless ``signal`` gives a detector another mean separation than 1 (its AUC
    is then ``auc_of(signal)``). With ``shared_split`` every seed leaks the same half, so a
    problem's effects weigh on every seed's difference alike: the problems' share of the
    pooled variance grows towards the build's (``declared.DESIGN``'s gray rows: about 60%)."""
    import numpy as np

    from srlib.detection.operating import from_arrays

    names = ("SR gray", "SR black", "PPL", "Min-K%", "Min-K%++", "Zlib", "NGO", "n-gram acc")
    signal = signal or {}
    ids = np.array([f"p{i}" for i in range(n)])
    ease = {d: ease_sd * rng.standard_normal(n) for d in names}
    parts = {}
    split = rng.random(n) < 0.5 if shared_split else None
    for s in range(seeds):
        y = split if shared_split else rng.random(n) < 0.5
        scores, null = {}, {}
        for d in names:
            strength = signal.get(d, 1.0) + model_sd * rng.standard_normal()
            scores[d] = y * strength + ease[d] + rng.standard_normal(n)
            null[d] = ease[d] + rng.standard_normal(n)
        margins = {r: scores.pop(r) - 1.0 for r in ("SR gray", "SR black")}
        flags = {r: m > 0 for r, m in margins.items()}
        null |= {f"margin:{r}": null[r] - 1.0 for r in ("SR gray", "SR black")}
        null |= {r: (null[r] > 1.0).astype(float) for r in ("SR gray", "SR black")}
        parts[f"seed {s}"] = from_arrays(ids, y, flags, scores, null, margins)
    return parts


def auc_of(signal: float, ease_sd: float = 0.5) -> float:
    """The AUC of an ``equal_family`` detector of mean separation ``signal`` (its score's
    spread within a class: the problem's effect and the noise)."""
    from scipy.stats import norm

    return float(norm.cdf(signal / (2 * (1 + ease_sd**2)) ** 0.5))


def signal_for(auc: float, ease_sd: float = 0.5) -> float:
    """The mean separation whose AUC is ``auc`` (``auc_of``'s inverse)."""
    from scipy.stats import norm

    return float(norm.ppf(auc) * (2 * (1 + ease_sd**2)) ** 0.5)
