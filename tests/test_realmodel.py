"""The real-model study's pieces on small synthetic tables: its configuration, the detectors
read against the control problems, the sentences, and the audit's limits per sample set."""

import numpy as np
import pandas as pd
import pytest

from srlib.audit.models import AuditInputError
from srlib.audit.run import AuditSpec
from srlib.audit.summary import CONTROL
from srlib.realmodel.answer import audit_sentences
from srlib.realmodel.config import real_profile
from srlib.realmodel.detectors import SCORES, detector_table
from srlib.realmodel.study import NEEDS_CALIBRATION, real_contrasts


def test_profiles_take_changes_and_refuse_unknown_settings():
    config = real_profile("cpu", limits={"humaneval": 10}, leak_seeds=[0, 1])
    assert config.limit_of("humaneval") == 10 and config.limit_of("fresh") is None
    assert config.leak_seeds == (0, 1)
    with pytest.raises(ValueError, match="unknown real-model setting"):
        real_profile("cpu", epoch=3)
    with pytest.raises(ValueError, match="profiles: \\['cpu', 'quick'\\]"):
        real_profile("gpu")


def test_the_audit_reads_limits_per_sample_set_and_refuses_a_stray_one():
    spec = AuditSpec((("m", "m"),), ("humaneval", "mbpp:test"), control="fresh",
                     limit=(("humaneval", 10), ("fresh", 3)))  # fmt: skip
    spec.check()
    assert [spec.limit_of(b) for b in ("humaneval", "mbpp:test", "fresh")] == [10, None, 3]
    bad = AuditSpec((("m", "m"),), ("humaneval",), limit=(("apps", 10),))
    with pytest.raises(AuditInputError, match="limits given for \\['apps'\\]"):
        bad.check()
    with pytest.raises(AuditInputError, match="--limit of humaneval must be at least 1"):
        AuditSpec((("m", "m"),), ("humaneval",), limit=(("humaneval", 0),)).check()


def test_no_contrast_of_the_real_model_needs_a_calibration_split():
    chosen = real_contrasts()
    roles = {c.role for c in chosen}
    assert {"discrimination", "transport"} <= roles
    assert not any(a.threshold.startswith(NEEDS_CALIBRATION) for c in chosen for a in (c.a, c.b))
    assert all("black" not in c.name and "NGO" not in c.name for c in chosen)


def _samples(shift: float, n: int = 60, seed: int = 0) -> pd.DataFrame:
    """An audit's per-sample table: a benchmark whose scores sit ``shift`` above the control's."""
    rng = np.random.default_rng(seed)
    rows = []
    for where, add in ((CONTROL, 0.0), ("humaneval", shift)):
        for i in range(n):
            row = {"set": where, "benchmark": "fresh" if where == CONTROL else where,
                   "id": f"{where}/{i}", "sr_gray_margin": rng.normal(add)}  # fmt: skip
            row["sr_gray"] = row["sr_gray_margin"] > 0.5
            row |= {column: rng.normal(add) for column in SCORES.values()}
            rows.append(row)
    return pd.DataFrame(rows)


def test_detectors_against_the_control_find_a_shift_and_not_its_absence():
    shifted = detector_table(_samples(1.5))
    assert (shifted.auc > 0.75).all() and (shifted.p_auc_holm < 0.05).all()
    assert (shifted.rate > shifted.control_rate).all()
    score = shifted[shifted.kind == "score"]
    assert (score.control_rate <= 0.1).all()  # out of fold: about 5%, not fixed by construction
    same = detector_table(_samples(0.0, seed=1))
    assert (same.p_auc_holm > 0.05).all() and same.auc.between(0.3, 0.7).all()


def test_audit_sentences_read_each_rate_against_the_control():
    summary = pd.DataFrame([{
        "model": "m", "benchmark": "humaneval", "decision": "gray", "null": "control samples",
        "rate": 0.8, "decided": 100, "null_rate": 0.5, "excess": 0.3, "excess_low": 0.15,
        "excess_high": 0.42, "p_vs_null": 0.0001, "control_p": 0.002, "chance": 1 / 6,
        "excess_detectable": 0.21,
    }])  # fmt: skip
    first, control = audit_sentences(summary, "fresh")
    assert "80% of 100 problems against 50% of the fresh ones" in first
    assert "an excess of 21% clears that interval with 80% power" in first
    assert "above the fresh problems' rate" in first and "pooled test" in first
    assert "flags 50%, where chance is 17%" in control


def test_too_few_control_problems_to_cross_fit_give_no_rate_and_no_test():
    tiny = detector_table(_samples(1.0, n=1))
    score = tiny[tiny.kind == "score"]
    assert score.rate.isna().all() and score.p_rate_holm.isna().all()
    assert tiny[tiny.kind == "rule"].rate.notna().all()


def test_the_detectable_excess_is_where_the_audits_interval_clears_zero_four_times_in_five():
    """At the excess ``detectable_excess`` names, simulated audits of those sizes find the
    excess's interval above zero (the rule the chapter reads) in 80% of draws, and less a
    little below it; it shrinks with either size, and a null rate of 0 still needs one."""
    from srlib.stats.rates import detectable_excess, difference_interval, flag_rate

    rng = np.random.default_rng(3)
    for p0, n, n0 in [(0.2, 50, 130), (0.05, 50, 130)]:
        d = detectable_excess(p0, n, n0)

        def found(excess, p0=p0, n=n, n0=n0):
            draws = rng.binomial(n, p0 + excess, 1000), rng.binomial(n0, p0, 1000)
            counts = zip(*draws, strict=True)
            return np.mean([difference_interval(a, n, b, n0)[0] > 0 for a, b in counts])

        assert 0.76 <= found(d) <= 0.84, (p0, d)
        assert found(d - 0.05) < 0.72, (p0, d)
    assert detectable_excess(0.2, 100, 130) < detectable_excess(0.2, 50, 130)
    assert detectable_excess(0.2, 50, 500) < detectable_excess(0.2, 50, 130)
    assert detectable_excess(0.0, 50, 130) > 0.05
    assert np.isnan(detectable_excess(0.9, 3, 3))  # no rate up to 1 is found that often
    rate = flag_rate([True] * 30 + [False] * 20, 5, [True] * 26 + [False] * 104)
    assert rate["excess_detectable"] == pytest.approx(detectable_excess(0.2, 50, 130))
