"""The blind baseline: a model-free classifier that sees only the text.

Das, Zhang & Tramèr (2025) showed that many membership-inference results are reproduced by a
classifier that never queries the model: the members and non-members differ in distribution.
Here the classifier (character 2–4-gram TF-IDF and logistic regression, scikit-learn) is
trained to tell leaked from held-out samples with stratified cross-validation; each sample's
score is the probability from the fold that did not train on it. With a random leaked split it
should sit at chance (AUC ≈ 0.5); if it does not, the split is biased and every detector's
numbers are suspect.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold
from sklearn.pipeline import Pipeline, make_pipeline


def classifier(seed: int = 0) -> Pipeline:
    """Character 2–4-grams (TF-IDF, sublinear) into an L2 logistic regression."""
    return make_pipeline(
        TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 4), min_df=2, sublinear_tf=True),
        LogisticRegression(C=1.0, max_iter=2000, random_state=seed),
    )


def blind_scores(
    texts: Sequence[str],
    labels: Sequence[bool],
    others: Sequence[str] = (),
    folds: int = 5,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """Out-of-fold probabilities that each text is leaked, and the mean over folds of the
    probability for each of ``others`` (e.g. a clean calibration split, never trained on).
    Fewer folds are used when a class has fewer than ``folds`` samples."""
    y = np.asarray(labels, dtype=bool)
    if len(texts) != y.size:
        raise ValueError(f"{len(texts)} texts but {y.size} labels")
    folds = min(folds, int(y.sum()), int((~y).sum()))
    if folds < 2:
        raise ValueError("need at least 2 leaked and 2 held-out samples to cross-validate")
    texts = list(texts)
    scores = np.full(y.size, np.nan)
    other = np.zeros(len(others))
    for train, test in StratifiedKFold(folds, shuffle=True, random_state=seed).split(texts, y):
        model = classifier(seed).fit([texts[i] for i in train], y[train])
        scores[test] = model.predict_proba([texts[i] for i in test])[:, 1]
        if len(others):
            other += model.predict_proba(list(others))[:, 1] / folds
    return scores, other
