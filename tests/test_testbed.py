"""The controlled testbed: corpus decontamination and mixtures, the split, counted
exposures, contrasted decisions, fast metrics = the slow reference, and the cached build."""

import numpy as np
import pandas as pd
import pytest
from quickbook import copy_cache

from srlib.benchmarks import load_benchmark
from srlib.detection.decide import contrasted
from srlib.duplication.dedup.overlap import contaminated_documents
from srlib.stats.metrics import RANKING, _resamples, evaluate, metric_table, ranking_resampled
from srlib.store import digest
from srlib.testbed.build import build, replicate, replicates, split_samples
from srlib.testbed.config import profile, seed_coverage
from srlib.testbed.corpus import Corpus, Mixture, rank
from srlib.testbed.report import claim_parts


def test_documents_overlapping_a_sample_are_found_with_their_reason():
    samples = load_benchmark("humaneval")[:3]
    docs = [
        ("verbatim.py", "import os\n" + samples[0].code + "\nprint(1)\n"),
        ("clean.py", "def unrelated(a, b):\n    return sorted(set(a) ^ set(b))\n"),
    ]
    found = contaminated_documents(samples, docs)
    assert found.document.tolist() == ["verbatim.py"]
    assert found.reason.tolist() == ["exact"] and found.samples[0] == [samples[0].id]


def corpus(n=20):
    code = [(f"c{i}.py", f"x{i} = {i}\n" * 50) for i in range(n)]
    text = [(f"t{i}.md", f"word{i} " * 100) for i in range(n)]
    return Corpus(code, text, pd.DataFrame(), pd.DataFrame())


def test_mixtures_have_their_ratio_and_later_ones_get_fresh_documents():
    c = corpus()
    first = c.mixture(3000, 0.75, seed=1)
    code = sum(len(t) for t in first.texts if t.startswith("x"))
    assert first.chars >= 3000 and abs(code / first.chars - 0.75) < 0.05
    second = c.mixture(2000, 0.5, seed=1, use="cpt", exclude=first)
    assert not set(first.texts) & set(second.texts)
    assert not first.documents & second.documents
    assert c.mixture(3000, 0.75, seed=1).texts == first.texts  # seeded
    assert c.mixture(3000, 0.75, seed=2).documents != first.documents  # each seed its stream
    with pytest.raises(ValueError, match="ran out of text"):
        c.mixture(10**6, 0.0)
    with pytest.raises(ValueError, match="code_to_text"):
        c.mixture(10, 1.5)
    assert Mixture([]).chars == 0


def test_a_new_document_changes_no_other_documents_place_in_a_stream():
    c = corpus(40)
    more = Corpus([*c.code, ("new.py", "y = 1\n" * 60)], c.text, pd.DataFrame(), pd.DataFrame())
    for use in ("base", "cpt", "reference"):
        before = c.mixture(10**4, 1.0, seed=3, use=use)
        after = more.mixture(10**4, 1.0, seed=3, use=use)
        kept = sorted(before.documents, key=lambda n, u=use: rank(u, 3, "code", n))
        # the new document takes one place in the stream; the others keep their order, so
        # the draw loses at most its last document(s) to make room, and gains nothing else
        assert after.documents - before.documents <= {"new.py"}
        lost = before.documents - after.documents
        assert lost == set(kept[len(kept) - len(lost) :])
        assert ("new.py" in after.documents) == bool(lost)


def test_split_is_stratified_and_seeded():
    samples = load_benchmark("humaneval")[:10] + load_benchmark("mbpp", split="test")[:30]
    split = split_samples(samples, 0.5, seed=3)
    assert split.groupby("benchmark").leaked.sum().to_dict() == {"humaneval": 5, "mbpp": 15}
    assert split.equals(split_samples(samples, 0.5, seed=3))
    assert not split.equals(split_samples(samples, 0.5, seed=4))


def test_contrasted_sr_by_hand():
    # Δ_t = (1, 3), Δ_r = (0.5, 2.5): the target prefers the original by 0.5 more than the
    # reference does on both variants -> leaked, margin 0.5
    v = contrasted([0.0, -1.0, -3.0], [0.0, -0.5, -2.5])
    assert v.leaked and v.margin == pytest.approx(0.5) and v.p_value == pytest.approx(1 / 3)
    # the reference prefers the original as much on one variant -> not leaked
    assert contrasted([0.0, -1.0, -3.0], [0.0, -1.0, -2.5]).leaked is False
    assert contrasted([0.0], [0.0]).leaked is None
    with pytest.raises(ValueError, match="reference scores"):
        contrasted([0.0, 1.0], [0.0])


