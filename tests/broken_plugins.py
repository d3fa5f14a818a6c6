"""Detectors of a researcher's own that fail on every sample, one for each way a plug-in can
fail at run time (raise, NaN, a string, None), as a score and as a rule: the tests of the
chapter path and of the audit read the same file."""

BROKEN = """
import math


def score_raises(token_scores, text):
    raise ValueError("broken")


def score_nan(token_scores, text):
    return math.nan


def score_string(token_scores, text):
    return "high"


def score_none(token_scores, text):
    return None


def rule_raises(model, sample, variants):
    raise ValueError("broken")


def rule_nan(model, sample, variants):
    return math.nan


def rule_string(model, sample, variants):
    return "yes"


def rule_none(model, sample, variants):
    return None
"""

RETURNED = {"raises": "raised ValueError", "nan": "returned NaN", "none": "returned None",
            "string": "returned a str, not a number"}  # fmt: skip


def names() -> list[str]:
    """Every function of ``BROKEN``: ``score_<how>`` and ``rule_<how>`` for each ``RETURNED``."""
    return [f"{kind}_{how}" for kind in ("score", "rule") for how in RETURNED]
