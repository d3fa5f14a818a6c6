"""Build a controlled testbed from a ``TestbedConfig``: samples and their split, variants,
the decontaminated corpus, the base and reference models, and the continued-pre-training
runs (leaked at each code-to-text ratio, the null control, an exposure sweep and a
paraphrase leak). Every artefact is cached under ``cache_dir`` by a hash of what produced
it, so rebuilding with nothing changed trains nothing, and a changed field rebuilds only
what depends on it."""

from __future__ import annotations

import dataclasses
import json
import pickle
import random
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from srlib import samples as samples_module
from srlib.benchmarks import load_benchmark
from srlib.duplication.dedup.overlap import near_twins
from srlib.errors import NotBuilt
from srlib.models.hf import fingerprint, model_folder
from srlib.samples import Sample
from srlib.store import Artifact, Store, digest, text_digest
from srlib.testbed import leak as leak_module
from srlib.testbed import sources as sources_module
from srlib.testbed.config import TestbedConfig
from srlib.testbed.corpus import Corpus, Mixture, build_corpus, verify
from srlib.testbed.leak import LeakSettings
from srlib.testbed.locked import resolve
from srlib.testbed.runs import EXPOSURE, NULL, PARAPHRASE, LeakRun, load_run
from srlib.testbed.sources import read_lock
from srlib.testbed.testbed import Testbed, read_variants, run_name, variants_artifact
from srlib.testbed.train import TrainSettings, train_model
from srlib.transforms import Variant, Variants, make_variants_many


def load_samples(specs: tuple[str, ...], limit: int | None = None) -> list[Sample]:
    """Samples of each ``name`` or ``name:split`` (``jsonl:PATH`` as is), first ``limit`` each."""
    return [s for spec in specs for s in load_benchmark(spec)[:limit]]


def clean_calibration(
    pool: list[Sample], samples: list[Sample]
) -> tuple[list[Sample], pd.DataFrame]:
    """The calibration problems of ``pool`` that duplicate none of ``samples``, and the
    twins left out (``overlap.near_twins``: verbatim or near, the duplication study's rule)."""
    twins = near_twins(pool, samples)
    left_out = set(twins.id)
    return [s for s in pool if s.id not in left_out], twins


def split_samples(samples: list[Sample], leaked_share: float, seed: int) -> pd.DataFrame:
    """Leaked / held-out by seed, stratified by benchmark: one row per sample."""
    rng = random.Random(seed)
    rows = []
    for bench in dict.fromkeys(s.benchmark for s in samples):
        ids = [s.id for s in samples if s.benchmark == bench]
        leaked = set(rng.sample(ids, round(leaked_share * len(ids))))
        rows += [{"id": i, "benchmark": bench, "leaked": i in leaked} for i in ids]
    return pd.DataFrame(rows)


def build(
    config: TestbedConfig, cache_dir: str | Path, progress: bool = True, core_only: bool = False
) -> Testbed:
    """Everything the experiments need, cached (see the module docstring). ``core_only``
    trains only the main leaked run and the null control (what the testbed, detection and
    audit chapters read), leaving the other ratios, the exposure sweep and the paraphrase
    leak to a later full build (the sensitivity chapter's), so the book's chapters that
    need them run side by side with the others."""
    cache = Path(cache_dir)
    samples = load_samples(config.benchmarks, config.limit)
    pool = load_samples(config.calibration, config.limit)
    clash = {s.id for s in samples} & {s.id for s in pool}
    if clash:
        raise ValueError(f"calibration samples also scored as benchmark samples: {sorted(clash)}")
    evaluated = samples if config.clean_calibration else []  # off: nothing to be a twin of
    calibration, twins = clean_calibration(pool, evaluated)
    split = split_samples(samples, config.leaked_share, config.seed)
    variants = cached_variants(config, samples, cache, progress)
    k = min(config.calibration_variants, len(calibration))
    cal_variants = []
    if k:
        cal_variants = cached_variants(config, calibration[:k], cache, progress, n=config.n)
    cal_variants += [Variants() for _ in calibration[k:]]
    corpus, _ = _corpus(config, samples + pool, cache, progress)  # every twin stays out too
    base_mix = base_mixture(config, corpus)
    plan = [(run_name(r), r) for r in _ratios(config)] + [(NULL, config.code_to_text)]
    mixes = {name: cpt_mixture(config, corpus, ratio, base_mix) for name, ratio in plan}
    base, losses, base_key = _base(config, base_mix, cache, progress)
    reference = _reference(config, corpus, [base_mix, *mixes.values()], cache)
    tb = Testbed(
        config,
        cache,
        samples,
        calibration,
        split,
        variants,
        cal_variants,
        corpus,
        base,
        losses,
        base_key,
        reference,
        {},
    )
    tb.calibration_twins = twins
    leaked = tb.leaked_texts()
    settings = leak_settings(config)
    extra = []
    if config.exposure_sweep:
        sweep = dataclasses.replace(settings, epochs=1)
        extra.append((EXPOSURE, leaked, sweep, tb.exposure_groups()))
    if config.paraphrase and not core_only:
        tb.paraphrase_variants = paraphrase_variants(tb, progress)
        extra.append((PARAPHRASE, tb.paraphrases(), settings, None))
    for name, texts, run_settings, copies in [
        (name, {} if name == NULL else leaked, settings, None) for name, _ in plan
    ] + extra:
        if core_only and name not in (tb.main, NULL):
            continue
        general = mixes.get(name, mixes[tb.main]).texts
        tb.runs[name] = train_run(tb, name, general, texts, run_settings, copies, progress)
    return tb


