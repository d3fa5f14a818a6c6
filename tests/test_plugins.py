"""Bring your own detector: a function from a file outside the package registered beside the
built-ins, its source keyed, its failures counted, and every bad plug-in one clear error."""

from __future__ import annotations

import math

import numpy as np
import pytest
from broken_plugins import BROKEN, RETURNED
from broken_plugins import names as broken_names

from srlib.detection import plugins, registry
from srlib.models.base import TokenScores
from srlib.stats.significance import NO_VERDICT


def _scores(*logprobs: float) -> TokenScores:
    """Token scores of a text whose predicted tokens have these log-probabilities."""
    n = len(logprobs)
    nan = np.full(n, np.nan)
    return TokenScores([f"t{i}" for i in range(n)], np.array(logprobs, dtype=float), nan, nan)


pytestmark = pytest.mark.usefixtures("own_registry")  # what a test registers is gone after it


SCORES = '''
import math


def rank_min_k(token_scores, text):
    """The mean of the lowest fifth of the token log-probabilities."""
    logprobs = sorted(token_scores.logprobs)
    lows = logprobs[: max(1, math.ceil(len(logprobs) / 5))]
    return sum(lows) / len(lows)


def fragile(token_scores, text):
    if not len(token_scores.logprobs):
        raise ValueError("no tokens")
    return math.nan if text == "nan" else len(text)


def two_many(token_scores, text, extra):
    return 0.0


def shorter(model, sample):
    return -len(sample.text)


def beats_all(model, sample, variants):
    """Leaked where the original is shorter than every variant (by how much)."""
    if not variants:
        raise ValueError("no variants")
    return min(len(v.text) for v in variants) - len(sample.text)


def loose(*args):
    return 0.0
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
    assert table.loc["SR Rank Min-K%", "family"] == "self-referential"
    assert table.loc["SR Rank Min-K%", "threshold_free"]  # the SR rule on the new score
    assert found.scores_column == "plugin_rank_min_k_scores"
    values, failed = plugins.score_all(found, [(_scores(-1.0, -5.0, -2.0, -0.5, -3.0), "x")])
    assert values.tolist() == [-5.0] and not failed
    flipped = plugins.Plugin(found.entry, found.function, "gray", False, found.source)
    assert plugins.score_all(flipped, [(_scores(-1.0), "x")])[0].tolist() == [1.0]


def test_editing_a_detector_changes_its_source_key_and_nothing_else(scores):
    before = plugins.source_digest(plugins.load_function(f"{scores}:rank_min_k"))
    other = plugins.source_digest(plugins.load_function(f"{scores}:shorter"))
    scores.write_text(SCORES.replace("/ 5", "/ 4"))
    after = plugins.source_digest(plugins.load_function(f"{scores}:rank_min_k"))
    assert before != after
    assert plugins.source_digest(plugins.load_function(f"{scores}:shorter")) == other


HELPED = """
SHARE = 0.2


def _lows(values):
    return sorted(values)[: max(1, int(len(values) * SHARE))]


def helped(token_scores, text):
    return sum(_lows(list(token_scores.logprobs))) / len(_lows(list(token_scores.logprobs)))


def alone(token_scores, text):
    return 0.0
"""


def test_a_helper_or_constant_of_its_file_is_part_of_a_detectors_key(tmp_path):
    path = tmp_path / "helped.py"
    keys = {}
    for label, text in [
        ("first", HELPED),
        ("helper edited", HELPED.replace("[: max(1,", "[: max(2,")),
        ("constant edited", HELPED.replace("SHARE = 0.2", "SHARE = 0.3")),
    ]:
        path.write_text(text)
        keys[label] = {f: plugins.source_digest(plugins.load_function(f"{path}:{f}"))
                       for f in ("helped", "alone")}  # fmt: skip
    assert len({k["helped"] for k in keys.values()}) == 3  # each edit rescores it
    assert len({k["alone"] for k in keys.values()}) == 1  # and not what does not use them


OPAQUE = {
    "list constant": ("WEIGHTS = [1.0, 2.0]\n", "WEIGHTS[0]", "[1.0, 2.0]", "[1.0, 3.0]"),
    "dict constant": ("TABLE = {'a': 1}\n", "TABLE['a']", "{'a': 1}", "{'a': 2}"),
    "array constant": ("import numpy as np\nARRAY = np.array([1.0])\n", "float(ARRAY[0])",
                       "np.array([1.0])", "np.array([2.0])"),
    "lru_cache helper": ("import functools\n\n\n@functools.lru_cache\ndef helper():\n"
                         "    return 1.0\n", "helper()", "return 1.0", "return 2.0"),
    "partial helper": ("import functools\n\n\ndef _scale(x, k):\n    return x * k\n\n\n"
                       "helper = functools.partial(_scale, k=1.0)\n", "helper(1.0)",
                       "k=1.0", "k=2.0"),
    "helper class": ("class Helper:\n    k = 1.0\n", "Helper.k", "k = 1.0", "k = 2.0"),
    "closure helper": ("def make(k):\n    def inner():\n        return k\n\n    return inner\n"
                       "\n\nhelper = make(1.0)\n", "helper()", "make(1.0)", "make(2.0)"),
    "wrapped helper": ("import functools\n\n\ndef deco(f):\n    @functools.wraps(f)\n"
                       "    def w(*a):\n        return f(*a)\n\n    return w\n\n\nK = 1.0\n\n\n"
                       "@deco\ndef helper():\n    return K\n", "helper()", "K = 1.0", "K = 2.0"),
}  # fmt: skip


@pytest.mark.parametrize("kind", [*OPAQUE, "default-argument helper"])
def test_an_edit_of_anything_a_detector_reads_in_its_file_changes_its_key(kind, tmp_path):
    if kind == "default-argument helper":
        head, call, old, new = "def _one():\n    return 1.0\n", "helper()", "1.0", "2.0"
        signature = "token_scores, text, helper=_one"
    else:
        (head, call, old, new), signature = OPAQUE[kind], "token_scores, text"
    text = f"{head}\n\ndef score({signature}):\n    return {call}\n"
    path = tmp_path / "opaque.py"
    path.write_text(text)
    before = plugins.source_digest(plugins.load_function(f"{path}:score"))
    path.write_text(text.replace(old, new, 1))
    assert plugins.source_digest(plugins.load_function(f"{path}:score")) != before


def test_a_score_that_raises_or_is_not_a_number_is_undecided_and_counted(scores):
    found = plugins.plugin(f"{scores}:fragile", "Fragile", "gray")
    inputs = [(_scores(-1.0), "abc"), (_scores(), "x"), (_scores(-1.0), "nan")]
    values, failed = plugins.score_all(found, inputs)
    assert values[0] == 3.0 and math.isnan(values[1]) and math.isnan(values[2])
    assert failed == {"raised ValueError": 1, "returned NaN": 1}
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
    with pytest.raises(registry.DetectorCollision, match="'PPL' is already registered"):
        plugins.plugin(f"{scores}:rank_min_k", "PPL", "gray")
    assert "SR PPL" not in registry.DETECTORS  # a refused plug-in registers neither half
    mine = plugins.plugin(f"{scores}:rank_min_k", "Mine", "gray")
    again = plugins.plugin(f"{scores}:rank_min_k", "Mine", "gray")  # a cell run twice
    assert (again.entry, again.rule, again.source) == (mine.entry, mine.rule, mine.source)
    with pytest.raises(registry.DetectorCollision, match="'SR Mine'"):
        plugins.plugin(f"{scores}:fragile", "Mine", "gray")  # another function, a taken name
    with pytest.raises(registry.DetectorCollision, match="'Min-K%'"):
        plugins.plugin(f"{scores}:rank_min_k", "Min-K%", "gray", with_rule=False)
    broken = tmp_path / "broken.py"
    broken.write_text("import not_installed_anywhere\n")
    with pytest.raises(plugins.BadPlugin, match="ModuleNotFoundError"):
        plugins.load_function(f"{broken}:f")


def test_detect_scores_a_plug_in_and_its_sr_rule_into_the_comparison(memorised, scores):
    from srlib.benchmarks import load_benchmark
    from srlib.detection.compare import long_table
    from srlib.detection.detect import detect
    from srlib.transforms import make_variants_many

    mine = plugins.plugin(f"{scores}:rank_min_k", "Rank Min-K%", "gray")
    fragile = plugins.plugin(f"{scores}:fragile", "Fragile", "gray", with_rule=False)
    samples = load_benchmark("humaneval")[:4]
    variants = make_variants_many(samples, 3, progress=False)
    table = detect(
        memorised, samples, variants=variants, setting="gray", progress=False,
        plugins=[mine, fragile],
    )  # fmt: skip
    assert table.score_plugin_rank_min_k.notna().all()
    assert (table.plugin_rank_min_k_scores.map(len) == table.n_variants + 1).all()
    assert table.score_plugin_rank_min_k.tolist() == table.min_k.tolist()  # the same score
    assert table.attrs["plugin failures"] == {"Rank Min-K%": {}, "Fragile": {}}
    long = long_table(table.assign(leaked=[True, True, False, False]))
    rows = long[long.detector.isin(["Rank Min-K%", "SR Rank Min-K%"])]
    assert len(rows) == 8 and rows[rows.detector == "SR Rank Min-K%"].flag.notna().all()
    with pytest.raises(ValueError, match=r"cannot score the plug-in\(s\) \['Rank Min-K%'\]"):
        detect(memorised, samples, variants=variants, setting="black", plugins=[mine])


def test_the_detectors_parameter_reads_strings_and_dicts_and_infers_each_kind(scores):
    gray, black, rule = plugins.load(
        [
            f"{scores}:rank_min_k",
            {"spec": f"{scores}:shorter", "name": "Short", "higher_is_leaked": False},
            {"spec": f"{scores}:beats_all", "name": "Beats all"},
        ]
    )
    assert (gray.kind, black.kind, rule.kind) == ("gray", "black", "rule")
    assert gray.names == ["rank_min_k", "SR rank_min_k"]  # the function's name by default
    assert black.entry.setting == "black" and not black.higher_is_leaked
    assert rule.names == ["Beats all"] and rule.rule is None
    assert registry.detector("Beats all").threshold_free
    assert registry.family("Beats all") == "self-referential"
    assert rule.columns == ["plugin_beats_all_margin"]
    with pytest.raises(plugins.BadPlugin, match=r"f\(args\) is none of the kinds"):
        plugins.load([f"{scores}:loose"])
    with pytest.raises(plugins.BadPlugin, match=r"unknown key\(s\) \['threshold'\]"):
        plugins.load([{"spec": f"{scores}:rank_min_k", "threshold": 0.5}])
    with pytest.raises(plugins.BadPlugin, match="a dict with 'spec'"):
        plugins.load([42])
    with pytest.raises(plugins.BadPlugin, match="share its column with 'SR rank_min_k'"):
        plugins.load([{"spec": f"{scores}:fragile", "name": "Rank min-k"}])  # the same slug
    (theirs,) = plugins.load([{"spec": f"{scores}:fragile", "needs_reference": True}])
    assert registry.family("fragile") == registry.family("SR fragile") == "needs a reference model"
    assert not registry.detector("fragile").deployable and "SR fragile" not in registry.names(
        deployable=True
    )


def test_a_rule_plug_in_decides_by_its_margin_and_undecided_where_it_fails(memorised, scores):
    from srlib.benchmarks import load_benchmark
    from srlib.detection.compare import long_table
    from srlib.detection.detect import detect
    from srlib.transforms import Variants, make_variants_many

    (rule,) = plugins.load([{"spec": f"{scores}:beats_all", "name": "Beats all"}])
    samples = load_benchmark("humaneval")[:3]
    variants = make_variants_many(samples, 2, progress=False)
    variants[2] = Variants()  # no variants: the rule raises, so the sample is undecided
    table = detect(memorised, samples, variants=variants, setting="gray", progress=False,
                   plugins=[rule])  # fmt: skip
    pairs = zip(samples[:2], variants[:2], strict=True)
    expected = [min(len(v.text) for v in vs) - len(s.text) for s, vs in pairs]
    assert table.plugin_beats_all_margin[:2].tolist() == expected
    assert table.attrs["plugin failures"] == {"Beats all": {"raised ValueError": 1}}
    long = long_table(table.assign(leaked=[True, False, False]))
    rows = long[long.detector == "Beats all"].set_index("id")
    assert rows.flag[:2].tolist() == [m > 0 for m in expected]
    assert rows.flag.iloc[2] is None  # counted as undecided, not dropped and not "clean"


COPIES = '''
import numpy as np