def test_fast_metrics_equal_the_scikit_learn_reference():
    rng = np.random.default_rng(1)
    y = rng.random(300) < 0.4
    s = y + rng.normal(0, 1, 300)
    s[:4] = np.nan
    flags = list(s > 0.3)
    flags[5] = None
    slow = evaluate(y, flags, s, n_boot=200).set_index("metric")
    fast = metric_table(y, flags, s, n_boot=200).set_index("metric").loc[slow.index]
    pd.testing.assert_frame_equal(fast, slow, check_exact=False, rtol=1e-9)


@pytest.mark.parametrize("case", range(6))
def test_resampled_ranking_metrics_equal_a_sort_per_resample_bit_for_bit(case):
    """The counting path (``ranking_resampled``) against ``RANKING`` on each resample: tied,
    untied, infinite and tiny samples, and a tie across the 1%/5% thresholds."""
    rng = np.random.default_rng(case)
    size = [664, 7, 120, 300, 2, 50][case]
    y = rng.random(size) < [0.5, 0.5, 0.1, 0.9, 0.5, 0.3][case]
    y[:2] = [True, False]
    s = [
        lambda: y + rng.normal(0, 1, size),
        lambda: rng.integers(0, 3, size).astype(float),
        lambda: np.round(rng.normal(0, 1, size), 1),
        lambda: np.where(rng.random(size) < 0.3, -np.inf, rng.integers(0, 4, size)),
        lambda: np.zeros(size),
        lambda: np.where(rng.random(size) < 0.2, np.inf, rng.normal(0, 1, size)),
    ][case]()
    idx = _resamples(y, 300, case)
    assert len(idx)
    fast = ranking_resampled(y, s, idx)
    assert fast.keys() == RANKING.keys()
    for name, fn in RANKING.items():
        assert np.array_equal(fast[name], fn(y[idx], s[idx])), name


def test_profiles_and_keys():
    quick = profile("quick")
    assert profile("cpu").limit is None  # the book's profile keeps every sample
    with pytest.raises(ValueError, match="unknown testbed profile"):
        profile("tpu")
    with pytest.raises(ValueError, match="epoch"):
        quick.replace(epoch=3)
    assert digest(quick) == digest(profile("quick")) != digest(quick.replace(epochs=3))
    assert profile("cpu").train_dtype == "float32"  # portable: one set of weights per class
    assert profile("cpu").score_batch == profile("quick").score_batch == 1  # a text's scores:
    # the model's and the text's only, whichever process scored it first
    assert profile("cpu-bf16") == profile("cpu", train_dtype="bfloat16")  # the named opt-in
    assert digest(profile("cpu-bf16")) != digest(profile("cpu"))  # keyed apart
    with pytest.raises(ValueError, match="unknown training dtype 'half'"):
        quick.replace(train_dtype="half")


def test_the_names_a_variant_must_avoid_are_keyed():
    from srlib.testbed.build import load_samples, variants_artifact

    config, samples = profile("quick"), load_samples(("humaneval",), 2)
    keys = {
        variants_artifact(config, samples, 1, "paraphrase", avoid).key
        for avoid in (None, [{"a"}, set()], [{"b"}, set()])
    }
    assert len(keys) == 3  # another vocabulary to avoid is another set of variants


def test_training_precision_is_keyed_and_reaches_every_training():
    from srlib.testbed.build import _settings, leak_settings
    from srlib.testbed.train import model_artifact

    fp32 = profile("quick")
    assert leak_settings(fp32).dtype == _settings(fp32, fp32.model, 1, 0).dtype == "float32"
    bf16 = profile("quick", train_dtype="bfloat16")
    assert leak_settings(bf16).dtype == _settings(bf16, bf16.model, 1, 0).dtype == "bfloat16"
    keys = {
        model_artifact(["x"], ["x"], _settings(c, c.model, 1, 0), "m").key for c in (fp32, bf16)
    }
    assert len(keys) == 2


