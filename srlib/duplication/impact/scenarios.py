"""The evaluation scenarios as fixed, seeded k-fold splits, made once and shared by every
model. The study's three (§III-D):

- **mixed**: every sample, duplicates included, in train and test (a random split of the
  raw dataset, as most evaluations do);
- **near-duplicate**: only ``C_dedup`` (unique ∪ near ∪ exact representatives): exact copies
  are gone, near duplicates may still straddle train and test;
- **unique**: test folds only from ``C_unique``; training on ``C_exact ∪ C_near`` plus the
  unique samples outside the test fold. A context near an exact group's member is already
  ``C_near`` (``dedup.partition``), and ``duplicated_in_train`` checks that no test context
  has an exact or near duplicate in its training fold.

And two grouped by where a candidate lives (stratified group k-fold), the condition a
detector meets in use:

- **file**: test folds hold whole files never seen in training (a file's candidates share
  their surroundings);
- **repository**: test folds hold whole repositories never seen in training, CredData's own
  practice: a detector meeting a new codebase.

Validation is split the way the test is (``grouped_validation``): grouped by the same unit where
the test is grouped, drawn from the unique pool (so duplicate-free against the rows that
fit) where the test is, at random otherwise — early stopping and tuning then favour what the
test rewards, not memory of the training rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from sklearn.model_selection import StratifiedGroupKFold, StratifiedKFold, train_test_split

from srlib.duplication.data.contexts import Context
from srlib.duplication.dedup.neardup import Fingerprint, near_pairs
from srlib.duplication.dedup.partition import fingerprints

SCENARIOS = ("mixed", "near-duplicate", "unique", "file", "repository")
GROUPED = ("file", "repository")
"""The scenarios whose folds hold whole groups: each needs every sample's group."""
ROLES = ("train", "val", "test")


class LeakingSplit(AssertionError):
    """A test context has an exact or near duplicate in its training fold."""


def duplicated_in_train(
    contexts: Sequence[Context],
    test: np.ndarray,
    train: np.ndarray,
    languages: Sequence[str] | None = None,
    method: str = "lsh",
) -> tuple[np.ndarray, np.ndarray]:
    """Which test samples have an exact duplicate (same context) and which a near duplicate
    (Allamanis's rule) among the training samples: two boolean arrays over ``test``."""
    texts = [c.text for c in contexts]
    train_texts = {texts[i] for i in train}
    exact = np.array([texts[i] in train_texts for i in test], dtype=bool)
    first = {}  # one training sample per distinct context is enough for near pairs
    for i in train:
        first.setdefault(texts[i], i)
    pool = np.concatenate([np.asarray(test, dtype=int), np.fromiter(first.values(), int)])
    langs = [languages[i] for i in pool] if languages else None
    fps = fingerprints([contexts[i] for i in pool], langs)
    pairs = near_pairs(fps, min_tokens=3, method=method)  # the partition's rule
    near = np.zeros(len(test), dtype=bool)
    for a, b in pairs:
        if (a < len(test)) != (b < len(test)):
            near[min(a, b)] = True
    return exact, near


def char_ngrams(text: str, n: int = 8) -> list[str]:
    """The character ``n``-grams of ``text`` (the whole text when it is shorter)."""
    return [text[i : i + n] for i in range(max(1, len(text) - n + 1))]


def char_duplicated_in_train(
    contexts: Sequence[Context],
    test: np.ndarray,
    train: np.ndarray,
    n: int = 8,
    threshold: float = 0.9,
    method: str = "lsh",
) -> np.ndarray:
    """Which test samples have a training context whose character ``n``-gram sets reach a
    Jaccard of ``threshold``: a leak check independent of the partition's token rule (it
    sees, for instance, two base64 blobs of one file that differ in a few characters)."""
    texts = [c.text for c in contexts]
    first = {}  # one training sample per distinct context
    for i in train:
        first.setdefault(texts[i], i)
    pool = np.concatenate([np.asarray(test, dtype=int), np.fromiter(first.values(), int)])
    fps = [Fingerprint.of(char_ngrams(texts[i], n)) for i in pool]
    pairs = near_pairs(fps, t0=threshold, t1=0.0, method=method)  # set Jaccard only
    leaked = np.zeros(len(test), dtype=bool)
    for a, b in pairs:
        if (a < len(test)) != (b < len(test)):
            leaked[min(a, b)] = True
    return leaked


