"""The one recipe for training a small model here: a BPE tokenizer learned from local text,
a GPT-2 of ``TinyConfig`` size trained from scratch, saved in HF format where ``HFModel``
loads it, and cached under a hash of everything that produced it — re-running with the same
inputs trains nothing."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from srlib.models.tiny import TinyConfig, save, tiny_gpt2, train_lm, train_tokenizer
from srlib.store import Artifact, Store, text_digest


@dataclass(frozen=True)
class TrainSettings:
    """How a small model is trained (nanoGPT-style: every field changes the weights)."""

    model: TinyConfig = field(default_factory=TinyConfig)  # size of network and vocabulary
    steps: int = 800  # optimiser steps (0: a randomly initialised model)
    batch_size: int = 8  # blocks per step
    block_size: int = 256  # tokens per block
    lr: float = 3e-3  # peak learning rate (warm-up then cosine decay)
    seed: int = 0  # block sampling and initialisation
    threads: int = 1  # CPU threads (the weights depend on it, so it is fixed and keyed)
    dtype: str = "float32"  # autocast dtype of the forward pass (weights stay float32)


@dataclass(frozen=True)
class TrainedModel:
    """A trained model's folder (load it with ``HFModel(path)``) and its loss per step."""

    path: Path
    losses: list[float]
    key: str = ""  # the store key: what downstream artifacts are keyed on


def model_artifact(
    texts: Sequence[str],
    tokenizer_texts: Sequence[str],
    settings: TrainSettings,
    name: str,
) -> Artifact:
    """The store's description of a trained model: the content of its texts and tokenizer
    texts (a rebuilt corpus that gives other documents retrains it; one that gives the same
    documents does not), its settings and the training code (this module, the tiny-model
    definition and all they import)."""
    inputs = {"texts": text_digest(texts), "tokenizer": text_digest(tokenizer_texts)}
    return Artifact("models", inputs | {"settings": settings}, name=name)


def train_model(
    texts: Sequence[str],
    folder: str | os.PathLike[str],
    settings: TrainSettings | None = None,
    tokenizer_texts: Sequence[str] | None = None,
    name: str = "model",
    progress: bool = True,
) -> TrainedModel:
    """Train (or load from the store at ``folder``) a small GPT-2 on ``texts``, its tokenizer
    learned from ``tokenizer_texts`` (default: ``texts``). The model is saved atomically under
    ``folder/models/<name>-<key>``, the key hashing every input and the training code, with
    its losses beside it."""
    settings = settings or TrainSettings()
    tokenizer_texts = list(tokenizer_texts if tokenizer_texts is not None else texts)
    store, artifact = (
        Store(folder),
        model_artifact(texts, tokenizer_texts, settings, name),
    )
    found = store.get(artifact)
    if found is not None:
        return TrainedModel(found, json.loads((found / "losses.json").read_text()), artifact.key)
    tokenizer = train_tokenizer(tokenizer_texts, settings.model.vocab_size)
    net = tiny_gpt2(tokenizer, settings.model)
    losses = []
    if settings.steps:
        losses = train_lm(
            net,
            tokenizer,
            texts,
            steps=settings.steps,
            batch_size=settings.batch_size,
            block_size=settings.block_size,
            lr=settings.lr,
            seed=settings.seed,
            threads=settings.threads,
            dtype=settings.dtype,
            progress=f"training {name}" if progress else None,
        )
    with store.put(artifact) as tmp:
        save(net, tokenizer, tmp)
        (tmp / "losses.json").write_text(json.dumps(losses))
    return TrainedModel(store.path(artifact), losses, artifact.key)
