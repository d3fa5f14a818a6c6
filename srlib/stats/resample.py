"""Resampling the unit that repeats, so that an interval covers what varies between studies.
Three units, three resamplers, each the statistic's own:

- **Rows** (``metrics.metric_table``, ``metrics.bootstrap``): samples drawn with replacement,
  for one model's decisions on independent samples.
- **Problems** (``ProblemResampler``, the contrasts of the detection claim): seeds that score
  the same problems are resampled by problem, each drawn problem bringing its rows of every
  seed, so a problem that is easy or hard in every seed counts once (resampling rows as
  independent under-covers; tested on a simulated testbed with persistent problem effects in
  ``tests/test_contrasts.py``). Calibration problems are drawn alongside, so thresholds set
  on them are re-set inside every resample.
- **Repositories and files** (``ClusterBootstrap``, the duplication study): a candidate's
  label and its detectors' errors are shared with the other candidates of its file and its
  repository (one configuration file holds hundreds of candidates of one kind), so drawing
  candidates one by one gives intervals that are too narrow. It draws weights instead of
  rows: at level ``"repository"`` (the default) a two-stage bootstrap — repositories with
  replacement, then files with replacement within each drawn repository, every candidate of
  a drawn file coming with it; ``"file"`` draws files; ``"candidate"`` draws candidates (the
  naive bootstrap, for comparison). One weight matrix serves every model, scenario and
  candidate set of a study, so every difference read from it is paired; metrics come from
  weighted confusion counts (``metrics.counts_metrics``), so a resample never copies data."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from srlib.stats.metrics import counts_metrics


class ProblemResampler:
    """Draws a group of parts' rows by problem: problems and calibration problems are drawn
    with replacement from the parts' union, each drawn problem bringing its rows of every
    part (as often as it was drawn). With ``models``, the parts (seeds: each its own trained
    models) are drawn with replacement too, each drawn part bringing the drawn problems' rows
    as often as it was drawn — a two-stage bootstrap whose interval carries the
    model-to-model variance that holding the seeds fixed leaves out."""

    def __init__(self, parts: Sequence, models: bool = False) -> None:
        self.parts = parts
        self.models = models and len(parts) > 1
        problems = np.unique(np.concatenate([p.ids for p in parts]))
        cal = np.unique(np.concatenate([p.cal_ids for p in parts]))
        self.n, self.n_cal = problems.size, cal.size
        self.rows = [np.searchsorted(problems, p.ids) for p in parts]
        self.cal_rows = [np.searchsorted(cal, p.cal_ids) for p in parts]

    def all(self) -> list:
        """Every row of every part, once."""
        return [(np.arange(p.y.size), None) for p in self.parts]

    def draw(self, rng: np.random.Generator) -> list:
        """(row, calibration row) positions of each part for one resample (empty for a part
        not drawn); a draw whose rows hold one class only is drawn again."""
        k = len(self.parts)
        for _ in range(100):
            times = rng.multinomial(k, np.full(k, 1 / k)) if self.models else np.ones(k, int)
            counts = np.bincount(rng.integers(0, self.n, self.n), minlength=self.n)
            idx = [
                np.tile(np.repeat(np.arange(r.size), counts[r]), t)
                for r, t in zip(self.rows, times, strict=True)
            ]
            y = np.concatenate([p.y[i] for p, i in zip(self.parts, idx, strict=True)])
            if y.any() and not y.all():
                break
        if not self.n_cal:
            return [(i, None) for i in idx]
        counts = np.bincount(rng.integers(0, self.n_cal, self.n_cal), minlength=self.n_cal)
        cal = [
            np.tile(np.repeat(np.arange(r.size), counts[r]), t)
            for r, t in zip(self.cal_rows, times, strict=True)
        ]
        return list(zip(idx, cal, strict=True))


LEVELS = ("candidate", "file", "repository")


class ClusterBootstrap:
    """Bootstrap weights over candidates that resample their repositories and files."""

    def __init__(
        self,
        repos: Sequence[str],
        files: Sequence[str] | None = None,
        level: str = "repository",
        n_boot: int = 1000,
        seed: int = 0,
    ) -> None:
        if level not in LEVELS:
            raise ValueError(f"unknown resampling level {level!r}; choose from {LEVELS}")
        n = len(repos)
        files = list(files) if files is not None else [""] * n
        if len(files) != n:
            raise ValueError(f"{len(files)} files for {n} candidates")
        # a candidate without a file is a file of its own
        pairs = enumerate(zip(repos, files, strict=True))
        keys = [f"{r}\0{f}" if f else f"{r}\0#{i}" for i, (r, f) in pairs]
        file_names, self.file_of = np.unique(np.asarray(keys, dtype=object), return_inverse=True)
        repo_of_file = [k.split("\0", 1)[0] for k in file_names]
        repo_names, self.repo_of_file = np.unique(repo_of_file, return_inverse=True)
        self.level, self.n_boot, self.seed = level, n_boot, seed
        self.n, self.n_files, self.n_repos = n, len(file_names), len(repo_names)
        self.weights = self._draw(np.random.default_rng(seed)).astype(float)  # one conversion

    def _draw(self, rng: np.random.Generator) -> np.ndarray:
        """(n_boot, candidates) weights: how often each candidate is in each resample."""
        if self.level == "candidate":
            return rng.multinomial(self.n, np.full(self.n, 1 / self.n), self.n_boot)
        if self.level == "file":
            files = rng.multinomial(
                self.n_files, np.full(self.n_files, 1 / self.n_files), self.n_boot
            )
            return files[:, self.file_of]
        repos = rng.multinomial(self.n_repos, np.full(self.n_repos, 1 / self.n_repos), self.n_boot)
        files = np.zeros((self.n_boot, self.n_files), dtype=np.int64)
        for r in range(self.n_repos):
            members = np.flatnonzero(self.repo_of_file == r)
            # a repository drawn c times brings c independent draws of its F files: together
            # one multinomial of c·F draws over them
            files[:, members] = rng.multinomial(
                repos[:, r] * members.size, np.full(members.size, 1 / members.size)
            )
        return files[:, self.file_of]

    def metric(
        self, y: np.ndarray, f: np.ndarray, rows: np.ndarray, name: str = "mcc"
    ) -> tuple[float, np.ndarray]:
        """``name`` of predictions ``f`` for labels ``y`` on candidate indices ``rows`` (each
        at most once): its value and its ``n_boot`` resampled values."""
        y, f = np.asarray(y, dtype=bool), np.asarray(f, dtype=bool)
        rows = np.asarray(rows, dtype=int)
        if np.unique(rows).size != rows.size:
            raise ValueError("a candidate appears twice among the rows of one metric")
        cells = [y & f, ~y & f, y & ~f, ~y & ~f]  # tp, fp, fn, tn
        point = counts_metrics(*(c.sum() for c in cells))[name]
        vectors = []
        for c in cells:
            v = np.zeros(self.n)
            v[rows] = c
            vectors.append(self.weights @ v)
        return float(point), counts_metrics(*vectors)[name]
