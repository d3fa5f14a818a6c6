"""How a detector's MCC on repositories it has never seen grows with the number of
repositories it trains on: the duplication study's learning curve, the prediction a user with
a dataset of another size needs.

Each fold of the repository scenario keeps its test repositories; its training repositories
are put in a seeded order once per fold, and the detector is trained on the first ``m`` of them
(their fitting and validation rows, so validation stays grouped by repository) for each size
``m`` — nested subsets, so that a larger size only adds repositories. Every size predicts the
same test candidates, so the curve's points are pooled over folds (each candidate once per
size) and read under one ``stats.resample.ClusterBootstrap``: every point's interval resamples
repositories and their files, and every step between sizes is paired. Neural detectors train
the steps they train in the study whatever the size (``budget.equal_steps``), and a Random
Forest takes the parameters its search found on the same fold's full training set
(``run_study`` stores them): a design choice that holds the budget and the tuning fixed, so
the curve measures data. One order of repositories per fold: the intervals carry the test
repositories' variance, not which m repositories a user happens to have (larger at small m)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from srlib.costs import costed
from srlib.duplication.impact.budget import equal_steps, largest_training_fold
from srlib.duplication.impact.drops import percentile_interval
from srlib.duplication.impact.features import Dataset
from srlib.duplication.impact.scenarios import fold_indices
from srlib.duplication.impact.study import Prepared, StudyConfig, make_detector, result_file
from srlib.execution.progress import tqdm
from srlib.stats.resample import ClusterBootstrap
from srlib.store import code_digests, digest, write_json

SCENARIO = "repository"


def subsets(
    folds: pd.DataFrame,
    repos: Sequence[str],
    labels: Sequence[bool],
    sizes: Sequence[int | None],
    seed: int = 0,
) -> list[dict]:
    """Per repository fold and size: the rows that fit and validate (from the first ``size``
    of the fold's training repositories in a seeded order, the second one chosen to bring
    the class the first lacks) and the fold's test rows, with the number of repositories
    used. ``None``, or a size above a fold's repository count, is that fold's whole training
    set (``whole``)."""
    repos, labels = np.asarray(repos, dtype=object), np.asarray(labels, dtype=bool)
    out = []
    for fold in sorted(folds.fold[folds.scenario == SCENARIO].unique()):
        idx = fold_indices(folds, SCENARIO, fold)
        seen = np.unique(repos[np.concatenate([idx["train"], idx["val"]])])
        order = _both_classes_first(
            np.random.default_rng([seed, int(fold)]).permutation(seen), repos, labels
        )
        for size in sizes:
            if size is not None and size < 2:
                raise ValueError(
                    f"a learning-curve size must be at least 2 (one repository may hold one "
                    f"class only), got {size}"
                )
            used = seen.size if size is None else min(size, seen.size)
            chosen = np.isin(repos, order[:used])  # per candidate: in a chosen repository
            train, val = (rows[chosen[rows]] for rows in (idx["train"], idx["val"]))
            out.append(
                {"fold": int(fold), "size": "all" if size is None else int(size)}
                | {"repositories": int(used), "whole": used == seen.size}
                | {"train": train, "val": val, "test": idx["test"]}
            )
    return out


def _both_classes_first(order: np.ndarray, repos: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """``order`` with, where the first repository holds one class only, the first later one
    that holds the other moved to second place: every size from 2 trains on both classes."""
    classes = [set(labels[repos == r]) for r in order]
    if len(order) < 2 or len(classes[0]) == 2:
        return order
    other = next((i for i, c in enumerate(classes) if c - classes[0]), None)
    if other is None or other == 1:
        return order
    return np.concatenate([order[:1], order[other : other + 1], np.delete(order, [0, other])])


def tuned_params(out_dir: str | Path) -> dict[tuple[str, int], dict]:
    """(model, fold) → the parameters a detector's search found on that repository fold, from
    a study run's results (``run_study``), for the curve to reuse."""
    found = {}
    for file in sorted(Path(out_dir, "results").glob(f"*--{SCENARIO}--*.json")):
        record = json.loads(file.read_text())
        if "params" in record:
            found[record["model"], int(record["fold"])] = record["params"]
    return found