def test_build_counts_exposures_and_reuses_its_cache(quick_testbed_cache, tmp_path):
    tb, cache = quick_testbed_cache
    config = tb.config
    leaked = tb.split[tb.split.leaked]
    exposures = tb.runs[tb.main].exposures
    last = exposures[exposures.epoch == config.epochs]
    assert set(last.id) == set(leaked.id)
    assert (last.exposures == config.repeats * config.epochs).all()
    assert tb.runs["null"].exposures.empty
    stamps = {p: p.stat().st_mtime_ns for run in tb.runs.values() for p in run.checkpoints}
    core = build(config, cache, progress=False, core_only=True)
    assert list(core.runs) == [tb.main, "null"]
    assert core.runs[tb.main].checkpoints == tb.runs[tb.main].checkpoints
    again = build(config, cache, progress=False)
    assert {p: p.stat().st_mtime_ns for p in stamps} == stamps  # nothing retrained
    assert again.base == tb.base and again.split.equals(tb.split)
    assert [len(v) for v in again.variants] == [len(v) for v in tb.variants]
    copy = tmp_path / "cache"  # a copy, so the shared cache stays as the book expects it
    copy_cache(cache, copy)
    runs_before = sorted(p.name for p in (copy / "runs").iterdir())
    moved = build(config, copy, progress=False)  # the same cache under another path
    assert sorted(p.name for p in (copy / "runs").iterdir()) == runs_before  # nothing retrained
    assert {n: r.checkpoints[-1].parent.name for n, r in moved.runs.items()} == {
        n: r.checkpoints[-1].parent.name for n, r in tb.runs.items()
    }
    fewer = build(config.replace(epochs=1), copy, progress=False, core_only=True)
    assert fewer.base.name == tb.base.name  # the base does not depend on the epochs
    assert fewer.runs[tb.main].checkpoints[0] != tb.runs[tb.main].checkpoints[0]


def _folders(cache):
    """Artifact kind → the folder names the store holds."""
    return {
        k: {p.name for p in (cache / k).iterdir()} for k in ("corpus", "variants", "models", "runs")
    }


EDITS = [
    ("srlib.models.tiny", {"models", "runs"}),  # the tiny model: base, reference, runs
    ("srlib.transforms.rename", {"variants"}),  # the renamer: variants (and their tables)
    # the corpus filter: the corpus; models are keyed on the documents they train on, and an
    # edit that keeps the same documents keeps them
    ("srlib.duplication.dedup.overlap", {"corpus"}),
]


def test_an_edit_rebuilds_what_depends_on_it_and_nothing_else(
    quick_testbed_cache, tmp_path, monkeypatch
):
    from srlib import store

    tb, cache = quick_testbed_cache
    copy = tmp_path / "cache"
    copy_cache(cache, copy)
    before = build(tb.config, copy, progress=False, core_only=True)
    table = before.scores(before.runs[before.main].checkpoints[-1], 1)
    real = store.module_source
    for module, rebuilt in EDITS:
        tables = {p.name for p in (copy / "tables").iterdir()}
        held = _folders(copy)
        with monkeypatch.context() as m:
            m.setattr(
                store, "module_source", lambda n, e=module: real(n) + (b"\n#" if n == e else b"")
            )
            after = build(tb.config, copy, progress=False, core_only=True)
            new = {k: names - held[k] for k, names in _folders(copy).items()}
            assert {k for k, names in new.items() if names} == rebuilt, module
            if "runs" in rebuilt:
                assert len(new["runs"]) == 2 and len(new["models"]) == 2  # main, null; base, ref
            again = after.scores(after.runs[after.main].checkpoints[-1], 1)
        recomputed = {p.name for p in (copy / "tables").iterdir()} - tables
        assert bool(recomputed) == (rebuilt != {"corpus"}), module  # tables sit below both
        pd.testing.assert_frame_equal(again, table)  # an edit that changes nothing: same numbers
    unchanged = build(tb.config, copy, progress=False, core_only=True)  # the edits undone
    assert unchanged.runs[tb.main].checkpoints == before.runs[tb.main].checkpoints


