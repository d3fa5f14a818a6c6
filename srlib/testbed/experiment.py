"""The testbed's experiments as tidy tables: every detector on every checkpoint, against the
known leak. Scores go through the disk cache (``cache_dir/scores.sqlite``), so a rerun scores
nothing.

Which detectors there are, their families and which an auditor can deploy is the
registry's (``srlib.detection.registry``); how they are compared is
``srlib.detection.compare``. This module scores the testbed's checkpoints for them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from srlib.detection.blind import blind_scores
from srlib.detection.decide import (
    self_referential,
)
from srlib.detection.scoring import perplexity
from srlib.stats.metrics import metric_table
from srlib.testbed.runs import NULL
from srlib.testbed.testbed import Testbed

PLANTED = re.compile(r"^(.+) ×\d+$")  # a planted model's label: ``<benchmark> ×<k>``


def planted_on(label: str) -> str | None:
    """The benchmark a zoo model's leak was planted on (``<benchmark> ×<k>``), else None."""
    match = PLANTED.match(label)
    return match[1] if match else None


@dataclass(frozen=True)
class Stage:
    """One model to evaluate: a run's checkpoint after ``epoch`` (the base model: epoch 0)."""

    run: str
    epoch: int
    path: Path

    @property
    def label(self) -> str:
        """``<run> e<epoch>`` for tables and figures."""
        return f"{self.run} e{self.epoch}"


def stages(tb: Testbed) -> list[Stage]:
    """The base model, then every run's checkpoints in order."""
    out = [Stage("base", 0, tb.base)]
    for name, run in tb.runs.items():
        out += [Stage(name, k, p) for k, p in enumerate(run.checkpoints, 1)]
    return out


def black_stage(tb: Testbed, stage: Stage, calibration: bool = False) -> bool:
    """Whether black-box detectors run on this checkpoint: every trained one with
    ``black_box_stages="all"``, else only the last of the main run and, on the evaluated
    problems (not ``calibration``), of the null control: generation is slow on a CPU, and
    the claim's operating point is measured on the null control for SR black too."""
    if tb.config.black_box_stages == "all":
        return stage.run != "base"
    runs = (tb.main,) if calibration else (tb.main, NULL)
    return stage.run in runs and stage.epoch == tb.config.epochs


def blind(tb: Testbed) -> tuple[pd.Series, pd.Series]:
    """The blind text-only classifier (``srlib.detection.blind``) on the leaked / held-out split:
    out-of-fold scores of the samples and mean scores of the calibration samples, by id.
    It sees no model, so it is the same for every checkpoint (remembered on the testbed)."""
    if "blind" not in tb.memo:
        ids = [s.id for s in tb.samples]
        y = tb.split.set_index("id").leaked.reindex(ids).to_numpy(bool)
        own, cal = blind_scores(
            [s.text for s in tb.samples],
            y,
            [s.text for s in tb.calibration],
            seed=tb.config.seed,
        )
        tb.memo["blind"] = (
            pd.Series(own, index=ids),
            pd.Series(cal, index=[s.id for s in tb.calibration]),
        )
    return tb.memo["blind"]


def memorisation(tb: Testbed, table: pd.DataFrame, base: pd.DataFrame) -> dict:
    """Did the checkpoint memorise the leaked samples? The per-sample gain in mean token
    log-probability over the base model (nats) of leaked against held-out samples, with a
    one-sided Mann-Whitney test (leaked gain larger)."""
    gain = table.set_index("id").gray_scores.str[0] - base.set_index("id").gray_scores.str[0]
    labels = tb.split.set_index("id").leaked.reindex(gain.index)
    leaked, held = gain[labels], gain[~labels]
    test = stats.mannwhitneyu(leaked, held, alternative="greater")
    return {
        "leaked gain (nats)": float(leaked.mean()),
        "held-out gain (nats)": float(held.mean()),
        "leaked PPL": float(np.exp(-table.set_index("id").gray_scores.str[0][labels].mean())),
        "held-out PPL": float(np.exp(-table.set_index("id").gray_scores.str[0][~labels].mean())),
        "p (Mann-Whitney)": float(test.pvalue),
    }


def sr_subsets(table: pd.DataFrame, n: int, draws: int, seed: int = 0) -> pd.DataFrame:
    """SR gray with ``n`` of the scored variants, over ``draws`` random subsets: F1, MCC,
    precision and recall per draw (what the n-sensitivity study averages)."""
    rng = np.random.default_rng(seed)
    rows = []
    for draw in range(draws):
        flags = []
        for scores_ in table.gray_scores:
            variants = np.asarray(scores_[1:])
            pick = rng.choice(len(variants), size=min(n, len(variants)), replace=False)
            flags.append(
                self_referential(scores_[0], variants[pick]).leaked if len(variants) else None
            )
        m = metric_table(table.leaked.to_numpy(bool), flags, n_boot=0).set_index("metric").value
        rows.append(
            {"n": n, "draw": draw, **{k: m[k] for k in ("precision", "recall", "f1", "mcc", "fpr")}}
        )
    return pd.DataFrame(rows)


def naturalness_tag(tb: Testbed) -> str:
    """What names the naturalness-matched variants in the store: the scorer, the base model,
    by its key (not its folder, so a worker that opens the cache by another path agrees)."""
    return f"naturalness of base {tb.base_key}"


def naturalness(tb: Testbed):
    """The base model's mean log-likelihood of texts: the naturalness score that
    ``make_variants_many(naturalness=...)`` matches variants to."""
    base = tb.model(tb.base)
    return lambda texts: [perplexity(s).score for s in base.token_logprobs(texts)]
