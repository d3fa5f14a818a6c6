"""The sentences a chapter's answer box shows (``srlib.book.answer``) come from its tables."""

from __future__ import annotations

import pandas as pd
import pytest

from srlib.benchmarks.tables import pass_said, pass_table
from srlib.book.answer import BOX, KEY, SHOWN, answer_text, glue_answer
from srlib.duplication.dedup.partition import partition_said, partition_table
from srlib.execution.progress import BOOK_RUNNER
from srlib.transforms.report import yield_said


def test_pass_sentences_count_each_benchmark():
    checks = pd.DataFrame(
        {
            "benchmark": ["mbpp"] * 3 + ["humaneval"] * 2,
            "id": list("abcde"),
            "status": ["passed", "failed", "passed", "passed", "passed"],
        }
    )
    said = pass_said(pass_table(checks))
    assert said == [
        "humaneval: 2 of 2 reference solutions pass in the sandbox (100.0%).",
        "mbpp: 2 of 3 reference solutions pass in the sandbox (66.7%).",
    ]


def test_yield_sentence_reads_the_asked_n_and_names_a_missing_one():
    yields = pd.DataFrame(
        {"samples": [164, 500], "n ≥ 5": [0.99, 0.95]}, index=["humaneval", "mbpp"]
    )
    assert yield_said(yields, 5) == (
        "99.0% of humaneval's 164 samples and 95.0% of mbpp's 500 samples reach 5 variants, "
        "each executed against its tests."
    )
    with pytest.raises(ValueError, match="n ≥ 10"):
        yield_said(yields, 10)


def test_partition_sentence_gives_the_shares_of_each_part():
    parts = pd.DataFrame(
        {
            "part": ["exact", "exact", "exact", "near", "near", "unique", "unique", "unique"],
            "representative": [True, False, False, False, False, False, False, False],
            "dedup": [True, False, False, True, True, True, True, True],
        }
    )
    said = partition_said(partition_table(parts))
    assert said == (
        "Of 8 candidates, 37.5% are exact duplicates and 25.0% near duplicates of another; "
        "with the exact copies removed (one kept per group), 6 (75.0%) remain."
    )


def test_the_answer_box_pastes_the_glued_key_and_an_answer_needs_a_sentence():
    assert f"{{glue:md}} {KEY}" in BOX and ":class: important answer" in BOX
    assert answer_text("One.", "", "Two. ") == "One. Two."
    with pytest.raises(ValueError, match="at least one sentence"):
        glue_answer("", "  ")


def test_the_answer_is_shown_in_the_cell_only_where_no_book_renders_the_box(monkeypatch):
    """Glued either way; displayed (under ``SHOWN``) unless the book's runner executes it."""
    import myst_nb

    shown, glued = [], []
    monkeypatch.setattr("IPython.display.display", lambda obj: shown.append(obj.data))
    monkeypatch.setattr(myst_nb, "glue", lambda key, obj, display: glued.append(obj.data))
    monkeypatch.delenv(BOOK_RUNNER, raising=False)
    assert glue_answer("One.", "Two.") is None
    assert glued == ["One. Two."] and shown == [f"{SHOWN}\n\nOne. Two."]
    monkeypatch.setenv(BOOK_RUNNER, "1")
    glue_answer("Three.")
    assert glued[-1] == "Three." and len(shown) == 1
