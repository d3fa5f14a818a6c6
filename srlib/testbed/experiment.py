"""The testbed's experiments as tidy tables: every detector on every checkpoint, against the
known leak. Scores go through the disk cache (``cache_dir/scores.sqlite``), so a rerun scores
nothing.

Detectors (``kind``): self-referential ones decide without a threshold — ``SR gray``,
``SR black`` and the reference-contrasted ``SR gray vs base`` / ``SR gray vs unrelated``
(``decide.contrasted``); their margin is their score. Baselines (PPL, Min-K%, Min-K%++,
Zlib, reference ratio with the base model, NGO, n-gram accuracy) give oriented scores that
need a threshold: the **oracle** (max F1 on the labels, an upper bound no audit has), one
**calibrated** on the known-clean calibration split at a fixed FPR (what an auditor can do),
or none (ROC-AUC). "flag everything" and the blind text-only classifier are the trivial
references.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from srlib.detection.blind import blind_scores
from srlib.detection.decide import (
    calibrated_threshold,
    contrasted,
    oracle_threshold,
    self_referential,
    threshold_decide,
)
from srlib.detection.detect import detect
from srlib.detection.metrics import metric_table
from srlib.detection.scoring import ngram_accuracy_many, perplexity
from srlib.models.cache import CachedModel
from srlib.models.hf import HFModel
from srlib.store import Artifact, digest, key_of
from srlib.testbed.build import Testbed
from srlib.transforms import Variants

BASELINES = {
    "PPL": "score_ppl",
    "Min-K%": "score_min_k",
    "Min-K%++": "score_min_k_pp",
    "Zlib": "score_zlib",
    "Ref (base)": "score_ref",
    "NGO": "score_ngo",
    "n-gram acc": "score_ngram_acc",
    "Blind (text only)": "score_blind",  # kind "blind": sees no model (``srlib.detection.blind``)
}
SR_SCORES = {"Min-K%": "min_k_scores", "Min-K%++": "min_k_pp_scores", "Zlib": "zlib_scores"}
"""The self-referential rule on other oriented scores than −log PPL (``SR gray``)."""


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
    hf = HFModel(str(path), device=c.device, dtype=c.dtype, batch_size=c.score_batch)
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


def detectors(table: pd.DataFrame, base: pd.DataFrame, unrelated: pd.DataFrame) -> pd.DataFrame:
    """The long table of every detector: id, benchmark, leaked, detector, kind, flag (for
    self-referential detectors), score (oriented). ``base`` and ``unrelated`` are the
    reference models' ``scores`` tables on the same variants."""
    rows = []
    ref = {
        "SR gray vs base": base.set_index("id").gray_scores,
        "SR gray vs unrelated": unrelated.set_index("id").gray_scores,
    }
    base_lists = {c: base.set_index("id")[c] for c in SR_SCORES.values() if c in base}
    for r in table.itertuples():

        def add(detector, kind, flag, score, r=r):
            rows.append(
                {
                    "id": r.id,
                    "benchmark": r.benchmark,
                    "leaked": r.leaked,
                    "detector": detector,
                    "kind": kind,
                    "flag": flag,
                    "score": score,
                }
            )

        add("SR gray", "self-referential", r.sr_gray, r.sr_gray_margin)
        for name, other in ref.items():
            v = contrasted(r.gray_scores, other[r.id])
            add(name, "self-referential", v.leaked, v.margin)
        for label, column in SR_SCORES.items():
            if column in table:
                own = getattr(r, column)
                v = self_referential(own[0], own[1:])
                add(f"SR {label}", "self-referential", v.leaked, v.margin)
                v = contrasted(own, base_lists[column][r.id])
                add(f"SR {label} vs base", "self-referential", v.leaked, v.margin)
        if "sr_black" in table:
            add("SR black", "self-referential", r.sr_black, r.sr_black_margin)
        for name, column in BASELINES.items():
            if column in table:
                add(
                    name,
                    "blind" if column == "score_blind" else "baseline",
                    None,
                    getattr(r, column),
                )
    return pd.DataFrame(rows)


def evaluate_detectors(
    long: pd.DataFrame,
    calibration: pd.DataFrame | None,
    fpr: float = 0.05,
    n_boot: int = 1000,
    groups: bool = True,
) -> pd.DataFrame:
    """Tidy metrics (with bootstrap intervals) per detector, threshold mode and benchmark
    group ("all" and, with ``groups``, each benchmark): self-referential detectors as they
    decide ("none"), baselines at the oracle threshold, every detector whose score the
    ``calibration`` long table (``detectors`` on clean samples) holds at the threshold
    calibrated there ("calibrated"; for self-referential ones, on their margin), and flag
    everything."""
    rows = []
    parts = [("all", long)]
    if groups:
        parts += [(b, g) for b, g in long.groupby("benchmark", sort=False)]
    clean = {} if calibration is None else dict(list(calibration.groupby("detector").score))
    for group, frame in parts:
        for (detector, kind), d in frame.groupby(["detector", "kind"], sort=False):
            y, s = d.leaked.to_numpy(bool), d.score.to_numpy(float)
            modes = []
            if kind == "self-referential":
                modes.append(("none", list(d.flag)))
            else:
                t_oracle, _ = oracle_threshold(s, y)
                modes.append(("oracle", threshold_decide(s, t_oracle, inclusive=True)))
            if detector in clean and clean[detector].notna().any():
                t_cal = calibrated_threshold(clean[detector], fpr)
                modes.append(("calibrated", threshold_decide(s, t_cal)))
            for mode, flags in modes:
                m = metric_table(y, flags, s, n_boot=n_boot)
                rows += [
                    {"group": group, "detector": detector, "kind": kind, "threshold": mode, **rec}
                    for rec in m.to_dict("records")
                ]
        y = frame.drop_duplicates("id").leaked.to_numpy(bool)
        m = metric_table(y, np.ones(len(y), bool), np.zeros(len(y)), n_boot=n_boot)
        rows += [
            {
                "group": group,
                "detector": "flag everything",
                "kind": "reference",
                "threshold": "none",
                **rec,
            }
            for rec in m.to_dict("records")
        ]
    return pd.DataFrame(rows)


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


def deployable(metrics: pd.DataFrame) -> pd.DataFrame:
    """The rows an auditor can run: self-referential rules as they decide, baselines at the
    calibrated threshold, and the references (drops oracle thresholds and calibrated SR)."""
    sr = metrics.kind == "self-referential"
    return metrics[
        (sr & (metrics.threshold == "none"))
        | (~sr & metrics.threshold.isin(["none", "calibrated"]))
    ]


def wide(metrics: pd.DataFrame, which=("f1", "mcc", "roc_auc", "fpr")) -> pd.DataFrame:
    """One row per detector and threshold: each metric as ``value [low, high]`` text."""
    m = metrics[metrics.metric.isin(which)].copy()
    m["text"] = [
        f"{v:.2f} [{lo:.2f}, {hi:.2f}]" if np.isfinite(v) else "–"
        for v, lo, hi in zip(m.value, m.low, m.high, strict=True)
    ]
    index = [c for c in ("stage", "group", "detector", "threshold") if c in m]
    return m.pivot_table(index=index, columns="metric", values="text", aggfunc="first")[list(which)]


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