def unique_test_pool(parts: pd.DataFrame) -> np.ndarray:
    """Indices of ``C_unique``: the samples the unique scenario may test on (the partition
    already calls near any context near an exact group's member, so none is left to drop)."""
    return np.flatnonzero(parts.part.to_numpy() == "unique")


def make_folds(
    labels: Sequence[bool],
    parts: pd.DataFrame,
    contexts: Sequence[Context],
    languages: Sequence[str] | None = None,
    k: int = 5,
    val_share: float = 0.1,
    seed: int = 0,
    method: str = "lsh",
    check: bool = True,
    groups: Mapping[str, Sequence[str]] | None = None,
    scenarios: Sequence[str] = SCENARIOS[:3],
) -> pd.DataFrame:
    """The folds of ``scenarios``: one row per (scenario, fold, sample) with its ``role``
    (train / val / test). A grouped scenario needs ``groups[scenario]``, each sample's file
    or repository. With ``check``, the unique scenario is verified leak-free, validation
    rows included (``LeakingSplit`` otherwise)."""
    y = np.asarray(labels, dtype=bool)
    n = len(y)
    if len(parts) != n or len(contexts) != n:
        raise ValueError(f"{n} labels, {len(parts)} partition rows, {len(contexts)} contexts")
    unknown = [s for s in scenarios if s not in SCENARIOS]
    if unknown:
        raise ValueError(f"unknown scenario(s) {unknown}; choose from {SCENARIOS}")
    if not 0 < val_share < 0.5:
        raise ValueError(f"val_share must lie in (0, 0.5), got {val_share}")
    frames = []
    for scenario in scenarios:
        if scenario in GROUPED:
            frames += _grouped_folds(scenario, y, _groups(groups, scenario, n), k, val_share, seed)
            continue
        testable, train_only = _plan(scenario, n, parts)
        counts = np.bincount(y[testable].astype(int), minlength=2)
        if counts.min() < k:
            raise ValueError(
                f"{scenario}: {counts[1]} true and {counts[0]} false samples can test; "
                f"{k} folds need at least {k} of each"
            )
        folds = StratifiedKFold(k, shuffle=True, random_state=seed)
        for fold, (tr, te) in enumerate(folds.split(testable, y[testable])):
            rest, test = testable[tr], testable[te]
            if scenario == "unique":  # validation from the pool, like the test
                pool_fit, val = _split(rest, y, val_share, seed + fold)
                fit = np.concatenate([pool_fit, train_only])
            else:
                fit, val = _split(np.concatenate([rest, train_only]), y, val_share, seed + fold)
            if check and scenario == "unique":
                for role, rows in (("test", test), ("validation", val)):
                    exact, near = duplicated_in_train(contexts, rows, fit, languages, method)
                    if exact.any() or near.any():
                        raise LeakingSplit(
                            f"unique fold {fold}: {int(exact.sum())} {role} contexts with an "
                            f"exact and {int(near.sum())} with a near duplicate in training"
                        )
            frames += _frames(scenario, fold, fit, val, test)
    return pd.concat(frames, ignore_index=True)