def shared(
    profile_name: str,
    settings: dict | None = None,
    base_model: str | None = None,
    cache_dir: str | Path = ".srlib-cache/testbed",
    core_only: bool = True,
    progress: bool = False,
    detectors: Sequence = (),
) -> Testbed:
    """The testbed every chapter that reads it opens, from the parameters ``srlib book``
    injects into each of them from ``runs.yml``'s one ``testbed:`` block (so they cannot
    disagree): a named profile, other fields changed, a given base checkpoint; and a
    chapter's own ``detectors`` (``plugins.load``), scored on every checkpoint it reads
    (its replicates inherit them)."""
    from srlib.detection.plugins import load
    from srlib.testbed.config import profile

    changes = dict(settings or {})
    if base_model:
        changes["base_model"] = base_model
    tb = build(profile(profile_name, **changes), cache_dir, progress, core_only)
    tb.plugins = tuple(load(detectors))
    tb.opened = {"profile_name": profile_name, "settings": dict(settings or {}),
                 "base_model": base_model, "cache_dir": str(cache_dir), "core_only": core_only,
                 "detectors": detectors}  # fmt: skip
    return tb


def replicate(tb: Testbed, seed: int, progress: bool = False) -> Testbed:
    """The main leaked run and its null control again under ``seed``: their own leaked /
    held-out split and continued-pre-training order (documents and leaked copies shuffled
    anew) on the same variants and calibration samples; with ``base_per_seed`` (and no given
    checkpoint) also a base model of its own, initialised and trained on base text drawn from
    the pinned corpus under ``seed``, and fresh general text after it — else the testbed's
    base model and general text. ``seed`` equal to the testbed's own returns the testbed; the
    models and runs go through the store."""
    if seed == tb.config.seed:
        return tb
    config = tb.config.replace(seed=seed)
    split = split_samples(tb.samples, config.leaked_share, seed)
    rep = dataclasses.replace(tb, config=config, split=split, runs={}, memo={}, failures={})
    own = config if config.base_per_seed and config.base_model is None else tb.config
    base_mix = base_mixture(own, tb.corpus)
    if own is config:
        rep.base, rep.base_losses, rep.base_key = _base(config, base_mix, tb.cache_dir, progress)
    general = cpt_mixture(own, tb.corpus, config.code_to_text, base_mix).texts
    settings = leak_settings(config)
    for name, texts in ((rep.main, rep.leaked_texts()), (NULL, {})):
        rep.runs[name] = train_run(rep, name, general, texts, settings, None, progress)
    return rep


def replicates(tb: Testbed, progress: bool = False) -> dict[int, Testbed]:
    """Seed → the testbed replicated under it, for each of the config's ``replicates``."""
    return {seed: replicate(tb, seed, progress) for seed in tb.config.replicates}