def mean_logprob(token_scores, text):
    """PPL's oriented score, written again: the same detector under another name."""
    return float(np.mean(token_scores.logprobs)) if len(token_scores.logprobs) else float("nan")


def shortest(model, sample):
    """A black-box score that never asks the model: shorter texts first."""
    return -len(sample.text)
'''


def test_a_file_plug_in_joins_the_quick_testbeds_claim_table(quick_testbed_cache, tmp_path):
    import dataclasses
    from pathlib import Path

    from srlib.testbed.report import claim_table, plugin_failures

    tb, cache = quick_testbed_cache
    copies = tmp_path / "copies.py"
    copies.write_text(COPIES)
    example = Path(__file__).parents[1] / "examples" / "detectors.py"
    found = plugins.load(
        [
            {"spec": f"{example}:sure_tokens", "name": "Sure tokens"},
            {"spec": f"{copies}:mean_logprob", "name": "PPL again", "with_rule": False},
            {"spec": f"{copies}:shortest", "name": "Shortest"},
        ]
    )
    mine = dataclasses.replace(tb, plugins=tuple(found), memo={}, failures={})
    claims = claim_table({0: mine})
    own = claims[claims.role == "plug-in"].set_index("contrast")
    expected = [f"Sure tokens − {b}" for b in ("SR gray", "PPL", "Min-K%", "Min-K%++", "Zlib")]
    expected += ["SR Sure tokens − Sure tokens", "SR Sure tokens − SR gray (both calibrated)"]
    expected += [f"PPL again − {b}" for b in ("SR gray", "PPL", "Min-K%", "Min-K%++", "Zlib")]
    expected += [f"Shortest − {b}" for b in ("SR black", "NGO", "n-gram acc")]
    expected += ["SR Shortest − SR black (both calibrated)"]  # black-box: SR black's setting
    assert set(expected) <= set(own.index)
    assert (own.interval == "percentile").all() and (own.n > 0).all()
    assert ((own.low <= own.difference) & (own.difference <= own.high)).all()
    same = own.loc["PPL again − PPL"]  # equal to a built-in: the same flags in every resample
    assert (same.difference, same.low, same.high) == (0.0, 0.0, 0.0)
    assert same.family_verdict == NO_VERDICT  # 0 [0, 0], a collapsed bootstrap: no test
    tested = own.drop(index="PPL again − PPL")
    assert tested.p_holm.notna().all() and (tested.p_holm >= tested.p).all()  # one family, Holm
    declared = claims[claims.role != "plug-in"].reset_index(drop=True)
    alone = claim_table({0: tb})
    assert declared.equals(alone[alone.role != "plug-in"].reset_index(drop=True))  # unmoved
    assert set(plugin_failures({0: mine}).detector) <= {"Sure tokens", "PPL again", "Shortest"}
    folders = lambda: sorted(p.name for p in (cache / "plugin-scores").iterdir())  # noqa: E731
    before = folders()
    copies.write_text(COPIES.replace("float(np.mean(", "float(np.average("))  # an edit
    (edited,) = plugins.load([{"spec": f"{copies}:mean_logprob", "name": "PPL again",
                               "with_rule": False}])  # fmt: skip
    dataclasses.replace(tb, plugins=(found[0], edited, found[2]), memo={}, failures={}).scores(
        tb.runs[tb.main].checkpoints[-1]
    )
    added = sorted(set(folders()) - set(before))
    assert len(added) == 1 and added[0].startswith("score_plugin_ppl_again")  # only it rescored


def test_failures_are_said_by_detector_and_texts(scores):
    import pandas as pd

    from srlib.testbed.verdicts import plugin_failures_said

    found = tuple(plugins.load([{"spec": f"{scores}:fragile", "name": "Fragile"}]))
    columns = ["seed", "detector", "checkpoint", "texts", "reason", "calls"]
    none = pd.DataFrame([], columns=columns)
    assert (
        plugin_failures_said(none, ())
        == "No detector of your own was given (parameter `detectors`)."
    )
    assert plugin_failures_said(none, found) == "Every call of Fragile was scored."
    failed = pd.DataFrame(
        [(0, "Fragile", "a", "evaluated", "raised ValueError", 2),
         (1, "Fragile", "b", "evaluated", "returned NaN", 1),
         (0, "Fragile", "a", "calibration", "raised ValueError", 4)],
        columns=columns,
    )  # fmt: skip
    assert plugin_failures_said(failed, found) == (
        "7 calls could not be scored, so their samples are undecided "
        "(Fragile: 4 on calibration texts; Fragile: 3 on evaluated texts)."
    )


def test_a_plug_in_that_decides_nothing_is_said_in_the_claim_table(quick_testbed_cache, tmp_path):
    import dataclasses

    from srlib.detection.plugin_contrasts import contrasts
    from srlib.detection.verdicts import claim_headline, pooled_rows
    from srlib.plots import contrast_forest
    from srlib.testbed.report import claim_table, clean_model_rates

    tb, _ = quick_testbed_cache
    broken = tmp_path / "broken.py"
    broken.write_text(BROKEN)
    found = plugins.load([f"{broken}:{name}" for name in broken_names()])
    mine = dataclasses.replace(tb, plugins=tuple(found), memo={}, failures={})
    reps = {0: mine}
    claims = claim_table(reps)
    own = claims[claims.role == "plug-in"].set_index("contrast")
    for p in found:
        how = p.entry.name.split("_", 1)[1]
        for c in contrasts([p]):
            said = own.loc[c.name, "family_verdict"]
            assert said.startswith("no decisions on seed 0 (evaluated): "), said
            assert RETURNED[how] in said  # what it returned, counted
    declared = claims[claims.role != "plug-in"].reset_index(drop=True)
    alone = claim_table({0: tb})
    assert declared.equals(alone[alone.role != "plug-in"].reset_index(drop=True))
    shown = ["a_value", "b_value", "difference", "low", "high", "n", "p_holm", "family_verdict"]
    for p in found:  # the own-detector chapter's cells, one failing plug-in's family given
        alone = claim_table(reps, contrasts([p]))
        said = alone.set_index("contrast").family_verdict
        assert set(said.index) == {c.name for c in contrasts([p])}
        assert all(s.startswith("no decisions on seed 0") for s in said), said
        contrast_forest(alone, "plug-in")
        assert pooled_rows(alone).set_index("contrast")[shown].round(3).difference.isna().all()
        answer = claim_headline(alone, "plug-in")[0]
        assert "so no comparison of" in answer and RETURNED[p.entry.name.split("_", 1)[1]] in answer
    rates = clean_model_rates(reps)  # read back as NaN: nothing to flag, no crash
    assert not set(rates.detector) & {n for p in found for n in p.names}
