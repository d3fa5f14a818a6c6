"""The real-model study: a pretrained model that has read code, audited and leaked on purpose.

1. **The audit** (``real_audit``): ``srlib.audit`` on the configured benchmarks, gray-box,
   every detector, with the control benchmark (the fresh problems, ``benchmarks.fresh``) as
   the empirical null: each benchmark's flag rate is read against the model's own rate on
   problems never published before it was trained, not against chance.
2. **The known leak** (``leak_claims``): per seed, the model continued-pre-trained on a random
   half of the control problems mixed with general text from the testbed's pinned corpus
   (``testbed.leak.continue_training``, the testbed's recipe), then the detection chapter's
   declared contrasts on it (``detection.declared``), keeping those a real model can
   answer: no clean calibration split is scored here, so the calibrated and
   calibration-matched points are left out. Discrimination ranks the leaked model's scores
   (AUC; TPR at the held-out half's low false-positive rates); threshold transport carries
   each rule's flag rate from the untouched model (the clean model: it saw neither the leak nor the
   general text) to the leaked one.

Every score goes through one score cache shared by the audit and the leak, so the untouched
model's scores of the control problems are computed once; each leaked run is cached under a
hash of the base model's files, its texts and its settings.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pandas as pd

from srlib.audit.models import open_model
from srlib.audit.run import Audit, audit
from srlib.benchmarks import load_benchmark
from srlib.detection.compare import long_table
from srlib.detection.contrasts import contrast_table
from srlib.detection.declared import declared_contrasts
from srlib.detection.detect import detect
from srlib.models.cache import CachedModel
from srlib.models.hf import fingerprint, model_folder
from srlib.realmodel.config import RealConfig
from srlib.realmodel.profile import audit_variants
from srlib.samples import Sample
from srlib.store import Artifact, Store, digest, text_digest
from srlib.testbed.build import corpus_of, split_samples
from srlib.testbed.leak import LeakSettings
from srlib.testbed.leak import train_run as train_leak
from srlib.testbed.locked import resolve
from srlib.testbed.runs import LeakRun, load_run
from srlib.transforms import Variants

NEEDS_CALIBRATION = ("calibrated", "matched")  # threshold modes read on a clean calibration split
SCORES = "scores.sqlite"  # the audit's and the leak's one score cache, in the chapter's folder


def label(config: RealConfig) -> str:
    """The audited model's name in tables."""
    return Path(config.model.rstrip("/")).name


def real_audit(config: RealConfig, out_dir: str | Path, progress: bool = True) -> Audit:
    """The audit of ``config.model`` on ``config.benchmarks`` against ``config.control``, in
    ``out_dir`` (its results keyed by its settings; the score cache beside them)."""
    return audit(
        {label(config): config.model},
        config.benchmarks,
        out_dir,
        n=config.n,
        setting="gray",
        control=config.control,
        limit=dict(config.limits),
        seed=config.seed,
        batch_size=config.score_batch,
        threads=config.threads,
        device=config.device,
        dtype=config.dtype,
        cache=Path(out_dir) / SCORES,
        keyed=True,
        progress=progress,
    )


def control_set(config: RealConfig, result: Audit) -> tuple[list[Sample], list[Variants]]:
    """The control problems and the variants the audit scored them with."""
    sets, variants = audited_sets(config, result)
    return sets[config.control], variants[config.control]


def audited_sets(
    config: RealConfig, result: Audit
) -> tuple[dict[str, list[Sample]], dict[str, list[Variants]]]:
    """Each audited sample set by name (the control under its benchmark spec) and the
    variants the audit scored it with."""
    from srlib.audit.summary import CONTROL

    names = {b: b for b in config.benchmarks} | {config.control: CONTROL}
    sets = {b: load_benchmark(b)[: config.limit_of(b)] for b in names}
    return sets, {b: audit_variants(result.out, names[b], s) for b, s in sets.items()}


def blind_rates(sets: dict[str, list[Sample]], variants: dict[str, list[Variants]]):
    """Per sample set, what a model-free classifier of original against variant text makes of
    them (``detection.blind.premise_summary``): SR's rule without a model."""
    from srlib.detection.blind import premise_scores, premise_summary

    rows = []
    for name, samples in sets.items():
        texts = [[v.text for v in vs] for vs in variants[name]]
        said = premise_summary(premise_scores([s.text for s in samples], texts))
        rows.append({"benchmark": name} | said)
    return pd.DataFrame(rows).set_index("benchmark")


def leak_settings(config: RealConfig, seed: int) -> LeakSettings:
    """How a leaked run of ``config`` trains."""
    return LeakSettings(
        repeats=config.repeats,
        epochs=config.epochs,
        lr=config.lr,
        batch_size=config.batch_size,
        block_size=config.block_size,
        seed=seed,
        device=config.device,
        threads=config.threads,
    )