def train_run(
    tb: Testbed,
    name: str,
    general: list[str],
    texts: dict[str, str],
    settings: LeakSettings,
    copies: dict[str, int] | None = None,
    progress: bool = True,
) -> LeakRun:
    """One continued-pre-training run of ``tb``'s base model, through the store: keyed on the
    base model's key, the texts, the settings and the training code. A testbed opened for
    reading (``Testbed.reading``) trains nothing: a run not in the store is ``NotBuilt``."""
    inputs = {
        "base": tb.base_key,
        "general": text_digest(general),
        "leaked": digest(texts),
        "settings": settings,
        "copies": copies,
    }
    artifact = Artifact("runs", inputs, name=name)
    folder = tb.store.get(artifact)
    if folder is None:
        if tb.reading:
            raise NotBuilt(f"run {name!r} of seed {tb.config.seed} was never trained: "
                           "train it first (testbed.prepare.prepare, or build.shared)")  # fmt: skip
        with tb.store.put(artifact) as tmp:
            leak_module.train_run(tb.base, general, texts, settings, tmp, progress, copies)
        folder = tb.store.path(artifact)
    return load_run(folder)


def base_mixture(config: TestbedConfig, corpus: Corpus) -> Mixture:
    """The base model's training text: the ``base`` stream of the config's seed."""
    return corpus.mixture(config.base_chars, config.code_to_text, config.seed, use="base")


def cpt_mixture(
    config: TestbedConfig, corpus: Corpus, ratio: float, base_mix: Mixture | None = None
) -> Mixture:
    """The fresh general text of continued pre-training at ``ratio``: the ``cpt`` stream of
    the config's seed, without the base model's documents (``base_mix``, drawn if not given)."""
    base_mix = base_mix or base_mixture(config, corpus)
    return corpus.mixture(config.cpt_chars, ratio, config.seed, use="cpt", exclude=base_mix)


def leak_settings(config: TestbedConfig) -> LeakSettings:
    """How every continued-pre-training run of the testbed trains."""
    return LeakSettings(
        repeats=config.repeats,
        epochs=config.epochs,
        lr=config.cpt_lr,
        batch_size=config.batch_size,
        block_size=config.block_size,
        seed=config.seed,
        device=config.device,
        dtype=config.train_dtype,
        threads=config.threads,
    )


def corpus_id(samples: list[Sample], sources: list) -> str:
    """What names a corpus in the lock: the samples it is decontaminated against and the
    locked sources (not the code: a code change that alters the corpus is caught)."""
    return digest(text_digest([s.text for s in samples]), sources)


def chosen_sources(config: TestbedConfig) -> list:
    """The lock's sources the config reads (``sources``: by name; empty: all), in lock order;
    an unknown name is an error listing the locked ones."""
    locked = read_lock()["sources"]
    unknown = set(config.sources) - {s.name for s in locked}
    if unknown:
        raise ValueError(
            f"no source {sorted(unknown)} in the corpus lock; it has {[s.name for s in locked]}"
        )
    return [s for s in locked if not config.sources or s.name in config.sources]


def _corpus(
    config: TestbedConfig,
    samples: list[Sample],
    cache: Path,
    progress: bool,
    allow: bool | None = None,
) -> tuple[Corpus, str]:
    """The decontaminated corpus and its key, through the store (keyed on the samples, the
    locked sources and the corpus code), checked against the digest the lock records
    (``corpus.verify``; ``allow``: a difference is reported, not raised)."""
    sources = chosen_sources(config)
    name = corpus_id(samples, sources)
    artifact = Artifact("corpus", {"corpus": name, "sources": sources}, name="corpus")
    store = Store(cache)
    folder = store.get(artifact)
    if folder is not None:
        with (folder / "corpus.pkl").open("rb") as fh:
            corpus = pickle.load(fh)
    else:
        corpus = build_corpus(samples, sources, progress=progress)
        with store.put(artifact) as tmp, (tmp / "corpus.pkl").open("wb") as fh:
            pickle.dump(corpus, fh)
    corpus.check = verify(corpus, name, allow)
    return corpus, artifact.key


def corpus_of(
    profile_name: str, cache_dir: str | Path, record: bool = False, progress: bool = True
) -> tuple[Corpus, str]:
    """The corpus a named profile trains on (through the store) and its lock name; with
    ``record``, its digest and document list are written into the lock first, so it matches."""
    from srlib.testbed.config import profile

    config = profile(profile_name)
    samples = load_samples(config.benchmarks, config.limit)
    samples += load_samples(config.calibration, config.limit)
    corpus, key = _corpus(config, samples, Path(cache_dir), progress, allow=record or None)
    if record:
        entry = {"digest": corpus.digest(), "profile": profile_name}
        entry |= {f"{kind} documents": len(getattr(corpus, kind)) for kind in ("code", "text")}
        sources_module.record(corpus.check["corpus"], entry, corpus.listing())
        corpus.check = verify(corpus, corpus.check["corpus"])
    return corpus, key