def test_a_given_checkpoint_runs_the_same_pipeline(tiny_model_dir, tmp_path):
    from srlib.testbed.report import memorisation_table

    config = profile(
        "quick",
        base_model=str(tiny_model_dir),
        block_size=64,
        limit=6,
        epochs=1,
        code_to_text_sweep=(),
        exposure_sweep=(),
        paraphrase=False,
    )
    tb = build(config, tmp_path, progress=False)
    assert tb.base == tiny_model_dir and tb.base_losses == []
    table = memorisation_table(tb)
    assert set(table.run) == set(tb.runs) and table["p (Mann-Whitney)"].between(0, 1).all()


def test_packing_never_cuts_a_document_that_fits_in_a_block():
    from srlib.testbed.leak import _pack

    docs = [list(range(10, 40)), list(range(50, 58)), list(range(60, 65))]  # 30, 8, 5 tokens
    order = [0, 1, 2, 1, 2, 1]
    blocks, where = _pack(docs, order, eos=0, block=12)
    assert all(len(b) <= 12 for b in blocks)
    for i in (1, 2):  # short documents: every copy inside one block, EOS after it
        assert len(where[i]) == order.count(i)
        assert all(first == last for first, last, _ in where[i])
    long_copy = where[0][0]
    assert long_copy[0] != long_copy[1]  # a 30-token document must span blocks
    stream = [t for b in blocks for t in b]
    assert [t for t in stream if t] == [t for i in order for t in docs[i]]


def test_token_scores_round_trip_compactly():
    from srlib.models.base import TokenScores

    s = TokenScores(
        ["a", "b"], np.array([-1.25, -0.5]), np.array([-2.0, -1.0]), np.array([0.5, 0.25])
    )
    compact, plain = s.to_dict(compact=True), s.to_dict()
    assert isinstance(compact["logprobs"], str) and isinstance(plain["logprobs"], list)
    for d in (compact, plain):
        back = TokenScores.from_dict(d)
        np.testing.assert_allclose(back.logprobs, s.logprobs, rtol=1e-6)
        np.testing.assert_allclose(back.var, s.var, rtol=1e-6)


def test_exposure_sweep_and_paraphrase_runs_leak_what_they_say(quick_testbed_cache):
    tb, _ = quick_testbed_cache
    groups = tb.exposure_groups()
    leaked = set(tb.split.id[tb.split.leaked])
    assert set(groups) == leaked and set(groups.values()) == set(tb.config.exposure_sweep)
    seen = tb.runs["exposure"].exposures.set_index("id").copies
    assert seen.to_dict() == groups  # one epoch: each sample seen exactly its group's copies
    paraphrases = tb.paraphrases()
    assert paraphrases and set(paraphrases) <= leaked
    scored = {r["new"] for vs in tb.variants for v in vs for r in v.renames}  # every sample's
    for sample, variants in zip(tb.samples, tb.variants, strict=True):
        if sample.id in paraphrases:
            assert paraphrases[sample.id] not in {v.text for v in variants} | {sample.text}
            mine = {r["new"] for r in tb.paraphrase_variants[sample.id].renames}
            assert not mine & scored, sample.id  # disjoint from every scored variant's names
    assert any(v.renames for v in tb.paraphrase_variants.values())


def test_continued_training_refuses_copies_for_samples_it_does_not_leak(tmp_path):
    from srlib.testbed.leak import LeakSettings, continue_training

    with pytest.raises(ValueError, match="not leaked"):
        continue_training(tmp_path, [], {"a": "x"}, LeakSettings(), tmp_path / "o", copies={"b": 2})


