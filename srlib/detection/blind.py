"""Blind checks: model-free classifiers that see only the text.

**The blind baseline.** Das, Zhang & Tramèr (2025) showed that many membership-inference
results are reproduced by a classifier that never queries the model: the members and
non-members differ in distribution.
Here the classifier (character 2–4-gram TF-IDF and logistic regression, scikit-learn) is
trained to tell leaked from held-out samples with stratified cross-validation; each sample's
score is the probability from the fold that did not train on it. With a random leaked split it
should sit at chance (AUC ≈ 0.5); if it does not, the split is biased and every detector's
numbers are suspect.

**SR's premise, blind** (``premise_scores``): SR flags a sample when the model finds the
original easier than every variant. If a classifier that never queries a model can already
tell an original from its variants by identifier and token statistics, part of that
preference is the variants' style, not memory. Each text (an original or one of its
variants) gets the out-of-fold probability of being the original, from folds grouped by
problem (no problem's texts on both sides), and the same rule SR applies reads it: a problem
is flagged when its original scores above every variant. Its flag rate sits at ``1/(n + 1)``
for indistinguishable texts; the detection chapter sets it beside SR's flag rate on problems
the leaked model never saw.
"""

from __future__ import annotations

import builtins
import keyword
import math
import re
from collections.abc import Sequence

import numpy as np
import pandas as pd
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GroupKFold, StratifiedKFold
from sklearn.pipeline import Pipeline, make_pipeline, make_union
from sklearn.preprocessing import FunctionTransformer, StandardScaler

from srlib.stats.metrics import RANKING


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


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+|\S")
_KEYWORDS = frozenset(keyword.kwlist) | frozenset(dir(builtins))


def _names(text: str) -> list[str]:
    """The identifiers a text uses (keywords and builtins left out)."""
    return [n for n in _NAME.findall(text) if n not in _KEYWORDS]


def name_statistics(text: str) -> list[float]:
    """Identifier and token statistics of one text: tokens, distinct names, the names' mean
    length, their shares that are one character, hold an underscore, hold a digit or capital,
    and how often a name repeats."""
    tokens, names = _TOKEN.findall(text), _names(text)
    distinct = set(names) or {""}
    lengths = [len(n) for n in distinct]
    return [
        math.log1p(len(tokens)),
        math.log1p(len(distinct)),
        float(np.mean(lengths)),
        float(np.mean([len(n) == 1 for n in distinct])),
        float(np.mean(["_" in n for n in distinct])),
        float(np.mean([any(c.isdigit() or c.isupper() for c in n) for n in distinct])),
        len(names) / max(len(distinct), 1),
    ]


def premise_classifier(seed: int = 0) -> Pipeline:
    """The names' word pieces (TF-IDF of identifiers split at ``_`` and case changes) beside
    ``name_statistics``, into an L2 logistic regression."""
    pieces = TfidfVectorizer(
        analyzer=lambda text: [w.lower() for n in _names(text) for w in _PIECE.findall(n)],
        min_df=2,
        sublinear_tf=True,
    )
    numbers = make_pipeline(
        FunctionTransformer(lambda texts: np.array([name_statistics(t) for t in texts])),
        StandardScaler(),
    )
    return make_pipeline(
        make_union(pieces, numbers),
        LogisticRegression(C=1.0, max_iter=2000, random_state=seed),
    )


_PIECE = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def premise_scores(
    originals: Sequence[str], variants: Sequence[Sequence[str]], folds: int = 5, seed: int = 0
) -> pd.DataFrame:
    """One row per text (problem index, ``original``, out-of-fold probability of being the
    original), folds grouped by problem; problems without variants are left out."""
    rows = [
        (k, True, text)
        for k, (text, vs) in enumerate(zip(originals, variants, strict=True))
        if len(vs)
    ]
    rows += [(k, False, v) for k, vs in enumerate(variants) for v in vs]
    frame = pd.DataFrame(rows, columns=["problem", "original", "text"])
    folds = min(folds, frame.problem.nunique())
    if folds < 2:
        raise ValueError("need at least 2 problems with variants to cross-validate by problem")
    frame["score"] = np.nan
    texts, y = frame.text.tolist(), frame.original.to_numpy()
    for train, test in GroupKFold(folds).split(texts, y, frame.problem):
        model = premise_classifier(seed).fit([texts[i] for i in train], y[train])
        frame.loc[frame.index[test], "score"] = model.predict_proba([texts[i] for i in test])[:, 1]
    return frame.drop(columns="text")


def premise_summary(scores: pd.DataFrame) -> dict[str, float]:
    """What ``premise_scores`` says: the AUC of original against variant, the share of
    problems whose original scores above every one of its variants (SR's rule, blind), that
    share's chance level — per problem ``1/(texts)`` where its top score is one text's alone,
    0 where texts tie at the top (the strict rule then flags none of them) — and the
    one-sided binomial p-value of the flags against it (the chance levels' mean)."""
    from scipy.stats import binomtest

    y, s = scores.original.to_numpy(bool), scores.score.to_numpy(float)
    by = scores.groupby("problem")
    top = by.apply(lambda g: bool(g.score[g.original].max() > g.score[~g.original].max()))
    unique = by.score.apply(lambda v: int((v == v.max()).sum()) == 1)
    chance = float((unique / by.size()).mean())
    flagged, n = int(top.sum()), len(top)
    p = binomtest(flagged, n, chance, "greater").pvalue if 0 < chance < 1 else float("nan")
    return {
        "problems": float(n),
        "auc": float(RANKING["roc_auc"](y, s)),
        "flag_rate": flagged / n,
        "chance": chance,
        "p_above_chance": float(p),
    }
