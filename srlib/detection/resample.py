"""The problem-clustered bootstrap of the contrasts: seeds that score the same problems are
resampled by problem, each drawn problem bringing its rows of every seed, so a problem that is
easy or hard in every seed counts once (resampling rows as independent under-covers; tested
on a simulated testbed with persistent problem effects in ``tests/test_contrasts.py``)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


class ProblemResampler:
    """Draws a group of parts' rows by problem: problems and calibration problems are drawn
    with replacement from the parts' union, each drawn problem bringing its rows of every
    part (as often as it was drawn)."""

    def __init__(self, parts: Sequence) -> None:
        self.parts = parts
        problems = np.unique(np.concatenate([p.ids for p in parts]))
        cal = np.unique(np.concatenate([p.cal_ids for p in parts]))
        self.n, self.n_cal = problems.size, cal.size
        self.rows = [np.searchsorted(problems, p.ids) for p in parts]
        self.cal_rows = [np.searchsorted(cal, p.cal_ids) for p in parts]

    def all(self) -> list:
        """Every row of every part, once."""
        return [(np.arange(p.y.size), None) for p in self.parts]

    def draw(self, rng: np.random.Generator) -> list:
        """(row, calibration row) positions of each part for one resample; a draw whose rows
        hold one class only is drawn again."""
        for _ in range(100):
            counts = np.bincount(rng.integers(0, self.n, self.n), minlength=self.n)
            idx = [np.repeat(np.arange(r.size), counts[r]) for r in self.rows]
            y = np.concatenate([p.y[i] for p, i in zip(self.parts, idx, strict=True)])
            if y.any() and not y.all():
                break
        cal = None
        if self.n_cal:
            counts = np.bincount(rng.integers(0, self.n_cal, self.n_cal), minlength=self.n_cal)
            cal = [np.repeat(np.arange(r.size), counts[r]) for r in self.cal_rows]
        return [(i, None if cal is None else c) for i, c in zip(idx, cal or idx, strict=True)]
