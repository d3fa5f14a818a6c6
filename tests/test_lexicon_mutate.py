import ast
import random

import pytest

from srlib.transforms.lexicon import (
    RESERVED,
    choose_name,
    lexical_alternatives,
    lexicon,
    split_identifier,
)
from srlib.transforms.mutate import Style, mutate, mutate_args, render


def test_split_identifier_styles():
    assert split_identifier("has_close_elements") == ("", ["has", "close", "elements"], "", "snake")
    assert split_identifier("getMaxValue") == ("", ["get", "Max", "Value"], "", "camel")
    assert split_identifier("__x__") == ("__", ["x"], "__", "single")


def test_alternatives_are_plausible_and_keep_the_style():
    assert "contains_close_elements" in lexical_alternatives("has_close_elements")
    assert "compute" in lexical_alternatives("solve")
    assert all("_" not in n and n[0].islower() for n in lexical_alternatives("getMaxValue"))
    assert all(n.isupper() for n in lexical_alternatives("MAX_N"))


def test_choose_name_avoids_taken_reserved_and_original():
    rng = random.Random(0)
    taken = {"contains_close_elements", "has_near_elements"}
    for _ in range(50):
        new = choose_name("has_close_elements", taken, rng, "function")
        assert new not in taken and new not in RESERVED and new != "has_close_elements"
    assert (
        choose_name("i", {"idx", "ind", "i_val", "my_i", "the_i", "i_value", "cur_i"}, rng) == "i2"
    )


def test_lexicon_entries_are_identifier_words():
    for word, alts in lexicon().items():
        assert word.isidentifier() and all(a.isidentifier() and a != word for a in alts)


@pytest.mark.parametrize(
    "value",
    [0, 7, -3, 1234, 2.5, 0.001, "hello", "", "A1", [1, 2, 3], (1, "a"), {"k": 1, "j": 2}, {1, 2}],
)
def test_mutate_keeps_type_and_changes_value(value):
    rng = random.Random(1)
    changed = [mutate(value, rng) for _ in range(20)]
    assert all(type(c) is type(value) for c in changed)
    assert any(c != value for c in changed)
    if isinstance(value, int) and value >= 0:
        assert all(c >= 0 for c in changed)


def test_mutate_args_changes_something_when_possible():
    rng = random.Random(2)
    assert all(mutate_args([1, "ab"], rng) != [1, "ab"] for _ in range(20))
    assert mutate_args([True, None], rng) == [True, None]


@pytest.mark.parametrize(
    "value", [[1, 2], ("a",), {"x": [1.5, None]}, set(), {3, 1}, "it's", 'say "hi"']
)
def test_render_round_trips(value):
    for style in (Style(), Style('"', ","), Style.of('["a","b"]')):
        assert ast.literal_eval(render(value, style)) == value


def test_render_follows_the_original_style():
    style = Style.of('["a","b"]')
    assert style == Style('"', ",")
    assert render(["x", "y"], style) == '["x","y"]'
    assert render((1,), Style()) == "(1,)"