def leaked_run(
    config: RealConfig,
    seed: int,
    samples: list[Sample],
    out_dir: str | Path,
    cache_dir: str | Path,
    progress: bool = True,
) -> tuple[LeakRun, pd.DataFrame]:
    """The model continued-pre-trained on the leaked half of ``samples`` drawn by ``seed``
    (through the store in ``out_dir``; the general text from the testbed's corpus in
    ``cache_dir``), and the split (id, benchmark, leaked)."""
    split = split_samples(samples, config.leaked_share, seed)
    chosen = set(split.id[split.leaked])
    leaked = {s.id: s.text for s in samples if s.id in chosen}
    corpus, _ = corpus_of(config.corpus_profile, cache_dir, progress=progress)
    general = corpus.mixture(config.cpt_chars, config.code_to_text, seed, use="cpt").texts
    base = model_folder(resolve(config.model))
    settings = leak_settings(config, seed)
    inputs = {
        "base": fingerprint(base),
        "general": text_digest(general),
        "leaked": digest(leaked),
        "settings": settings,
    }
    artifact = Artifact("runs", inputs, name=f"real-{label(config)}-seed{seed}")
    store = Store(out_dir)
    folder = store.get(artifact)
    if folder is None:
        with store.put(artifact) as tmp:
            train_leak(base, general, leaked, settings, tmp, progress)
        folder = store.path(artifact)
    return load_run(folder), split


def scored(
    config: RealConfig,
    model: str | Path,
    samples: list[Sample],
    variants: list[Variants],
    out_dir: str | Path,
    progress: bool = True,
) -> pd.DataFrame:
    """``detect``'s gray-box table of ``model`` on ``samples`` (scores through the cache in
    ``out_dir``)."""
    opened = open_model(
        str(model),
        device=config.device,
        dtype=config.dtype,
        batch_size=config.score_batch,
        threads=config.threads,
    )
    cached = CachedModel(opened.model, Path(out_dir) / SCORES, progress=progress)
    return detect(cached, samples, config.n, "gray", variants=variants, progress=progress)


def real_contrasts() -> list:
    """The declared contrasts of the gray-box setting that need no clean calibration split."""
    return [
        c
        for c in declared_contrasts(black=())
        if not any(arm.threshold.startswith(NEEDS_CALIBRATION) for arm in (c.a, c.b))
        and not c.name.startswith("best")
    ]


def leak_tables(
    config: RealConfig,
    result: Audit,
    out_dir: str | Path,
    cache_dir: str | Path,
    progress: bool = True,
) -> dict[int, tuple[pd.DataFrame, pd.DataFrame]]:
    """Per leak seed: the leaked model's and the untouched model's long detector tables on
    the control problems, labelled by that seed's split (``compare.long_table``); runs and
    scores in ``out_dir``, the general text from the testbed's corpus in ``cache_dir``."""
    samples, variants = control_set(config, result)
    clean = scored(config, config.model, samples, variants, out_dir, progress)
    out = {}
    for seed in config.leak_seeds:
        run, split = leaked_run(config, seed, samples, out_dir, cache_dir, progress)
        table = scored(config, run.checkpoints[-1], samples, variants, out_dir, progress)
        labels = split.set_index("id").leaked
        leaked = table.assign(leaked=table.id.map(labels))
        base = clean.assign(leaked=clean.id.map(labels))
        out[seed] = (long_table(leaked, base), long_table(base, base))
    return out


def leak_claims(config: RealConfig, tables: dict[int, tuple]) -> pd.DataFrame:
    """``contrasts.contrast_table`` of ``real_contrasts`` over the leak seeds."""
    parts = {f"seed {s}": (leaked, None, null) for s, (leaked, null) in tables.items()}
    options = {"fpr": config.fpr, "n_boot": config.n_boot, "seed": config.seed}
    return contrast_table(parts, real_contrasts(), **options)


def half_rates(tables: dict[int, tuple], rule: str = "SR gray") -> pd.DataFrame:
    """Per seed and half (leaked, held out) and for the untouched model: the share of the
    control problems ``rule`` flags, where it decides."""
    rows = []
    for seed, (leaked, null) in tables.items():
        for model, long in (("leaked model", leaked), ("untouched model", null)):
            mine = long[(long.detector == rule) & long.flag.notna()]
            for half, g in mine.groupby("leaked"):
                rows.append(
                    {
                        "seed": seed,
                        "model": model,
                        "half": "leaked" if half else "held out",
                        "problems": len(g),
                        "flagged": int(g.flag.astype(bool).sum()),
                        "rate": float(g.flag.astype(bool).mean()),
                    }
                )
    return pd.DataFrame(rows)


def config_rows(config: RealConfig) -> pd.DataFrame:
    """The configuration as a two-column table, for the chapter's settings."""
    return pd.DataFrame(
        [{"setting": k, "value": str(v)} for k, v in dataclasses.asdict(config).items()]
    )
