"""The duplication-impact study (Soltaniani & Ghafari 2026, §III–IV): every detector family on
every fold of every scenario (the study's three and the file- and repository-grouped ones),
P/R/F1/MCC per fold and summaries in the shape of the study's Tables IV–VI; the inference
(cluster-resampled intervals, drops net of composition) is in ``drops``.

``run_study`` writes each fold's result to ``out_dir/results/`` as soon as it is done and the
folds to ``out_dir/folds.parquet`` once, so an interrupted run resumes where it stopped and
every model sees the same folds. Random Forest hyper-parameters are searched on each fold's
own validation rows: a search on one fold's validation rows would tune on test rows of the
other folds."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.metrics import f1_score, matthews_corrcoef, precision_score, recall_score

from srlib.costs import costed
from srlib.duplication.data.secretdata import SecretRecord
from srlib.duplication.dedup.partition import partition
from srlib.duplication.impact.budget import budget_table, equal_steps, largest_training_fold
from srlib.duplication.impact.classifiers import LSTMDetector, RandomForestDE
from srlib.duplication.impact.encoders import EmbeddingCache, FineTunedEncoder, FrozenEncoderMLP
from srlib.duplication.impact.features import Dataset, dataset
from srlib.duplication.impact.references import (
    ContextOnly,
    FlagEverything,
    NearestNeighbour,
    ShapeRule,
)
from srlib.duplication.impact.scenarios import SCENARIOS, fold_indices, make_folds
from srlib.execution.progress import tqdm
from srlib.store import (
    Artifact,
    atomic_path,
    claim_folder,
    digest,
    text_digest,
    write_json,
)

MODELS = (
    "flag everything",
    "shape rule",
    "context only",
    "Random Forest",
    "LSTM",
    "Encoder + MLP (frozen)",
    "Encoder (fine-tuned)",
)
"""The detector families, after the three references every model must beat: flag every
candidate, a fixed rule on the candidate's shape that learns nothing, and a linear model of
the context alone (``references``)."""
CONTROLS = ("nearest neighbour",)
"""Detectors run only on request: a pure memoriser, the memorisation test's positive control."""
KNOWN = (*MODELS, *CONTROLS)
METRICS = ("precision", "recall", "f1", "mcc")


@dataclass(frozen=True)
class StudyConfig:
    """The study's settings; each field says what it changes."""

    models: tuple[str, ...] = MODELS
    scenarios: tuple[str, ...] = SCENARIOS  # grouped ones need records naming repo and file
    k: int = 5  # folds per scenario
    val_share: float = 0.1  # of each training fold, split like its test: tuning, early stop
    seed: int = 0
    rf_maxiter: int = 1  # differential-evolution generations after the first (budget)
    rf_popsize: int = 2  # DE population per parameter (budget)
    rf_max_trees: int = 300  # the search's upper bound on the number of trees
    rf_max_share: float = 0.5  # its upper bound on the share of features tried per split
    rf_max_tfidf: int = 4000  # character n-gram features (the most frequent)
    lstm_units: int = 64  # first LSTM layer, each direction (the study: 128 / 192 / 256)
    lstm_epochs: int = 5  # (the study: 5 / 10 / 20)
    encoder: str | None = None  # HF encoder folder or cached id; None: all-MiniLM-L6-v2
    max_length: int = 64  # encoder tokens per context (its window centred on the secret)
    mlp_epochs: int = 40
    finetune_max_train: int | None = 96  # training samples fine-tuned on (None: all)
    finetune_epochs: int = 2
    finetune_max_val: int | None = 64  # validation samples that pick its best epoch

    def replace(self, **changes) -> StudyConfig:
        """A copy with ``changes``; an unknown field is an error naming it."""
        unknown = set(changes) - set(asdict(self))
        if unknown:
            raise ValueError(f"unknown study setting(s) {sorted(unknown)}")
        return replace(self, **changes)


PROFILES = {
    "cpu": StudyConfig(
        models=MODELS[:-1],  # fine-tuning on a few dozen samples on CPU says nothing: gpu only
        rf_popsize=1,
        rf_max_trees=100,
        rf_max_share=0.1,
        rf_max_tfidf=1000,
        lstm_units=16,  # each way: bidirectional
        lstm_epochs=3,
    ),
    "quick": StudyConfig(
        models=MODELS[:-1],  # fine-tuning's code path is tested on its own (18 s of 37 here)
        k=2,
        rf_maxiter=0,
        rf_max_trees=40,
        rf_popsize=1,
        lstm_units=16,
        lstm_epochs=1,
        mlp_epochs=5,
        max_length=32,
        finetune_max_train=16,
        finetune_epochs=1,
        finetune_max_val=8,
    ),
    "gpu": StudyConfig(
        rf_maxiter=10,
        rf_popsize=5,
        lstm_units=128,
        lstm_epochs=10,
        encoder="microsoft/graphcodebert-base",
        max_length=256,
        finetune_max_train=None,
        finetune_epochs=3,
        finetune_max_val=None,
    ),
}
"""``cpu``: the book's default on 2 cores, sized for the vendored CredData subset (a smaller
forest search, a narrower LSTM, no fine-tuning); ``quick``: tests; ``gpu``: the study's
setting (GraphCodeBERT from the HF cache, whole folds fine-tuned)."""