def run_curve(
    data: Dataset,
    folds: pd.DataFrame,
    repos: Sequence[str],
    sizes: Sequence[int],
    models: Sequence[str],
    new_detector,
    out_dir: str | Path,
    seed: int = 0,
    tuned: dict | None = None,
    study_dir: str | Path | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Every model × size × repository fold, resuming from ``out_dir/curve``: the pooled
    predictions (model, size, fold, repositories used, sample, predicted).
    ``new_detector(name)`` gives a fresh detector; ``tuned`` maps (model, fold) to a Random
    Forest's parameters (its search is then skipped); a fold's whole training set is the
    repository scenario's own fold, read from the study's results in ``study_dir`` where it
    ran (the same rows, the same model)."""
    folder = Path(out_dir) / f"curve-{digest(code_digests([__name__]))}"  # a changed curve
    (folder / "results").mkdir(parents=True, exist_ok=True)  # recomputes, the study stays
    largest = largest_training_fold(folds)
    jobs = [(m, s) for m in models for s in subsets(folds, repos, data.labels, sizes, seed)]
    frames = []
    for model, part in tqdm(jobs, desc="learning curve", disable=not progress):
        file = result_file(folder, model, f"{part['size']}-repositories", part["fold"])
        ran = result_file(study_dir or folder, model, SCENARIO, part["fold"])
        if part["whole"] and study_dir is not None and ran.is_file():
            file = ran
        elif not file.is_file():
            with costed(folder, file, f"learning curve: {model}"):
                detector = new_detector(model)
                if hasattr(detector, "steps"):
                    detector.steps = equal_steps(detector, largest)
                if tuned and (model, part["fold"]) in tuned and hasattr(detector, "params"):
                    detector.params = tuned[model, part["fold"]]
                rows = _fit_rows(data, part)
                detector.fit(data, *rows)
                predicted = detector.predict(data, part["test"]).astype(bool)
                write_json(file, {"test": part["test"].tolist(), "predicted": predicted.tolist()})
        record = json.loads(file.read_text())
        frames.append(
            pd.DataFrame(
                {"model": model, "size": str(part["size"]), "fold": part["fold"]}
                | {"repositories": part["repositories"], "sample": record["test"]}
                | {"predicted": np.asarray(record["predicted"], bool)}
            )
        )
    columns = ["model", "size", "fold", "repositories", "sample", "predicted"]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)


def _fit_rows(data: Dataset, part: dict) -> tuple[np.ndarray, np.ndarray]:
    """(train, val) of one subset: where the chosen repositories leave fit rows of one class
    (validation holds the other), fit and validation rows train together; where they leave
    no validation of both classes, the training rows validate."""
    train, val = part["train"], part["val"]
    if len(set(data.labels[train])) < 2:  # fit rows of one class: the validation ones join
        train = np.concatenate([train, val])
    if val.size == 0 or len(set(data.labels[val])) < 2:
        val = train
    return train, val


def curve_table(
    predictions: pd.DataFrame, labels: Sequence[bool], boot: ClusterBootstrap, level: float = 0.95
) -> pd.DataFrame:
    """Per model and size (indexed by the repositories trained on, the folds' mean): pooled
    MCC on the repository folds' test candidates with its interval, and the step from the
    previous size (paired) with its interval."""
    y = np.asarray(labels, dtype=bool)
    rows = []
    if predictions.empty:  # no repository scenario in the run
        index = pd.MultiIndex.from_tuples([], names=["model", "repositories"])
        return pd.DataFrame(columns=["mcc", "low", "high"], index=index)
    for model, by_model in predictions.groupby("model", sort=False):
        before = None
        points = sorted(by_model.groupby("size"), key=lambda item: item[1].repositories.mean())
        for _, g in points:
            order = np.argsort(g["sample"].to_numpy())
            sample = g["sample"].to_numpy()[order]
            if np.unique(sample).size != sample.size:
                raise ValueError(f"{model!r} tested a candidate twice at one size")
            value, boots = boot.metric(y[sample], g.predicted.to_numpy(bool)[order], sample)
            lo, hi = percentile_interval(boots, level)
            used = g.groupby("fold").repositories.first().mean()
            row = {"model": model, "repositories": used, "mcc": value, "low": lo, "high": hi}
            if before is not None and np.array_equal(before[0], sample):
                step_lo, step_hi = percentile_interval(boots - before[2], level)
                row |= {"step": value - before[1], "step low": step_lo, "step high": step_hi}
            rows.append(row)
            before = (sample, value, boots)
    return pd.DataFrame(rows).set_index(["model", "repositories"])


def learning_curve(
    prepared: Prepared,
    config: StudyConfig,
    run_dir: str | Path,
    sizes: Sequence[int],
    models: Sequence[str] | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    level: str = "repository",
    progress: bool = False,
) -> pd.DataFrame:
    """The curve of a study run (``run_dir``, ``study.run_study``'s folder) for ``models``
    (default: the run's, but flag-everything) at ``sizes`` below every fold's repository
    count and at each fold's whole training set, intervals resampling at ``level``:
    ``curve_table``'s rows (none where the run has no repository scenario)."""
    chosen = [m for m in (models or config.models) if m != "flag everything"]
    folds = prepared.folds[prepared.folds.scenario == SCENARIO]
    repos = np.asarray(prepared.repos, dtype=object)
    fewest = min(
        (np.unique(repos[g["sample"][g.role != "test"]]).size for _, g in folds.groupby("fold")),
        default=0,
    )
    sizes = [*sorted(m for m in set(sizes) if m < fewest), None]  # and each fold's whole set
    predictions = run_curve(
        prepared.data,
        prepared.folds,
        prepared.repos,
        sizes,
        chosen,
        lambda name: make_detector(name, config, Path(run_dir)),
        run_dir,
        seed=config.seed,
        tuned=tuned_params(run_dir),
        study_dir=run_dir,
        progress=progress,
    )
    boot = ClusterBootstrap(prepared.repos, prepared.files, level, n_boot, seed)
    return curve_table(predictions, prepared.data.labels, boot)