def _plan(scenario: str, n: int, parts: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """An ungrouped scenario's testable samples and the samples that only ever train."""
    if scenario == "mixed":
        return np.arange(n), np.zeros(0, int)
    if scenario == "near-duplicate":
        return np.flatnonzero(parts.dedup.to_numpy()), np.zeros(0, int)
    pool = unique_test_pool(parts)
    return pool, np.setdiff1d(np.arange(n), pool)


def _split(rows: np.ndarray, y: np.ndarray, share: float, seed: int):
    """(fit, validation): a stratified random ``share`` of ``rows`` held out."""
    return train_test_split(rows, test_size=share, stratify=y[rows], random_state=seed)


def _groups(groups, scenario: str, n: int) -> np.ndarray:
    """Each sample's group for a grouped scenario, checked: one per sample, none empty."""
    if not groups or scenario not in groups:
        raise ValueError(f"{scenario}: the scenario needs each sample's {scenario}")
    g = np.asarray(groups[scenario], dtype=object)
    if len(g) != n:
        raise ValueError(f"{scenario}: {len(g)} groups for {n} samples")
    empty = int(sum(not x for x in g))
    if empty:
        raise ValueError(f"{scenario}: {empty} of {n} samples name no {scenario}")
    return g


def _grouped_folds(scenario: str, y, groups, k: int, val_share: float, seed: int) -> list:
    """Stratified group k-fold, no group on both sides; validation grouped the same way,
    from the training fold's groups alone."""
    if len(set(groups)) < k:
        raise ValueError(f"{scenario}: {len(set(groups))} groups cannot make {k} folds")
    folds = StratifiedGroupKFold(k, shuffle=True, random_state=seed)
    frames = []
    for fold, (train, test) in enumerate(folds.split(np.zeros(len(y)), y, groups)):
        fit, val = grouped_validation(train, y, groups, val_share, seed + fold)
        frames += _frames(scenario, fold, fit, val, test)
    return frames


def grouped_validation(
    rows: np.ndarray, y: np.ndarray, groups: np.ndarray, share: float, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """(fit, validation) of ``rows`` with whole groups held out for validation — about
    ``share`` of them (stratified group split) — so no validation group also fits."""
    g = groups[rows]
    splits = max(2, min(round(1 / share), len(set(g))))
    if len(set(g)) < 2:
        raise ValueError(f"{len(set(g))} group(s) in a training fold: none left to validate on")
    split = StratifiedGroupKFold(splits, shuffle=True, random_state=seed)
    fit, val = next(split.split(np.zeros(len(rows)), y[rows], g))
    return rows[fit], rows[val]


def _frames(scenario: str, fold: int, fit, val, test) -> list[pd.DataFrame]:
    return [
        pd.DataFrame({"scenario": scenario, "fold": fold, "sample": idx, "role": role})
        for role, idx in (("train", fit), ("val", val), ("test", test))
    ]


def fold_indices(folds: pd.DataFrame, scenario: str, fold: int) -> dict[str, np.ndarray]:
    """``{"train": ..., "val": ..., "test": ...}`` sample indices of one fold."""
    f = folds[(folds.scenario == scenario) & (folds.fold == fold)]
    if f.empty:
        raise ValueError(f"no fold {fold} of scenario {scenario!r} in these folds")
    return {role: f["sample"][f.role == role].to_numpy() for role in ROLES}


def _partners(pairs: set[tuple[int, int]], size: int) -> list[set[int]]:
    """Each index's partners in ``pairs``."""
    out: list[set[int]] = [set() for _ in range(size)]
    for a, b in pairs:
        out[a].add(b)
        out[b].add(a)
    return out


def leakage_table(
    folds: pd.DataFrame,
    contexts: Sequence[Context],
    languages: Sequence[str] | None = None,
    method: str = "lsh",
) -> pd.DataFrame:
    """Per scenario: samples tested, and the share of test contexts with an exact or a near
    duplicate in their training fold (over all folds) — by the partition's rule, and by an
    independent one: character 8-grams with a Jaccard of at least 0.9. Both rules' pairs are
    found once over all contexts and looked up per fold: a pair's verdict depends on its two
    contexts alone, so this equals ``duplicated_in_train`` and ``char_duplicated_in_train``
    fold by fold (tested), at one search instead of one per fold."""
    texts = [c.text for c in contexts]
    token = _partners(
        near_pairs(fingerprints(contexts, languages), min_tokens=3, method=method), len(texts)
    )
    chars = [Fingerprint.of(char_ngrams(t)) for t in texts]
    char = _partners(near_pairs(chars, t0=0.9, t1=0.0, method=method), len(texts))
    rows = []
    for scenario, g in folds.groupby("scenario", sort=False):
        exact = near = leaked = tested = 0
        for fold in sorted(g.fold.unique()):
            idx = fold_indices(folds, scenario, fold)
            train = set(idx["train"].tolist())
            train_texts = {texts[i] for i in train}
            for i in idx["test"]:
                is_exact = texts[i] in train_texts
                exact += is_exact
                near += not is_exact and not token[i].isdisjoint(train)
                leaked += not char[i].isdisjoint(train)
            tested += len(idx["test"])
        rows.append(
            {
                "scenario": scenario,
                "test samples": tested,
                "exact duplicate in train": exact / tested,
                "near duplicate in train": near / tested,
                "character 8-grams ≥ 0.9 in train": leaked / tested,
            }
        )
    return pd.DataFrame(rows).set_index("scenario")