def test_controls_tables_cover_every_condition(quick_testbed_cache):
    from srlib.testbed import controls

    tb, _ = quick_testbed_cache
    sweep = controls.exposure_table(tb)
    assert set(sweep.exposures) == set(tb.config.exposure_sweep)
    assert {"Blind (text only)", "SR Min-K%++", "SR Zlib vs base"} <= set(sweep.detector)
    memorised = controls.exposure_memorisation(tb)
    assert memorised["p (Mann-Whitney)"].between(0, 1).all()
    para = controls.paraphrase_table(tb)
    assert set(para.leaked) == {"original", "paraphrase"}
    pooled = controls.pooled_table(tb)
    assert pooled["saw it"].any() and (~pooled["saw it"]).any()
    assert set(pooled.benchmark) == set(tb.split.benchmark)  # controls of the set's own format
    assert pooled["p (vs reference)"].between(0, 1).all()
    assert pooled["p (vs control)"].between(0, 1).all()
    held = tb.split[~tb.split.leaked].groupby("benchmark").size()
    main = pooled[pooled.set.str.endswith("(main run)") & pooled["saw it"]].set_index("benchmark")
    assert (main["control samples"] == held.reindex(main.index)).all()  # the unseen half
    clean = pooled[~pooled["saw it"]]
    assert (clean.samples <= clean["control samples"]).all()  # one half against the other
    fpr = controls.false_positive_rate(pooled)
    assert fpr.tests.tolist() == [len(clean)] * 2
    power = controls.power_table(tb, sizes=(3,), draws=5)
    assert set(power.set) == set(pooled.set)
    assert set(power.design) == {"vs reference", "vs control"}
    with pytest.raises(ValueError, match="no 'other' run"):
        controls.last_stage(tb, "other")
    shift = controls.calibration_shift(tb)
    modes = shift.groupby("family").calibration.agg(set)
    assert {"none", "other benchmark", "clean split"} <= modes["self-referential"]
    assert (
        "none" not in modes["threshold baseline"] and "clean split" in modes["threshold baseline"]
    )
    assert set(shift.group) == set(tb.split.benchmark)


def test_zoo_plants_each_benchmark_alone_and_planted_reads_its_names(quick_testbed_cache):
    import pandas as pd

    from srlib.testbed.leak import load_run as _load
    from srlib.testbed.zoo import planted, testbed_variants, zoo

    tb, _ = quick_testbed_cache
    models = zoo(tb, progress=False)
    k = tb.config.zoo_exposures[0]
    assert list(models) == ["clean base", "null control", f"humaneval ×{k}", f"mbpp ×{k}"]
    run = _load(models[f"humaneval ×{k}"].parent)
    leaked = set(tb.split.id[tb.split.leaked])
    humaneval = {s.id for s in tb.samples if s.benchmark == "humaneval"} & leaked  # one half
    assert set(run.exposures.id) == humaneval and (run.exposures.exposures == k).all()
    null = _load(models["null control"].parent)  # the planted models' training, no benchmark
    assert null.exposures.empty and len(null.checkpoints) == len(run.checkpoints) == 1
    assert zoo(tb, progress=False) == models  # cached: nothing retrained
    given = testbed_variants(tb, ["mbpp:test", "humaneval"])
    mbpp = [s for s in tb.samples if s.benchmark == "mbpp"]
    assert [v.original_id for vs in given["mbpp:test"] for v in vs] == [
        s.id for s, vs in zip(tb.samples, tb.variants, strict=True) if s in mbpp for _ in vs
    ]
    summary = pd.DataFrame(
        {
            "model": ["humaneval ×2"] * 4 + ["clean base"],
            "benchmark": [
                "humaneval",
                "humaneval · leaked half",
                "humaneval · held-out half",
                "mbpp:test · leaked half",
                "humaneval · leaked half",
            ],
            "decision": "gray",
            "rate": [0.9, 0.9, 0.5, 0.4, 0.4],
            "null_rate": 0.4,
            "excess": [0.5, 0.5, 0.1, 0.0, 0.0],
            "excess_low": [0.3, 0.3, -0.1, -0.1, -0.1],
            "excess_high": [0.7, 0.7, 0.3, 0.1, 0.1],
            "p_vs_null": [1e-6, 1e-6, 0.2, 0.5, 0.5],
        }
    )
    answer = planted(summary)
    assert list(answer["where"]) == [
        "planted benchmark",
        "leaked half",
        "held-out half",
        "other benchmark",  # mbpp's leaked half is another model's leak
        "nothing planted",
    ]
    assert list(answer.planted) == [True, True, False, False, False]
    assert list(answer.found) == [True, True, False, False, False]


