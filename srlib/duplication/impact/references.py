"""The references every trained detector is read against: flag every candidate (MCC 0), a
fixed rule on the candidate's shape (no context, no training), and a linear model of the
context alone (no shape): where a detector does not beat them, it has learnt nothing the
shape or the bare context does not already give."""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from srlib.duplication.impact.features import Dataset, shape_rule

_SHAPE = re.compile(r"<SECRET[^>]*>")


class FlagEverything:
    """The trivial reference: every candidate is a secret (MCC 0, recall 1)."""

    name = "flag everything"

    def fit(self, data: Dataset, train: np.ndarray, val: np.ndarray) -> FlagEverything:
        """Nothing to learn."""
        return self

    def predict(self, data: Dataset, rows: np.ndarray) -> np.ndarray:
        """True for every row."""
        return np.ones(len(rows), dtype=bool)


class ShapeRule:
    """The no-training reference on the candidate's shape (``features.shape_rule``)."""

    name = "shape rule"

    def fit(self, data: Dataset, train: np.ndarray, val: np.ndarray) -> ShapeRule:
        """Nothing to learn: the rule is fixed."""
        return self

    def predict(self, data: Dataset, rows: np.ndarray) -> np.ndarray:
        """The rule's flags for ``rows``."""
        return shape_rule(data.numeric[rows])


def without_shape(text: str) -> str:
    """A masked context with its shape token made the same for every candidate."""
    return _SHAPE.sub("<SECRET>", text)


@dataclass
class ContextOnly:
    """Class-balanced logistic regression on TF-IDF character 3–5-grams of the context with
    the candidate's shape token blanked: what the surrounding code alone tells."""

    max_tfidf: int = 4000
    seed: int = 0
    name: str = "context only"

    def _texts(self, data: Dataset, rows: np.ndarray) -> list[str]:
        return [without_shape(data.texts[i]) for i in rows]

    def fit(self, data: Dataset, train: np.ndarray, val: np.ndarray) -> ContextOnly:
        """Vocabulary and weights from the training rows (validation unused: no tuning)."""
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.linear_model import LogisticRegression

        self.vectorizer = TfidfVectorizer(
            analyzer="char_wb", ngram_range=(3, 5), max_features=self.max_tfidf, sublinear_tf=True
        )
        x = self.vectorizer.fit_transform(self._texts(data, train))
        self.model = LogisticRegression(
            class_weight="balanced", max_iter=2000, random_state=self.seed
        ).fit(x, data.labels[train])
        return self

    def predict(self, data: Dataset, rows: np.ndarray) -> np.ndarray:
        """True secret or not, per row."""
        return self.model.predict(self.vectorizer.transform(self._texts(data, rows))).astype(bool)


@dataclass
class NearestNeighbour:
    """A pure memoriser, the memorisation test's positive control: each candidate gets the
    label of the training candidate whose masked context (shape token kept) is closest in
    cosine similarity of TF-IDF character 3–5-grams (ties: the first). It recalls, and does
    nothing else; not one of the study's detectors (``models=(..., "nearest neighbour")``)."""

    max_tfidf: int = 4000
    name: str = "nearest neighbour"

    def fit(self, data: Dataset, train: np.ndarray, val: np.ndarray) -> NearestNeighbour:
        """Remember the training rows (validation unused)."""
        from sklearn.feature_extraction.text import TfidfVectorizer

        self.vectorizer = TfidfVectorizer(
            analyzer="char_wb", ngram_range=(3, 5), max_features=self.max_tfidf, sublinear_tf=True
        )
        self.memory = self.vectorizer.fit_transform([data.texts[i] for i in train])
        self.labels = data.labels[train].astype(bool)
        return self

    def predict(self, data: Dataset, rows: np.ndarray, chunk: int = 512) -> np.ndarray:
        """The nearest training candidate's label, per row (``chunk`` rows at a time)."""
        x = self.vectorizer.transform([data.texts[i] for i in rows])
        memory = self.memory.T.toarray()  # rows are L2-normalised: dot products are cosines
        nearest = [
            (x[at : at + chunk].toarray() @ memory).argmax(axis=1)
            for at in range(0, x.shape[0], chunk)
        ]
        return self.labels[np.concatenate(nearest)] if nearest else np.zeros(0, dtype=bool)