def _ratios(config: TestbedConfig) -> list[float]:
    """The code-to-text ratios trained: the sweep, and the main ratio first."""
    return list(dict.fromkeys([config.code_to_text, *config.code_to_text_sweep]))


def _reference_chars(config: TestbedConfig) -> int:
    """Characters the unrelated reference model is trained on."""
    return max(config.base_chars // 4, config.cpt_chars // 2)


def cached_variants(
    config: TestbedConfig,
    samples: list[Sample],
    cache: Path,
    progress: bool = True,
    n: int | None = None,
    naturalness=None,
    tag: str = "",
    avoid: list[set[str]] | None = None,
) -> list[Variants]:
    """``n`` (``None``: ``n_max``) variants per sample, through the store: keyed on the
    samples, the settings, ``tag`` (which names the ``naturalness`` scorer), the names to
    ``avoid`` (if any) and the variant code (renamer, lexicon, test-case mutator, sandbox
    and all they import)."""
    n = config.n_max if n is None else n
    artifact = variants_artifact(config, samples, n, tag, avoid)
    store = Store(cache)
    folder = store.get(artifact)
    if folder is not None:
        return read_variants(folder, samples)
    sets = make_variants_many(
        samples,
        n,
        config.kinds,
        config.seed,
        naturalness=naturalness,
        pool=2,
        progress=progress,
        avoid=avoid,
    )
    with store.put(artifact) as tmp:
        reasons = {s.id: vs.reasons for s, vs in zip(samples, sets, strict=True)}
        (tmp / "reasons.json").write_text(json.dumps(reasons))
        samples_module.write_jsonl([v for vs in sets for v in vs], tmp / "variants.jsonl")
    return sets


def paraphrase_variants(tb: Testbed, progress: bool = False) -> dict[str, Variant]:
    """The paraphrase leak's texts: leaked sample id → one variant whose new names are none
    of the names any scored variant chose, of any sample (a vocabulary disjoint from every
    scored one, so training on a paraphrase teaches no name a scored variant of another
    problem uses), made and validated like them and cached beside them."""
    leaked = set(tb.split.id[tb.split.leaked])
    scored = frozenset(r["new"] for vs in tb.variants for v in vs for r in v.renames)
    samples = [s for s in tb.samples if s.id in leaked]
    avoid = [scored] * len(samples)
    own = dataclasses.replace(tb.config, seed=tb.config.seed + 1)  # its own draws, test cases too
    sets = cached_variants(own, samples, tb.cache_dir, progress, n=1, tag="paraphrase", avoid=avoid)
    return {s.id: vs[0] for s, vs in zip(samples, sets, strict=True) if len(vs)}


def _settings(config: TestbedConfig, size, steps: int, seed: int) -> TrainSettings:
    """Training from scratch with the testbed's batch, block and learning rate."""
    return TrainSettings(
        model=size,
        steps=steps,
        batch_size=config.batch_size,
        block_size=config.block_size,
        lr=config.base_lr,
        seed=seed,
        threads=config.threads,
        dtype=config.train_dtype,
    )


def _base(config, mix: Mixture, cache: Path, progress: bool) -> tuple[Path, list[float], str]:
    """The base model, its losses and its key: the configured checkpoint (keyed on its
    content, so a moved folder is the same model), or one trained here on ``mix``."""
    if config.base_model is not None:
        folder = model_folder(resolve(config.base_model))
        return folder, [], fingerprint(folder)
    settings = _settings(config, config.model, config.base_steps, config.seed)
    trained = train_model(mix.texts, cache, settings, name="base", progress=progress)
    return trained.path, trained.losses, trained.key


def _reference(config, corpus: Corpus, used: list[Mixture], cache: Path) -> Path:
    """An unrelated small model: other documents (none of the base and continued
    pre-training text), another seed, another size — it never saw the benchmark either."""
    ratio, seed = config.code_to_text, config.seed + 1
    mix = corpus.mixture(_reference_chars(config), ratio, seed, use="reference", exclude=used)
    settings = _settings(config, config.reference, config.reference_steps, config.seed + 1)
    return train_model(mix.texts, cache, settings, name="reference").path
