"""The controlled testbed's one configuration (a nanoGPT-style size card) and its named
profiles: ``cpu`` (the book's default on a 2-core machine, float32 with portable kernels),
``cpu-bf16`` (the same in bfloat16, for CPUs with bf16 units), ``quick`` (tests, seconds) and
``gpu`` (a real checkpoint continued-pre-trained on a GPU). A profile is a starting point:
``profile("cpu", epochs=4)`` changes one field, and every artefact is cached under a hash of
the fields it depends on, so a changed field retrains only what depends on it."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from srlib.models.cpu import check_dtype
from srlib.models.tiny import TinyConfig


@dataclass(frozen=True)
class TestbedConfig:
    """Everything that determines a testbed run; each field says what it changes."""

    # --- samples ---
    benchmarks: tuple[str, ...] = ("humaneval", "mbpp:test")  # scored; "name" or "name:split"
    calibration: tuple[str, ...] = ("mbpp:validation", "mbpp:train")  # known clean, never leaked
    clean_calibration: bool = True  # leave out calibration problems that duplicate an
    # evaluated sample (its solution verbatim or near, the duplication study's rule): a twin
    # of a leaked problem is touched by the leak. False: the whole split, twins included
    limit: int | None = None  # first N samples per benchmark (quick profile only)
    leaked_share: float = 0.5  # share of each benchmark's samples leaked (stratified split)
    n: int = 5  # variants per sample in the main table
    calibration_variants: int = 64  # first K calibration samples given n variants (they
    # calibrate the self-referential rules' margins)
    n_max: int = 10  # variants made and scored per sample (the n-sensitivity study's largest n)
    kinds: tuple[str, ...] = ("function", "variable", "test")  # transformations per variant
    seed: int = 0  # split, variants, corpus order, initialisation, training order
    replicates: tuple[int, ...] = (3, 4, 5, 6)  # seeds of the main run and its null control
    # as replicated for the claim (each: its own leaked/held-out split, continued-pre-training
    # order and, with ``base_per_seed``, base model; variants and the pinned corpus shared):
    # seeds no result had been read on when the design was fixed (``detection.declared``);
    # the detection chapter states each confirmatory contrast's power at them (``DESIGN``)
    base_per_seed: bool = True  # each replicate also trains a base model of its own on base
    # text drawn from the pinned corpus under its seed (what a reader's rerun with another
    # seed varies); False: one base model and general text for all, as in an audit of one
    # model
    # --- corpus (general text: the locked sources' code and documentation, data/corpus) ---
    sources: tuple[str, ...] = ()  # names of the lock's sources to read; () all of them
    base_chars: int = 4_000_000  # characters of general text the base model is trained on
    cpt_chars: int = 300_000  # characters of fresh general text in continued pre-training
    code_to_text: float = 0.75  # share of code (by characters) in the general text
    code_to_text_sweep: tuple[float, ...] = (0.25, 0.75)  # mixing ratios compared (add 0.5
    # where the time allows: each ratio is one more three-epoch run, scored)
    # --- base model ---
    base_model: str | None = None  # a checkpoint folder, cached HF id or locked model's name
    # (``testbed.locked``: smollm2-135m); None: train one here
    model: TinyConfig = field(
        default_factory=lambda: TinyConfig(
            vocab_size=2048, n_layer=4, n_head=4, n_embd=96, n_positions=512
        )
    )  # size of the model trained from scratch (ignored with ``base_model``); width 96, not
    # 128, keeps the book's CPU build in its budget (a training step costs about a quarter less)
    base_steps: int = 350  # optimiser steps of base training (about one pass over its text)
    base_lr: float = 3e-3  # peak learning rate of base training
    batch_size: int = 16  # blocks per optimiser step
    block_size: int = 256  # tokens per block
    reference: TinyConfig = field(
        default_factory=lambda: TinyConfig(
            vocab_size=2048, n_layer=2, n_head=2, n_embd=96, n_positions=512, seed=1
        )
    )  # an unrelated small model (other data, other seed, other size), for contrasted SR
    reference_steps: int = 250  # its optimiser steps
    # --- continued pre-training (the leak) ---
    repeats: int = 3  # times each leaked sample appears per epoch
    epochs: int = 3  # epochs of continued pre-training, one checkpoint after each
    exposure_sweep: tuple[int, ...] = (1, 2, 4, 8)  # one more run (one epoch): copies per group
    paraphrase: bool = True  # one more run: each leaked sample seen as an unscored variant
    zoo_exposures: tuple[int, ...] = (1, 4)  # the audit's zoo: one model per benchmark and
    # count, trained on the testbed's leaked half of that benchmark only, seen this many times
    cpt_lr: float = 3e-3  # peak learning rate of continued pre-training (1e-3: p ≈ 0.007 only)
    # --- scoring ---
    device: str = "cpu"  # torch device for training and scoring
    threads: int = 1  # CPU threads of training and scoring: the numbers depend on it, so it is
    # fixed (not taken from the machine or from how many chapters run beside)
    train_dtype: str = "float32"  # training precision, with the portable kernels
    # (srlib.models.numerics): the same weights on CPUs of one numerics class (kernels and
    # vendor: an AMD CPU gave other weights than an Intel one under the same pin; the lock
    # keeps a record per class). "bfloat16": the forward
    # pass autocast (weights and optimiser state float32), the ``cpu-bf16`` profile for CPUs
    # with bf16 units — other weights (``bench/precision.py`` sets the two side by side)
    dtype: str = "float32"  # scoring dtype (bfloat16 on GPUs)
    score_batch: int = 1  # texts per forward pass. One: a text's scores depend on the model and
    # the text only, not on which texts shared its padded batch (partners move the last bits, and
    # chapters running side by side decide who computes a text first); on one thread about as
    # fast as 16 for the cpu model (``OMP_NUM_THREADS=1 bench/scoring.py 16 4 96``). Batches pay
    # on a GPU
    generate_batch: int = 32  # prompts per generation batch: decoding a small model on a CPU is
    # bound by per-step overhead, so 32 prompts decode in about 3/4 of the time of 16
    # (``bench/generation.py``)
    max_new_tokens: int = 48  # black-box: tokens generated after each prefix
    black_box_stages: str = "last"  # "last": the main run's last checkpoint; or "all" stages
    fpr: float = 0.05  # calibrated thresholds flag this share of the calibration split
    n_boot: int = 1000  # bootstrap resamples for every interval

    def replace(self, **changes: Any) -> TestbedConfig:
        """A copy with ``changes``; an unknown field is an error naming it."""
        unknown = set(changes) - {f.name for f in dataclasses.fields(self)}
        if unknown:
            raise ValueError(f"unknown testbed setting(s) {sorted(unknown)}")
        return dataclasses.replace(self, **changes)

    def __post_init__(self) -> None:
        check_dtype(self.train_dtype, self.device)


PROFILES: dict[str, TestbedConfig] = {
    "cpu": TestbedConfig(),
    "cpu-bf16": TestbedConfig(train_dtype="bfloat16"),  # another build's numbers: run it with
    # SRLIB_NUMERICS=native on a CPU with bf16 units (AMX, AVX-512 BF16; elsewhere emulated, 7-8x
    # slower); every artefact it trains is keyed apart from the ``cpu`` profile's
    "quick": TestbedConfig(
        limit=12,
        # score_batch 1, as the cpu profiles: with 16, a text's last bits depended on which
        # process scored it first (the suite's tests share the quick book's cache), and the
        # quick book's tables parted from a rerun's in one CI run of three
        generate_batch=16,
        n=2,
        n_max=3,
        calibration_variants=6,
        base_chars=300_000,
        cpt_chars=80_000,
        code_to_text_sweep=(0.5, 0.75),
        model=TinyConfig(vocab_size=512, n_layer=2, n_head=2, n_embd=32, n_positions=256),
        base_steps=30,
        batch_size=4,
        block_size=128,
        reference=TinyConfig(vocab_size=512, n_layer=1, n_head=2, n_embd=32, n_positions=256),
        reference_steps=10,
        repeats=3,
        epochs=2,
        exposure_sweep=(1, 4),
        zoo_exposures=(4,),
        max_new_tokens=16,
        n_boot=50,
        replicates=(0,),  # the suite trains a second replicate (own base model) where it tests them
        sources=("flask", "werkzeug", "jinja2"),  # the lock's three smallest: 2.4 M characters
        # of code, ten times what the quick runs draw, decontaminated in a second
    ),
    "gpu": TestbedConfig(
        base_model="Qwen/Qwen2.5-Coder-0.5B",  # any causal LM folder or cached HF id
        base_chars=0,  # a real checkpoint needs no base training
        cpt_chars=20_000_000,
        batch_size=8,
        block_size=1024,
        repeats=1,
        epochs=3,
        cpt_lr=2e-5,
        device="cuda",
        dtype="bfloat16",
        score_batch=32,
        max_new_tokens=128,
        black_box_stages="all",
    ),
}
"""Named starting points: ``cpu`` for the book (``cpu-bf16`` on bf16 units), ``quick`` for
tests, ``gpu`` for real models."""


def profile(name: str, **changes: Any) -> TestbedConfig:
    """A named profile with ``changes`` applied; an unknown name lists the known ones."""
    if name not in PROFILES:
        raise ValueError(f"unknown testbed profile {name!r}; choose from {sorted(PROFILES)}")
    return PROFILES[name].replace(**changes)


def seed_coverage(config: TestbedConfig) -> dict[str, list[str]]:
    """What the replicate seeds vary and what they hold fixed under ``config``: the sources of
    variance the claim's per-seed column covers, and those it does not."""
    varied = ["the leaked / held-out split", "the continued-pre-training order"]
    fixed = ["the pinned corpus (its sources and decontamination)", "the variants"]
    fixed.append("the calibration samples")
    own_base = config.base_per_seed and config.base_model is None
    base = ["the base model (initialisation and base-training text)"]
    base.append("the general text of continued pre-training")
    (varied if own_base else fixed).extend(base)
    return {"varied": varied, "fixed": fixed}
