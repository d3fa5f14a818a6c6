"""The real-model chapter's one configuration and its named profiles: ``cpu`` (the book's,
sized for a 2-core machine) and ``quick`` (tests, a few problems). Every field says what it
changes; the audit and each leaked run are cached under a hash of the fields they read."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RealConfig:
    """What the real-model study runs: which model, which problems, how the leak is made."""

    # --- the audit ---
    model: str = "smollm2-135m"  # a locked model's name (testbed.locked), a folder or cached id
    benchmarks: tuple[str, ...] = ("humaneval", "mbpp:test")  # audited; "name" or "name:split"
    control: str = "fresh"  # problems the model cannot have seen: every rate's empirical null
    limits: tuple[tuple[str, int], ...] = (("humaneval", 50), ("mbpp:test", 50))  # first N
    # problems of the named sets (a benchmark spec or the control), the others whole: the
    # published benchmarks cut to fit the 2-core budget, the control (the null) kept whole;
    # () reads every problem. 50, not the 100 of #63's first build, which put the book over its
    # budget: the excess over the control that 100 found lay far beyond what 50 detect
    # (docs/measured-builds.md), and the chapter states what its sizes detect
    n: int = 5  # variants per problem, as the testbed's main table
    seed: int = 0  # variants (the same for the audit and the leak: scores are shared)
    threads: int = 1  # CPU threads of scoring and training (the numbers depend on it)
    device: str = "cpu"  # torch device of scoring and training ("cuda" on a GPU)
    dtype: str = "float32"  # scoring dtype (bfloat16 on a GPU)
    score_batch: int = 1  # texts per forward pass (one: a text's scores are its own)
    # --- the known leak (continued pre-training on half of the control) ---
    leaked_share: float = 0.5  # share of the control's problems leaked (the rest held out)
    leak_seeds: tuple[int, ...] = (0,)  # one leaked run per seed: its split and data order
    cpt_chars: int = 20_000  # characters of general text (the testbed's pinned corpus) mixed in
    code_to_text: float = 0.75  # share of code in that text, as the testbed's main run
    corpus_profile: str = "cpu"  # the testbed profile whose decontaminated corpus is read
    repeats: int = 2  # copies of each leaked problem per epoch
    epochs: int = 1  # epochs (each leaked problem is seen repeats × epochs times)
    lr: float = 2e-4  # peak learning rate (a pretrained model: a fifteenth of the testbed's)
    batch_size: int = 8  # blocks per optimiser step
    block_size: int = 512  # tokens per block: every fresh problem's text fits in one whole
    # (the longest has fewer tokens; ``run.json`` counts the whole copies), so each leaked
    # copy is seen in one context
    # --- inference ---
    fpr: float = 0.05  # the false-positive rate of the calibrated and held-out points
    n_boot: int = 1000  # bootstrap resamples of every interval

    def replace(self, **changes: Any) -> RealConfig:
        """A copy with ``changes``; an unknown field is an error naming it."""
        unknown = set(changes) - {f.name for f in dataclasses.fields(self)}
        if unknown:
            raise ValueError(f"unknown real-model setting(s) {sorted(unknown)}")
        if isinstance(changes.get("limits"), dict):
            changes["limits"] = tuple(sorted(changes["limits"].items()))
        for name in ("benchmarks", "leak_seeds"):
            if name in changes:
                changes[name] = tuple(changes[name])
        return dataclasses.replace(self, **changes)

    def limit_of(self, name: str) -> int | None:
        """How many problems of the set ``name`` the study reads (None: all)."""
        return dict(self.limits).get(name)


PROFILES: dict[str, RealConfig] = {
    "cpu": RealConfig(),
    "quick": RealConfig(
        limits=(("humaneval", 4), ("mbpp:test", 4), ("fresh", 4)),
        n=2,
        cpt_chars=2_000,
        corpus_profile="quick",
        repeats=1,
        epochs=1,
        n_boot=200,
    ),
}


def real_profile(name: str, **changes: Any) -> RealConfig:
    """A named profile with ``changes``; an unknown name is an error listing the profiles."""
    if name not in PROFILES:
        raise ValueError(f"unknown real-model profile {name!r}; profiles: {sorted(PROFILES)}")
    return PROFILES[name].replace(**changes)
