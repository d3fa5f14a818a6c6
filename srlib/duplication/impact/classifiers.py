"""The study's secret detectors, each behind one small interface (``Detector``): fit on a
training fold with its validation split, predict a test fold. Here: a Random Forest tuned by
differential evolution and a two-layer LSTM; the transformer encoders are in
``srlib.duplication.impact.encoders``. Every detector is seeded, so a fold gives the same result
whenever it is run."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from scipy import sparse
from scipy.optimize import differential_evolution
from sklearn.ensemble import RandomForestClassifier
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.metrics import f1_score

from srlib.duplication.impact.features import Dataset


class Detector(Protocol):
    """A secret detector: ``fit`` on train (validation for tuning and early stopping),
    ``predict`` booleans (true secret) for other rows of the same ``Dataset``."""

    name: str

    def fit(self, data: Dataset, train: np.ndarray, val: np.ndarray) -> Detector: ...

    def predict(self, data: Dataset, rows: np.ndarray) -> np.ndarray: ...


# --- Random Forest tuned by differential evolution ---------------------------------------

RF_BOUNDS = {
    "n_estimators": (20, 300),
    "max_depth": (2, 60),
    "min_samples_split": (2, 20),
    "min_samples_leaf": (1, 10),
    "max_features": (0.01, 0.5),  # share of the features tried per split
}
"""The hyper-parameters DE searches (the study's five), with their bounds."""


@dataclass
class RandomForestDE:
    """scikit-learn's Random Forest on TF-IDF character 3–5-grams of the masked context
    (``max_tfidf`` most frequent) plus the numeric features; its five hyper-parameters are
    chosen by ``scipy.optimize.differential_evolution`` on validation F1. ``maxiter`` and
    ``popsize`` are the budget (fits = (maxiter + 1) · popsize · 5), and so are the upper
    bounds ``max_trees`` and ``max_share`` (a fit's cost grows with both); ``params`` skips
    the search (e.g. to reuse the values found on another fold). The forest the search fitted
    at its best parameters is the one kept (a refit on the same rows with the same seed is
    the same forest), a parameter vector DE proposes twice is fitted once, and features of
    at most ``dense_cells`` cells are fitted dense: scikit-learn grows the same trees from
    dense and sparse input, the dense splitter faster (``bench/duplication_study.py``)."""

    maxiter: int = 2
    popsize: int = 2
    max_tfidf: int = 4000
    seed: int = 0
    n_jobs: int = -1
    params: dict | None = None
    max_trees: int = RF_BOUNDS["n_estimators"][1]  # the search's upper bound on trees
    max_share: float = RF_BOUNDS["max_features"][1]  # its upper bound on features per split
    dense_cells: int = 50_000_000  # features fitted dense up to this many cells (200 MB)
    name: str = "Random Forest"

    def _features(self, data: Dataset, rows: np.ndarray):
        text = self.vectorizer.transform([data.texts[i] for i in rows])
        features = sparse.hstack([text, sparse.csr_matrix(data.numeric[rows])]).tocsr()
        if features.shape[0] * features.shape[1] <= self.dense_cells:
            return features.toarray().astype(np.float32)  # the forest's own dtype
        return features

    def _forest(self, params: dict) -> RandomForestClassifier:
        return RandomForestClassifier(
            **params, class_weight="balanced", random_state=self.seed, n_jobs=self.n_jobs
        )

    def fit(self, data: Dataset, train: np.ndarray, val: np.ndarray) -> RandomForestDE:
        """Tune on (train, val) unless ``params`` are given, then fit on train."""
        self.vectorizer = TfidfVectorizer(
            analyzer="char_wb", ngram_range=(3, 5), max_features=self.max_tfidf, sublinear_tf=True
        ).fit([data.texts[i] for i in train])
        x_train, y_train = self._features(data, train), data.labels[train]
        losses: dict[tuple, float] = {}  # by parameters: DE may propose one vector twice
        best: dict[tuple, RandomForestClassifier] = {}  # the best forest so far, by parameters
        if self.params is None:
            x_val, y_val = self._features(data, val), data.labels[val]

            def loss(vector: np.ndarray) -> float:
                key = tuple(_rf_params(vector).items())
                if key not in losses:
                    forest = self._forest(dict(key)).fit(x_train, y_train)
                    losses[key] = -f1_score(y_val, forest.predict(x_val), zero_division=0)
                    if losses[key] <= min(losses.values()):
                        best.clear()
                        best[key] = forest
                return losses[key]

            bounds = dict(
                RF_BOUNDS,
                n_estimators=(RF_BOUNDS["n_estimators"][0], self.max_trees),
                max_features=(RF_BOUNDS["max_features"][0], self.max_share),
            )
            found = differential_evolution(
                loss,
                list(bounds.values()),
                maxiter=self.maxiter,
                popsize=self.popsize,
                seed=self.seed,
                polish=False,
                integrality=[True, True, True, True, False],
            )
            self.params = _rf_params(found.x)
        kept = best.get(tuple(self.params.items()))  # fitted on these rows with this seed
        self.forest = kept or self._forest(self.params).fit(x_train, y_train)
        return self

    def predict(self, data: Dataset, rows: np.ndarray) -> np.ndarray:
        """True secret or not, per row."""
        return self.forest.predict(self._features(data, rows)).astype(bool)


def _rf_params(vector: np.ndarray) -> dict:
    """DE's vector as RandomForestClassifier keyword arguments."""
    out = {}
    for (name, _), value in zip(RF_BOUNDS.items(), vector, strict=True):
        out[name] = float(value) if name == "max_features" else int(round(value))
    return out


# --- two-layer LSTM ---------------------------------------------------------------------


def fit_balanced(
    modules: list,
    optimiser,
    logits_of: Callable,
    labels: np.ndarray,
    epochs: int,
    batch_size: int,
    seed: int,
    score: Callable[[], float],
    steps: int | None = None,
) -> None:
    """The neural detectors' one training loop: seeded mini-batches of row positions
    ``0..len(labels)-1``, ``logits_of(positions)`` against the class-balanced binary
    cross-entropy, ``score()`` (validation F1) after each pass over the data and at the last
    step; the ``modules`` are left with the weights of the best of those. ``steps`` (None:
    ``epochs`` passes) is the number of optimiser steps, so that scenarios with fewer
    training samples train as long as the others (``budget.equal_steps``)."""
    import torch

    y = torch.tensor(labels, dtype=torch.float32)
    weight = positive_weight(labels)
    generator = torch.Generator().manual_seed(seed)
    per_pass = -(-len(labels) // batch_size)
    if not per_pass:
        raise ValueError("no training rows: a detector needs at least one")
    steps = epochs * per_pass if steps is None else steps
    best, state, done = -1.0, None, 0
    while done < steps:
        for m in modules:
            m.train()
        order = torch.randperm(len(labels), generator=generator).split(batch_size)
        for batch in order[: steps - done]:
            optimiser.zero_grad()
            loss = torch.nn.functional.binary_cross_entropy_with_logits(
                logits_of(batch), y[batch], pos_weight=weight
            )
            loss.backward()
            optimiser.step()
            done += 1
        value = score()
        if value > best:
            best = value
            state = [{k: v.clone() for k, v in m.state_dict().items()} for m in modules]
    for m, weights in zip(modules, state, strict=True):
        m.load_state_dict(weights)


def positive_weight(labels: np.ndarray):
    """The loss weight of true secrets, negatives / positives: the neural detectors' loss is
    balanced, as the Random Forest's ``class_weight="balanced"`` is (true secrets are rare)."""
    import torch

    positives = max(int(labels.sum()), 1)
    return torch.tensor((len(labels) - positives) / positives, dtype=torch.float32)


_TOKEN = re.compile(r"<SECRET[^>]*>|\w+|[^\w\s]")


def tokens(text: str) -> list[str]:
    """Word, punctuation and shape tokens of a masked context (the shape token kept whole)."""
    return _TOKEN.findall(text)


@dataclass
class LSTMDetector:
    """Embedding → two stacked bidirectional LSTM layers (``units``, then ``units // 2`` each
    way) with dropout → sigmoid, over the masked context's tokens (vocabulary from the
    training fold), read at the candidate's own position: the states of both directions at
    its shape token, which has then seen the whole context on either side (a last state
    would sit at the context's end, 200 characters from the candidate). Trained with Adam on
    the balanced loss for ``epochs``; the epoch with the best validation F1 is kept. The
    study's grid is units 128/192/256 × epochs 5/10/20; the CPU default is smaller."""

    units: int = 64
    epochs: int = 6
    embedding: int = 64
    dropout: float = 0.2
    max_tokens: int = 128
    vocab_size: int = 8000
    batch_size: int = 64
    lr: float = 2e-3
    seed: int = 0
    steps: int | None = None  # optimiser steps (None: ``epochs`` passes); see ``fit_balanced``
    name: str = "LSTM"

    def _encode(self, data: Dataset, rows: np.ndarray):
        """Token ids (0: padding, 1: unknown) and the shape token's position, per row."""
        import torch

        ids = np.zeros((len(rows), self.max_tokens), dtype=np.int64)
        at = np.zeros(len(rows), dtype=np.int64)
        for k, i in enumerate(rows):
            toks = tokens(data.texts[i])
            centre = next((j for j, t in enumerate(toks) if t.startswith("<SECRET")), 0)
            start = 0
            if len(toks) > self.max_tokens:  # keep the window around the secret's shape
                start = max(0, min(centre - self.max_tokens // 2, len(toks) - self.max_tokens))
                toks = toks[start : start + self.max_tokens]
            seq = [self.vocab.get(t, 1) for t in toks]
            ids[k, : len(seq)] = seq
            at[k] = centre - start
        return torch.from_numpy(ids), torch.from_numpy(at)

    def fit(self, data: Dataset, train: np.ndarray, val: np.ndarray) -> LSTMDetector:
        """Vocabulary, then ``epochs`` of training; keeps the best epoch on validation F1."""
        import torch

        torch.manual_seed(self.seed)
        counts = Counter(t for i in train for t in tokens(data.texts[i]))
        common = [t for t, c in counts.most_common(self.vocab_size) if c >= 2]
        self.vocab = {t: k + 2 for k, t in enumerate(common)}
        self.net = _LSTMNet(len(self.vocab) + 2, self.embedding, self.units, self.dropout)
        x, at = self._encode(data, train)
        fit_balanced(
            [self.net],
            torch.optim.Adam(self.net.parameters(), lr=self.lr),
            lambda batch: self.net(x[batch], at[batch]),
            data.labels[train],
            self.epochs,
            self.batch_size,
            self.seed,
            lambda: f1_score(data.labels[val], self.predict(data, val), zero_division=0),
            self.steps,
        )
        return self

    def predict(self, data: Dataset, rows: np.ndarray) -> np.ndarray:
        """True secret or not, per row (probability above 0.5)."""
        import torch

        self.net.eval()
        x, at = self._encode(data, rows)
        with torch.inference_mode():
            logits = torch.cat(
                [self.net(*b) for b in zip(x.split(256), at.split(256), strict=True)]
            )
        return (logits > 0).numpy()


def _LSTMNet(vocab: int, embedding: int, units: int, dropout: float):
    """The network: embedding, BiLSTM(units), dropout, BiLSTM(units // 2), dropout, linear
    on the second layer's states (both directions) at the candidate's position."""
    import torch

    class Net(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            half = max(units // 2, 1)
            self.embed = torch.nn.Embedding(vocab, embedding, padding_idx=0)
            self.first = torch.nn.LSTM(embedding, units, batch_first=True, bidirectional=True)
            self.second = torch.nn.LSTM(2 * units, half, batch_first=True, bidirectional=True)
            self.drop = torch.nn.Dropout(dropout)
            self.out = torch.nn.Linear(2 * half, 1)

        def forward(self, ids, at):
            h, _ = self.first(self.embed(ids))
            h, _ = self.second(self.drop(h))
            here = h[torch.arange(len(ids)), at]  # both directions' states at the candidate
            return self.out(self.drop(here)).squeeze(-1)

    return Net()