def test_a_replicate_splits_and_trains_anew_on_a_base_of_its_own(
    quick_testbed_cache, second_seed_cache, tmp_path
):
    tb, _ = quick_testbed_cache
    copy = tmp_path / "cache"  # a copy, so the shared caches stay as the others expect them
    copy_cache(second_seed_cache, copy)
    tb = build(tb.config.replace(replicates=(0, 1)), copy, progress=False, core_only=True)
    assert replicate(tb, tb.config.seed) is tb
    reps = replicates(tb)
    assert list(reps) == [0, 1]
    other = reps[1]
    assert tb.config.base_per_seed  # every profile: each seed its own base model
    assert other.base != tb.base and other.base_key != tb.base_key
    assert other.variants is tb.variants and other.reference == tb.reference
    assert (
        "the base model (initialisation and base-training text)"
        in seed_coverage(other.config)["varied"]
    )
    assert (
        "the base model (initialisation and base-training text)"
        in seed_coverage(other.config.replace(base_per_seed=False))["fixed"]
    )
    assert not other.split.leaked.equals(tb.split.leaked)  # another split, same shares
    per_benchmark = lambda s: s.groupby("benchmark").leaked.sum()  # noqa: E731
    assert per_benchmark(other.split).equals(per_benchmark(tb.split))
    assert list(other.runs) == [tb.main, "null"]
    from srlib.testbed.report import clean_model_rates

    rates = clean_model_rates(reps)  # every seed's base model and null control read
    assert sorted(set(rates.seed)) == [0, 1]
    assert set(rates.model) == {"base model", "null control"}
    calibrated = rates[rates.threshold == "calibrated"]
    assert {"PPL", "Zlib"} <= set(calibrated.detector) and "SR gray" in set(rates.detector)
    assert calibrated.verdict.str.contains("the nominal 0.05").all()
    assert ((rates.low <= rates.rate) & (rates.rate <= rates.high)).all()
    assert set(other.runs[tb.main].exposures.id) == set(other.split.id[other.split.leaked])
    assert other.runs[tb.main].checkpoints[-1] != tb.runs[tb.main].checkpoints[-1]
    assert other.runs["null"].checkpoints[-1] != tb.runs["null"].checkpoints[-1]  # its order
    assert replicate(tb, 1).runs[tb.main].checkpoints == other.runs[tb.main].checkpoints
    parts = claim_parts(reps)
    assert list(parts) == ["seed 0", "seed 1"]
    long, calibration, null = parts["seed 1"]
    labels = long.drop_duplicates("id").set_index("id").leaked
    assert labels.equals(other.split.set_index("id").leaked.loc[labels.index])
    assert {"SR gray", "SR black", "PPL", "NGO"} <= set(long.detector)
    assert not calibration.leaked.any()
    assert {"SR gray", "SR black", "PPL", "NGO"} <= set(null.detector)  # black-box too
    assert set(null.id) == set(long.id)  # the null control on the very problems evaluated


def test_thresholds_from_a_benchmark_the_model_never_saw(quick_testbed_cache):
    from srlib.testbed.cleancal import clean_fpr, clean_shift, clean_shift_parts
    from srlib.testbed.zoo import zoo

    tb, _ = quick_testbed_cache
    models = zoo(tb, progress=False)
    k = tb.config.zoo_exposures[0]
    parts = clean_shift_parts(tb, models)
    assert list(parts) == [
        f"humaneval ×{k}, calibrated on mbpp",
        f"mbpp ×{k}, calibrated on humaneval",
    ]
    long, calibration = parts[f"humaneval ×{k}, calibrated on mbpp"]
    assert set(long.benchmark) == {"humaneval"} and set(calibration.benchmark) == {"mbpp"}
    leaked = set(tb.split.id[tb.split.leaked])
    assert set(long.id[long.leaked]) == {i for i in long.id if i in leaked}  # its half
    assert not calibration.leaked.any()  # it never saw mbpp
    shift = clean_shift(tb, models)
    assert set(shift.part) == set(parts) and set(shift.role) == {"deployable"}
    assert set(shift.contrast) == {"SR gray − PPL", "SR gray − Min-K%", "SR gray − Min-K%++",
                                   "SR gray − Zlib"}  # fmt: skip
    fpr = clean_fpr(tb, models)
    unseen = fpr.groupby("model").benchmark.unique().map(sorted).to_dict()
    assert unseen["clean base"] == unseen["null control"] == ["humaneval", "mbpp"]
    assert unseen[f"humaneval ×{k}"] == ["mbpp"]  # only where it saw nothing
    thresholds = fpr[fpr.threshold != "none"]
    assert set(thresholds.detector) == {"PPL", "Min-K%", "Min-K%++", "Zlib"}
    assert ((thresholds.low <= thresholds.rate) & (thresholds.rate <= thresholds.high)).all()
