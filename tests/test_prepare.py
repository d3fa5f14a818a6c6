"""The scoring stage: every replicate seed trained and scored before the reports read, in
this process or on a Dask cluster, with the same digests either way."""

import dataclasses

import pytest
from quickbook import copy_cache

from srlib.errors import NotBuilt
from srlib.testbed.build import shared
from srlib.testbed.digests import testbed_digests as digest_rows
from srlib.testbed.prepare import prepare, read_stages
from srlib.testbed.report import claim_parts, clean_model_rates, naturalness_matched


def _prepared(cache, into, workers, scheduler=None):
    """The quick testbed with a second seed, prepared with ``workers``, then read by the
    reports: (testbed, replicates, digest rows by name)."""
    copy_cache(cache, into)
    tb = shared("quick", {"replicates": (0, 1)}, cache_dir=into)
    reps = prepare(tb, workers=workers, scheduler=scheduler, progress=False)
    clean_model_rates(reps)
    claim_parts(reps)
    rows = {r["name"]: r["digest"] for r in digest_rows(tb, reps)}
    return tb, reps, rows


def test_a_two_worker_dask_cluster_gives_the_serial_digests(
    second_seed_cache, dask_client, tmp_path
):
    """Both start from the same cache, seed 1 trained there once for the session (training on
    a worker is the same code and the same pinned numerics the quick book's rerun checks): a
    model's numbers move slightly with the batch a text is scored in, so the cluster and the
    serial build must score the same requests in the same order."""
    snapshot = tmp_path / "snapshot"
    copy_cache(second_seed_cache, snapshot)
    tb, reps, serial = _prepared(snapshot, tmp_path / "serial", workers=1)
    assert list(reps) == [0, 1] and reps[0] is tb
    assert any(name.startswith("leak@") and "seed 1" in name for name in serial)
    assert any("(split seed 1)" in name for name in serial)
    assert tb.reading and reps[1].reading  # the reports read what was made, nothing else
    assert naturalness_matched(tb).variants.tolist() == ["plain", "naturalness-matched"]
    with pytest.raises(NotBuilt, match="never computed"):
        tb.scores(tb.runs[tb.main].checkpoints[0], 1)  # one variant: asked of no report
    with pytest.raises(NotBuilt, match="never made"):
        tb.calibration_scores(tb.runs[tb.main].checkpoints[0], black=True)
    _, _, clustered = _prepared(snapshot, tmp_path / "dask", 2, dask_client)
    assert clustered == serial


def test_the_stages_read_are_every_main_checkpoint_only_for_the_own_seed(quick_testbed_cache):
    tb, _ = quick_testbed_cache
    own = read_stages(tb, own=True)
    other = read_stages(tb, own=False)
    epochs = len(tb.runs[tb.main].checkpoints)
    assert [s.run for s in own] == ["base"] + [tb.main] * epochs + ["null"]
    nulls = len(tb.runs["null"].checkpoints)
    assert [(s.run, s.epoch) for s in other] == [("base", 0), (tb.main, epochs), ("null", nulls)]


def test_a_report_says_what_the_scoring_stage_has_not_made(quick_testbed_cache):
    tb, _ = quick_testbed_cache
    fresh = dataclasses.replace(tb, memo={}, reading=True)
    with pytest.raises(NotBuilt, match="naturalness-matched variants were never made"):
        naturalness_matched(dataclasses.replace(fresh, base_key="a base never trained"))


def test_a_cluster_needs_a_testbed_opened_as_the_chapters_open_it(quick_testbed_cache):
    tb, _ = quick_testbed_cache
    two = tb.config.replace(replicates=(0, 1))
    with pytest.raises(ValueError, match="build.shared"):
        prepare(dataclasses.replace(tb, config=two, opened={}), workers=2, progress=False)
