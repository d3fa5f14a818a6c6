"""SR's premise checked blind (``detection.blind.premise_scores``): a classifier of names and
tokens, cross-validated by problem, finds originals whose variants read differently and finds
nothing where they do not: there its AUC is not above chance and its rule (the original above
every variant) flags about its chance level ``1/(n + 1)``."""

from __future__ import annotations

import random

import pytest

from srlib.detection.blind import name_statistics, premise_scores, premise_summary

WORDS = ["total", "count", "index", "value", "items", "result", "left", "right", "node", "key"]


def _program(rng: random.Random, names: list[str]) -> str:
    a, b, c = names
    return (
        f"def {a}({b}, {c}):\n    {b} = {b} + {c} * {rng.randint(1, 9)}\n"
        f"    return [{b} for {c} in range({rng.randint(2, 20)})]\n"
    )


def _problems(styled: bool, problems: int = 120, n: int = 5, seed: int = 0):
    """Originals and their variants; ``styled``: the variants' names carry a lexicon suffix
    (what a renaming transformation can leave), else they are drawn like the original's."""
    rng = random.Random(seed)
    originals, variants = [], []
    for _ in range(problems):
        originals.append(_program(rng, rng.sample(WORDS, 3)))
        names = [rng.sample(WORDS, 3) for _ in range(n)]
        if styled:
            names = [[f"{w}_value" for w in ns] for ns in names]
        variants.append([_program(rng, ns) for ns in names])
    return originals, variants


def test_variants_that_read_differently_are_told_apart_without_a_model():
    found = premise_summary(premise_scores(*_problems(styled=True)))
    assert found["auc"] > 0.95 and found["flag_rate"] > 0.9
    assert found["chance"] == pytest.approx(1 / 6) and found["problems"] == 120


def test_indistinguishable_variants_find_no_style():
    """No signal, no finding: the AUC is not above chance (cross-validation on pure noise
    reads slightly below it) and the rule flags no more than its chance level."""
    found = premise_summary(premise_scores(*_problems(styled=False)))
    assert found["auc"] < 0.55, found
    assert found["flag_rate"] < found["chance"] + 0.06, found


def test_a_problem_without_variants_is_left_out_and_too_few_problems_are_an_error():
    originals, variants = _problems(styled=True, problems=12)
    variants[0] = []
    scores = premise_scores(originals, variants)
    assert 0 not in set(scores.problem) and scores.score.notna().all()
    with pytest.raises(ValueError, match="at least 2 problems"):
        premise_scores(originals[:1], variants[1:2])
    assert len(name_statistics("x = 1")) == len(name_statistics(originals[1]))
