"""The detector registry and the one comparison that reads it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from srlib.detection import registry
from srlib.detection.compare import as_decided, deployable, evaluate_detectors, long_table


def test_every_detector_has_one_spelling_and_a_known_family():
    table = registry.table()
    assert table.index.is_unique and set(table.family) <= set(registry.FAMILIES)
    needs = table[table.reference.notna()]
    assert (needs.family == "needs a reference model").all() and not needs.deployable.any()
    assert registry.names("self-referential") == [
        "SR gray",
        "SR black",
        "SR Min-K%",
        "SR Min-K%++",
        "SR Zlib",
    ]


def test_an_unknown_or_misspelt_detector_is_an_error_listing_the_known():
    with pytest.raises(registry.UnknownDetector, match="'SR Grey'.*SR gray"):
        registry.detector("SR Grey")
    with pytest.raises(registry.UnknownDetector):
        registry.annotate(pd.DataFrame({"detector": ["PPL", "ppl"]}))


def _detect_table(n: int = 40, seed: int = 0) -> pd.DataFrame:
    """A ``detect``-like table: leaked samples have a lower PPL and win SR more often."""
    rng = np.random.default_rng(seed)
    leaked = np.arange(n) % 2 == 0
    gray = [list(rng.normal(0, 1, 4) + [1.5 * y, 0, 0, 0]) for y in leaked]
    return pd.DataFrame(
        {
            "id": [f"s{i}" for i in range(n)],
            "benchmark": ["a"] * (n // 2) + ["b"] * (n // 2),
            "leaked": leaked,
            "gray_scores": gray,
            "sr_gray": [g[0] > max(g[1:]) for g in gray],
            "sr_gray_margin": [g[0] - max(g[1:]) for g in gray],
            "score_ppl": [g[0] for g in gray],
        }
    )


def test_the_long_table_holds_only_what_the_inputs_feed_under_registry_names():
    table = _detect_table()
    alone = long_table(table)
    assert set(alone.detector) == {"SR gray", "PPL"}
    with_ref = long_table(table, base=table, unrelated=table)
    assert {"SR gray vs base", "SR gray vs unrelated"} <= set(with_ref.detector)
    assert (with_ref.family == with_ref.detector.map(registry.family)).all()


def test_evaluate_reports_both_oracles_calibration_and_flag_everything():
    long = long_table(_detect_table(), base=_detect_table(seed=1))
    clean = long_table(_detect_table(seed=2).assign(leaked=False), base=_detect_table(seed=3))
    m = evaluate_detectors(long, clean, fpr=0.1, n_boot=20)
    modes = m.groupby("detector").threshold.agg(set)
    assert modes["PPL"] == {"oracle", "oracle_f1", "calibrated"}
    assert modes["SR gray"] == {"none", "calibrated"} and modes["flag everything"] == {"none"}
    mcc = m[(m.metric == "mcc") & (m.group == "all")].set_index(["detector", "threshold"]).value
    assert mcc["PPL", "oracle"] >= mcc["PPL", "oracle_f1"]  # the MCC oracle is MCC-optimal
    shown = deployable(m)
    assert "SR gray vs base" not in set(shown.detector)  # needs the pre-leak model
    assert set(shown[shown.detector == "PPL"].threshold) == {"calibrated"}
    assert "SR gray vs base" in set(as_decided(m).detector)
