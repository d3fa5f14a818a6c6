"""The own-detector chapter itself, executed as a reader runs it, given bad input."""

import pytest
from broken_plugins import BROKEN, RETURNED


@pytest.mark.notebook
def test_the_own_detector_chapter_says_what_a_lone_failing_plug_in_left_undecided(
    quick_book, background_book, tmp_path
):
    """The chapter itself (papermill, quick parameters, the quick book's testbed), given one
    plug-in that raises on every call and nothing else: it runs to the end and its pages say
    which comparisons had no decisions and why (the library path of every other failure is
    ``test_a_plug_in_that_decides_nothing_is_said_in_the_claim_table``)."""
    import nbformat
    import papermill
    from quickbook import ROOT, copy_cache

    cache = tmp_path / "cache"
    copy_cache(background_book.testbed(), cache)
    broken = tmp_path / "broken.py"
    broken.write_text(BROKEN)
    out = tmp_path / "own.ipynb"
    parameters = {"quick": True, "profile_name": "quick", "cache_dir": str(cache),
                  "detectors": [f"{broken}:score_raises"]}  # fmt: skip
    papermill.execute_notebook(
        str(ROOT / "notebooks" / "09-own-detector.ipynb"), str(out), parameters=parameters,
        cwd=str(ROOT), kernel_name="python3", progress_bar=False,
    )  # fmt: skip
    said = "".join(
        o.get("text", "") + str(o.get("data", {}).get("text/plain", ""))
        for cell in nbformat.read(out, as_version=4).cells
        for o in cell.get("outputs", [])
    )
    assert "no decisions on seed 0 (evaluated)" in said and RETURNED["raises"] in said