@dataclass
class Prepared:
    """A record set made ready for the study: contexts, languages, partition, model inputs
    and the folds every model shares."""

    contexts: list
    languages: list[str]
    parts: pd.DataFrame
    data: Dataset
    folds: pd.DataFrame
    repos: list[str]  # each record's repository, the grouped scenario's and resampling's unit
    files: list[str]  # each record's file within it (``file_key``)


def prepare(
    records: Sequence[SecretRecord],
    config: StudyConfig,
    window: int = 200,
    method: str = "lsh",
    progress: bool = False,
) -> Prepared:
    """Contexts, the exact / near / unique partition, masked inputs and the scenarios'
    folds of ``records`` (the unique scenario checked leak-free; the grouped scenarios from
    each record's ``repo`` and ``file``)."""
    contexts = [r.context(window) for r in records]
    languages = [r.language for r in records]
    parts = partition(contexts, languages, method=method, progress=progress)
    data = dataset(records, window)
    repos, files = [r.repo for r in records], [file_key(r) for r in records]
    groups = {"file": files, "repository": repos}
    folds = make_folds(
        data.labels,
        parts,
        contexts,
        languages,
        config.k,
        config.val_share,
        config.seed,
        method,
        groups=groups,
        scenarios=config.scenarios,
    )
    return Prepared(contexts, languages, parts, data, folds, repos, files)


def file_key(record: SecretRecord) -> str:
    """The file-grouped scenario's unit: the record's file within its repository ("" where
    the record names no file, which the scenario refuses)."""
    return f"{record.repo}/{record.file}" if record.file else ""


def result_file(out_dir: str | Path, model: str, scenario: str, fold: int) -> Path:
    """Where ``run_study`` writes one model's result on one fold of one scenario."""
    slug = re.sub(r"[^a-z0-9]+", "-", model.lower()).strip("-")
    return Path(out_dir) / "results" / f"{slug}--{scenario}--{fold}.json"


def budgets(config: StudyConfig, folds: pd.DataFrame, cache_dir: Path) -> pd.DataFrame:
    """What each of the configuration's models trains for on these folds (``budget``)."""
    detectors = {m: make_detector(m, config, cache_dir) for m in config.models}
    return budget_table(detectors, largest_training_fold(folds))


def make_detector(name: str, config: StudyConfig, cache_dir: Path):
    """A fresh detector of family ``name`` with the configuration's settings."""
    seed = config.seed
    if name == "flag everything":
        return FlagEverything()
    if name == "shape rule":
        return ShapeRule()
    if name == "context only":
        return ContextOnly(max_tfidf=config.rf_max_tfidf, seed=seed)
    if name == "nearest neighbour":
        return NearestNeighbour(max_tfidf=config.rf_max_tfidf)
    if name == "Random Forest":
        return RandomForestDE(
            config.rf_maxiter,
            config.rf_popsize,
            seed=seed,
            max_trees=config.rf_max_trees,
            max_share=config.rf_max_share,
            max_tfidf=config.rf_max_tfidf,
        )
    if name == "LSTM":
        return LSTMDetector(units=config.lstm_units, epochs=config.lstm_epochs, seed=seed)
    if name == "Encoder + MLP (frozen)":
        cache = EmbeddingCache(cache_dir / "embeddings", config.encoder, config.max_length)
        return FrozenEncoderMLP(cache, epochs=config.mlp_epochs, seed=seed)
    if name == "Encoder (fine-tuned)":
        return FineTunedEncoder(
            config.encoder,
            config.finetune_max_train,
            config.finetune_epochs,
            config.max_length,
            max_val=config.finetune_max_val,
            seed=seed,
        )
    raise ValueError(f"unknown detector {name!r}; choose from {KNOWN}")


def study_artifact(data: Dataset, folds: pd.DataFrame, config: StudyConfig) -> Artifact:
    """What a study's results depend on: its data, folds and settings (the chosen models
    excluded, so running a subset later reuses the same folder) and the study's code."""
    settings = {k: v for k, v in asdict(config).items() if k != "models"}
    inputs = {
        "settings": settings,
        "folds": digest(pd.util.hash_pandas_object(folds, index=False).to_numpy().tobytes()),
        "texts": text_digest(data.texts),
        "labels": digest(data.labels.tobytes()),
    }
    return Artifact("dedup-study", inputs)


