"""The one recipe for training a small model here: a BPE tokenizer learned from local text,
a GPT-2 of ``TinyConfig`` size trained from scratch, saved in HF format where ``HFModel``
loads it, and cached under a hash of everything that produced it — re-running with the same
inputs trains nothing."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from srlib.models.tiny import TinyConfig, save, tiny_gpt2, train_lm, train_tokenizer


@dataclass(frozen=True)
class TrainSettings:
    """How a small model is trained (nanoGPT-style: every field changes the weights)."""

    model: TinyConfig = field(default_factory=TinyConfig)  # size of network and vocabulary
    steps: int = 800  # optimiser steps (0: a randomly initialised model)
    batch_size: int = 8  # blocks per step
    block_size: int = 256  # tokens per block
    lr: float = 3e-3  # peak learning rate (warm-up then cosine decay)
    seed: int = 0  # block sampling and initialisation


@dataclass(frozen=True)
class TrainedModel:
    """A trained model's folder (load it with ``HFModel(path)``) and its loss per step."""

    path: Path
    losses: list[float]


def _digest(texts: Sequence[str]) -> str:
    h = hashlib.sha256()
    for t in texts:
        h.update(hashlib.sha256(t.encode("utf-8")).digest())
    return h.hexdigest()


def model_key(texts: Sequence[str], tokenizer_texts: Sequence[str], settings: TrainSettings) -> str:
    """A hash of the training texts, the tokenizer texts and the settings."""
    h = hashlib.sha256(json.dumps(asdict(settings), sort_keys=True).encode())
    h.update(_digest(texts).encode() + _digest(tokenizer_texts).encode())
    return h.hexdigest()[:16]


def train_model(
    texts: Sequence[str],
    folder: str | os.PathLike[str],
    settings: TrainSettings | None = None,
    tokenizer_texts: Sequence[str] | None = None,
    name: str = "model",
) -> TrainedModel:
    """Train (or load from ``folder``) a small GPT-2 on ``texts``, its tokenizer learned from
    ``tokenizer_texts`` (default: ``texts``). The model is saved atomically under
    ``folder/<name>-<key>``, the key hashing every input, with its losses beside it."""
    settings = settings or TrainSettings()
    tokenizer_texts = list(tokenizer_texts if tokenizer_texts is not None else texts)
    out = Path(folder) / f"{name}-{model_key(texts, tokenizer_texts, settings)}"
    losses_file = out / "losses.json"
    if losses_file.is_file():
        return TrainedModel(out, json.loads(losses_file.read_text()))
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
        )
    tmp = out.with_name(out.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    save(net, tokenizer, tmp)
    (tmp / "losses.json").write_text(json.dumps(losses))
    shutil.rmtree(out, ignore_errors=True)
    os.replace(tmp, out)
    return TrainedModel(out, losses)
