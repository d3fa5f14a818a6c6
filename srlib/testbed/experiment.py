"""The testbed's experiments as tidy tables: every detector on every checkpoint, against the
known leak. Scores go through the disk cache (``cache_dir/scores.sqlite``), so a rerun scores
nothing.

Which detectors there are, their families and which an auditor can deploy is the
registry's (``srlib.detection.registry``); how they are compared is
``srlib.detection.compare``. This module scores the testbed's checkpoints for them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from srlib.detection.blind import blind_scores
from srlib.detection.decide import (
    self_referential,
)
from srlib.detection.detect import detect
from srlib.detection.metrics import metric_table
from srlib.detection.scoring import ngram_accuracy_many, perplexity
from srlib.models.cache import CachedModel
from srlib.models.hf import HFModel
from srlib.store import Artifact, digest, key_of
from srlib.testbed.build import Testbed
from srlib.transforms import Variants


@dataclass(frozen=True)
class Stage:
    """One model to evaluate: a run's checkpoint after ``epoch`` (the base model: epoch 0)."""

    run: str
    epoch: int
    path: Path

    @property
    def label(self) -> str:
        """``run@epoch`` for tables and figures."""
        return f"{self.run} e{self.epoch}"


def stages(tb: Testbed) -> list[Stage]:
    """The base model, then every run's checkpoints in order."""
    out = [Stage("base", 0, tb.base)]
    for name, run in tb.runs.items():
        out += [Stage(name, k, p) for k, p in enumerate(run.checkpoints, 1)]
    return out


def model(tb: Testbed, path: Path, progress: bool = False) -> CachedModel:
    """A checkpoint behind the testbed's score cache."""
    c = tb.config
    hf = HFModel(
        str(path), device=c.device, dtype=c.dtype, batch_size=c.score_batch, threads=c.threads
    )
    return CachedModel(hf, tb.cache_dir / "scores.sqlite", progress=progress)


def scores(
    tb: Testbed,
    path: Path,
    n: int,
    black: bool = False,
    variants: list[Variants] | None = None,
    progress: bool = False,
) -> pd.DataFrame:
    """``detect`` on the testbed's samples with their first ``n`` variants (or the given
    ``variants``), gray-box and, with ``black``, black-box with n-gram accuracy; the base
    model as reference; labels joined. One row per sample, kept as a parquet table under a
    hash of the model, the texts, the settings and the scoring code."""
    lm = model(tb, path, progress)
    variants = variants or [Variants(v[:n]) for v in tb.variants]
    base = model(tb, tb.base) if Path(path) != Path(tb.base) else None
    texts = [[s.text] + [v.text for v in vs] for s, vs in zip(tb.samples, variants, strict=True)]
    inputs = {
        "model": [lm.fingerprint, key_of(path)],  # content, and the artifact it came from
        "reference": [base.fingerprint, key_of(tb.base)] if base else "",
        "texts": digest(texts),
        "labels": digest(tb.split[["id", "leaked"]].to_dict("records")),
        "black": black,
        "max_new_tokens": tb.config.max_new_tokens,
    }
    artifact = Artifact("tables", inputs)
    folder = tb.store.get(artifact)
    if folder is None:
        table = _detect(tb, lm, base, tb.samples, variants, black, progress)
        table = table.merge(tb.split[["id", "leaked"]], on="id")
        with tb.store.put(artifact) as tmp:
            table.to_parquet(tmp / "table.parquet")
        folder = tb.store.path(artifact)
    return _read_table(folder / "table.parquet")


def _read_table(file: Path) -> pd.DataFrame:
    """A cached score table, its per-variant score columns as lists again."""
    table = pd.read_parquet(file)
    for column in table.columns:
        if column.endswith("_scores"):
            table[column] = table[column].map(list)
    return table


def calibration_scores(tb: Testbed, path: Path, black: bool = False) -> pd.DataFrame:
    """Scores of the known-clean calibration samples under one checkpoint: gray-box with the
    variants the first ``calibration_variants`` of them have (so self-referential margins
    can be calibrated too), black-box on the originals only (generation is slow)."""
    lm = model(tb, path)
    base = model(tb, tb.base) if Path(path) != Path(tb.base) else None
    table = _detect(tb, lm, base, tb.calibration, tb.calibration_variants, False, False)
    if black:
        none = [Variants() for _ in tb.calibration]
        black_table = _detect(tb, lm, base, tb.calibration, none, True, False)
        extra = [c for c in black_table.columns if c not in table.columns]
        table = table.join(black_table[extra])
    return table.assign(leaked=False)


def _detect(tb, lm, base, samples, variants, black: bool, progress: bool) -> pd.DataFrame:
    """``detect`` with the testbed's settings, plus n-gram accuracy when ``black``."""
    table = detect(
        lm,
        samples,
        variants=variants,
        setting="both" if black else "gray",
        reference=base,
        max_new_tokens=tb.config.max_new_tokens,
        progress=progress,
    )
    if black:
        acc = ngram_accuracy_many(lm, [s.text for s in samples])
        table["score_ngram_acc"] = [a.score for a in acc]
    return table


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


def naturalness(tb: Testbed):
    """The base model's mean log-likelihood of texts: the naturalness score that
    ``make_variants_many(naturalness=...)`` matches variants to."""
    base = model(tb, tb.base)
    return lambda texts: [perplexity(s).score for s in base.token_logprobs(texts)]
