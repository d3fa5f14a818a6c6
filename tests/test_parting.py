"""``srlib book --compare`` when digests differ: how far the numbers part (largest score
difference, rank correlation) and which family-wise verdicts changed."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd

from srlib.book.digests import publish
from srlib.book.parting import claim_parting, score_parting
from srlib.cli import main
from srlib.store import frame_row, row, write_json


def _scores(shift: float) -> pd.DataFrame:
    x = np.linspace(0, 1, 20)
    return pd.DataFrame({"id": [f"s{i}" for i in range(20)], "ppl": x + shift * x**2, "n": 1})


def _claims(verdict: str, estimate: float) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"contrast": "SR - PPL", "part": "pooled", "difference": estimate, "low": 0.01,
             "high": 0.2, "verdict": "v", "family_verdict": verdict},
            {"contrast": "SR - Zlib", "part": "pooled", "difference": 0.02, "low": -0.1,
             "high": 0.1, "verdict": "v", "family_verdict": "no evidence"},
        ]
    )  # fmt: skip


def test_a_tables_parting_is_its_largest_difference_and_weakest_ranking():
    same = score_parting(_scores(0), _scores(0))
    assert same["largest |difference|"] == 0 and same["rank correlation"] == 1.0
    moved = score_parting(_scores(0), _scores(0.5))
    assert moved["largest |difference|"] == 0.5 and moved["rank correlation"] == 1.0
    assert moved["in"] == moved["of"] == "ppl"  # integer columns are not scores
    shuffled = _scores(0).assign(ppl=_scores(0).ppl[::-1].to_numpy())
    assert score_parting(_scores(0), shuffled)["rank correlation"] == -1.0
    reordered = _scores(0.5).iloc[::-1]  # the same rows in another order: paired by id
    assert score_parting(_scores(0), reordered)["rank correlation"] == 1.0
    assert np.isnan(score_parting(_scores(0), _scores(0)[:5])["largest |difference|"])
    flat = _scores(0).assign(flat=1.0)  # a constant column ranks nothing: the other one decides
    assert score_parting(flat, flat.assign(ppl=shuffled.ppl))["rank correlation"] == -1.0
    gap = _scores(0).assign(ppl=_scores(0).ppl.where(_scores(0).index != 3))
    assert score_parting(_scores(0), gap)["NaN in one only"] == 1
    assert np.isnan(score_parting(_scores(0)[:0], _scores(0)[:0])["rank correlation"])
    claims = claim_parting(_claims("better", 0.1), _claims("no evidence", 0.05))
    assert claims["verdict changed"].tolist() == [True, False]
    assert claims["family-wise verdict changed"].tolist() == [True, False]
    assert claims.loc[0, "difference here"] == 0.1 and claims.loc[0, "difference there"] == 0.05


def _build(root, shift: float, verdict: str) -> None:
    """A build folder as the book leaves it: published tables and ``book/digests.json``."""
    root.mkdir()
    here = os.getcwd()
    os.chdir(root)  # a chapter's kernel runs in the build's root
    try:
        rows = publish(
            [
                row("numerics", "kernels", "portable AVX2"),
                frame_row("scores", "main seed 0 epoch 3 n=5 gray", _scores(shift)),
                frame_row("claims", "claim table", _claims(verdict, 0.1 + shift)),
            ]
        )
    finally:
        os.chdir(here)
    write_json(root / "book" / "digests.json", rows.to_dict("records"))


def test_compare_says_how_far_two_builds_numbers_part(tmp_path, capsys):
    _build(tmp_path / "a", 0.0, "better")
    _build(tmp_path / "b", 0.25, "no evidence")
    code = main(["book", "--compare", str(tmp_path / "b"), "--compare-with", str(tmp_path / "a")])
    out = capsys.readouterr().out
    assert code == 2 and "2 differ" in out
    assert "score tables, here against there:" in out and "0.25" in out
    assert "claim rows (1 family-wise verdicts changed, 1 verdicts in all)" in out
    assert (
        main(["book", "--compare", str(tmp_path / "a"), "--compare-with", str(tmp_path / "a")]) == 0
    )
    (tmp_path / "b" / "book" / "tables").rename(tmp_path / "gone")  # only the digests left
    main(["book", "--compare", str(tmp_path / "b"), "--compare-with", str(tmp_path / "a")])
    assert "compared by digest only" in capsys.readouterr().out