def run_folder(base: str | Path, prepared: Prepared, config: StudyConfig) -> Path:
    """``base/<key>``: one folder per set of inputs, folds, settings and study code, so a
    changed input or a changed srlib recomputes in a fresh folder."""
    return Path(base) / study_artifact(prepared.data, prepared.folds, config).key


def fold_metrics(y: np.ndarray, predicted: np.ndarray) -> dict[str, float]:
    """Precision, recall, F1 and MCC of one fold (0 where undefined)."""
    return {
        "precision": precision_score(y, predicted, zero_division=0),
        "recall": recall_score(y, predicted, zero_division=0),
        "f1": f1_score(y, predicted, zero_division=0),
        "mcc": matthews_corrcoef(y, predicted),
    }


def run_study(
    data: Dataset,
    folds: pd.DataFrame,
    config: StudyConfig,
    out_dir: str | Path,
    cache_dir: str | Path | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Every model × scenario × fold of ``config`` on ``data``, resuming from ``out_dir``;
    the tidy results (model, scenario, fold, metric, value). ``out_dir`` is claimed for this
    study (``store.claim_folder``): one that holds results of other data, folds, settings or
    study code is refused in one line naming what differs, never reported as this run's."""
    folds = folds.reset_index(drop=True)
    out = claim_folder(out_dir, study_artifact(data, folds, config))
    (out / "results").mkdir(exist_ok=True)
    if not (out / "folds.parquet").is_file():
        with atomic_path(out / "folds.parquet") as tmp:
            folds.to_parquet(tmp)
    cache = Path(cache_dir) if cache_dir else out
    largest = largest_training_fold(folds)
    jobs = [
        (m, s, f)
        for m in config.models
        for s in config.scenarios
        for f in sorted(folds.fold[folds.scenario == s].unique())
    ]
    for model, scenario, fold in tqdm(jobs, desc="folds", disable=not progress):
        file = result_file(out, model, scenario, fold)
        if file.is_file():
            continue
        with costed(out, file, f"duplication study: {model}"):
            idx = fold_indices(folds, scenario, fold)
            detector = make_detector(model, config, cache)
            if hasattr(detector, "steps"):
                detector.steps = equal_steps(detector, largest)
            detector.fit(data, idx["train"], idx["val"])
            predicted = detector.predict(data, idx["test"])
            record = {"model": model, "scenario": scenario, "fold": int(fold)}
            record |= fold_metrics(data.labels[idx["test"]], predicted)
            record |= {"test": idx["test"].tolist(), "predicted": predicted.astype(int).tolist()}
            if getattr(detector, "params", None) is not None:  # what a search found (the curve's)
                record["params"] = detector.params
            write_json(file, record)
    return read_results(out, config)


def read_results(out_dir: str | Path, config: StudyConfig | None = None) -> pd.DataFrame:
    """The per-fold results written so far, tidy (model, scenario, fold, metric, value)."""
    rows = [json.loads(f.read_text()) for f in sorted(Path(out_dir, "results").glob("*.json"))]
    wide = pd.DataFrame(rows, columns=["model", "scenario", "fold", *METRICS])
    if config is not None:
        wide = wide[wide.model.isin(config.models) & wide.scenario.isin(config.scenarios)]
    tidy = wide.melt(["model", "scenario", "fold"], METRICS, "metric", "value")
    return tidy.sort_values(["model", "scenario", "fold", "metric"], ignore_index=True)


def summary(results: pd.DataFrame) -> pd.DataFrame:
    """Mean ± standard deviation over folds per model × scenario × metric (Tables IV–VI)."""
    g = results.groupby(["scenario", "model", "metric"], sort=False).value
    table = pd.DataFrame({"mean": g.mean(), "std": g.std(ddof=1)}).reset_index()
    table["text"] = [f"{m:.2f} ± {s:.2f}" for m, s in zip(table["mean"], table["std"], strict=True)]
    wide = table.pivot_table(
        index=["scenario", "model"], columns="metric", values="text", aggfunc="first"
    )
    order = [s for s in SCENARIOS if s in wide.index.get_level_values(0)]
    return wide.reindex(order, level=0)[list(METRICS)]


def languages_table(languages: Sequence[str], parts: pd.DataFrame) -> pd.DataFrame:
    """Records per language and part of the partition."""
    frame = pd.DataFrame({"language": list(languages), "part": parts.part.to_numpy()})
    return frame.pivot_table(index="language", columns="part", aggfunc="size", fill_value=0)
