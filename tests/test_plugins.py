"""Bring your own detector: a function from a file outside the package registered beside the
built-ins, its source keyed, its failures counted, and every bad plug-in one clear error."""

from __future__ import annotations

import math

import numpy as np
import pytest

from srlib.detection import plugins, registry
from srlib.models.base import TokenScores


def _scores(*logprobs: float) -> TokenScores:
    """Token scores of a text whose predicted tokens have these log-probabilities."""
    n = len(logprobs)
    nan = np.full(n, np.nan)
    return TokenScores([f"t{i}" for i in range(n)], np.array(logprobs, dtype=float), nan, nan)


@pytest.fixture(autouse=True)
def _own_registry(monkeypatch):
    """Each test registers into a copy: the built-ins stay as they are for the others."""
    monkeypatch.setattr(registry, "DETECTORS", dict(registry.DETECTORS))


SCORES = '''
import math


def rank_min_k(token_scores, text):
    """The mean of the lowest fifth of the token log-probabilities."""
    logprobs = sorted(token_scores.logprobs)
    lows = logprobs[: max(1, len(logprobs) // 5)]
    return sum(lows) / len(lows)


def fragile(token_scores, text):
    if not len(token_scores.logprobs):
        raise ValueError("no tokens")
    return math.nan if text == "nan" else len(text)


def two_many(token_scores, text, extra):
    return 0.0


def sr_rule(original, variants):
    return original > max(variants)
'''


@pytest.fixture
def scores(tmp_path):
    path = tmp_path / "my_scores.py"
    path.write_text(SCORES)
    return path


def test_a_detector_from_a_file_outside_the_package_joins_the_registry(scores):
    found = plugins.plugin(f"{scores}:rank_min_k", "Rank Min-K%", "gray")
    table = registry.table()
    assert table.loc["Rank Min-K%", "family"] == "threshold baseline"
    assert table.loc["Rank Min-K%", "score"] == "score_plugin_rank_min_k"
    assert list(table.index[:2]) == ["SR gray", "SR black"]  # built-ins first, as before
    assert registry.names("threshold baseline")[-1] == "Rank Min-K%"
    rule = plugins.plugin(f"{scores}:sr_rule", "SR mine", "rule")
    assert rule.entry.family == "self-referential" and rule.entry.threshold_free
    values, failed = plugins.score_all(found, [(_scores(-1.0, -5.0, -2.0, -0.5, -3.0), "x")])
    assert values.tolist() == [-5.0] and not failed
    flipped = plugins.Plugin(found.entry, found.function, "gray", False, found.source)
    assert plugins.score_all(flipped, [(_scores(-1.0), "x")])[0].tolist() == [1.0]


def test_editing_a_detector_changes_its_source_key_and_nothing_else(scores):
    before = plugins.source_digest(plugins.load_function(f"{scores}:rank_min_k"))
    other = plugins.source_digest(plugins.load_function(f"{scores}:sr_rule"))
    scores.write_text(SCORES.replace("// 5", "// 4"))
    after = plugins.source_digest(plugins.load_function(f"{scores}:rank_min_k"))
    assert before != after
    assert plugins.source_digest(plugins.load_function(f"{scores}:sr_rule")) == other


def test_a_score_that_raises_or_is_not_a_number_is_undecided_and_counted(scores):
    found = plugins.plugin(f"{scores}:fragile", "Fragile", "gray")
    inputs = [(_scores(-1.0), "abc"), (_scores(), "x"), (_scores(-1.0), "nan")]
    values, failed = plugins.score_all(found, inputs)
    assert values[0] == 3.0 and math.isnan(values[1]) and math.isnan(values[2])
    assert failed == {"raised ValueError": 1, "not a finite number": 1}
    assert np.isnan(values).sum() == sum(failed.values())  # none dropped, none hidden


def test_bad_plug_ins_are_one_clear_error_each(scores, tmp_path):
    with pytest.raises(plugins.BadPlugin, match="importing 'no_such_package_xyz' failed"):
        plugins.load_function("no_such_package_xyz:f")
    with pytest.raises(plugins.BadPlugin, match="has no function 'absent'"):
        plugins.load_function(f"{scores}:absent")
    with pytest.raises(plugins.BadPlugin, match="no detector file"):
        plugins.load_function(f"{tmp_path / 'missing.py'}:f")
    with pytest.raises(plugins.BadPlugin, match="name a function as"):
        plugins.load_function("just_a_name")
    with pytest.raises(plugins.BadPlugin, match=r"called as f\(token_scores, text\)"):
        plugins.plugin(f"{scores}:two_many", "Too many", "gray")
    with pytest.raises(plugins.BadPlugin, match="unknown kind 'grey'"):
        plugins.plugin(f"{scores}:rank_min_k", "X", "grey")
    with pytest.raises(registry.DetectorCollision, match="'Min-K%' is already registered"):
        plugins.plugin(f"{scores}:rank_min_k", "Min-K%", "gray")
    plugins.plugin(f"{scores}:rank_min_k", "Mine", "gray")
    with pytest.raises(registry.DetectorCollision, match="'Mine'"):
        plugins.plugin(f"{scores}:rank_min_k", "Mine", "gray")
    broken = tmp_path / "broken.py"
    broken.write_text("import not_installed_anywhere\n")
    with pytest.raises(plugins.BadPlugin, match="ModuleNotFoundError"):
        plugins.load_function(f"{broken}:f")
