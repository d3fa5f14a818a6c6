"""Continued pre-training with a known leak: the leaked samples' text, repeated, mixed into
general text, trained for whole epochs with a checkpoint after each, and the exact number of
times each leaked sample was trained on recorded.

Every epoch packs the same documents (general text plus ``repeats`` copies of each leaked
text, shuffled anew per epoch) into blocks of at most ``block_size`` tokens and trains on
every block once, so exposures are counted, not sampled. A document that fits in a block is
never cut by a block boundary, so a leaked sample shorter than a block is always seen whole,
in one context; ``whole`` counts the copies that were.
A run with no leaked texts is the null control: the same training without the benchmark.
"""

from __future__ import annotations

import json
import math
import os
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from srlib.models.base import bar_step, torch_threads, training_bar
from srlib.models.cpu import ATTENTION, autocast, check_dtype
from srlib.store import atomic_path
from srlib.testbed.runs import LeakRun, load_run  # noqa: F401 (load_run: read back here too)


@dataclass(frozen=True)
class LeakSettings:
    """How the leak is trained (every field changes the checkpoints)."""

    repeats: int = 2  # copies of each leaked text per epoch
    epochs: int = 3  # epochs, one checkpoint after each
    lr: float = 1e-3  # peak learning rate (5% warm-up, then cosine decay to zero)
    batch_size: int = 16  # blocks per optimiser step
    block_size: int = 256  # tokens per block
    seed: int = 0  # document order per epoch
    device: str = "cpu"  # torch device
    dtype: str = "float32"  # autocast dtype of the forward pass (weights stay float32)
    threads: int = 1  # CPU threads (the weights depend on it, so it is fixed and keyed)


def _pack(token_docs: list[list[int]], order: list[int], eos: int, block: int):
    """Concatenate documents in ``order`` (each followed by EOS) into blocks of at most
    ``block`` tokens. A document that fits in a block is never cut: when it does not fit in
    what is left of the current block, that block is closed short and the document starts
    the next one. Longer documents are cut across blocks. Returns the blocks and, per
    document index, each of its copies as (first block, last block, start in the first
    block)."""
    blocks: list[list[int]] = [[]]
    where: dict[int, list[tuple[int, int, int]]] = {}
    for i in order:
        doc = token_docs[i] + [eos]
        if len(doc) <= block and len(blocks[-1]) + len(doc) > block:
            blocks.append([])
        start = (len(blocks) - 1, len(blocks[-1]))
        for tok in doc:
            if len(blocks[-1]) == block:
                blocks.append([])
            blocks[-1].append(tok)
        where.setdefault(i, []).append((start[0], len(blocks) - 1, start[1]))
    return [b for b in blocks if len(b) > 1], where


def continue_training(
    base: str | os.PathLike[str],
    general: Sequence[str],
    leaked: dict[str, str],
    settings: LeakSettings,
    out: str | os.PathLike[str],
    progress: bool = True,
    copies: dict[str, int] | None = None,
) -> LeakRun:
    """Continue training the causal LM at ``base`` on ``general`` texts plus
    ``settings.repeats`` copies per epoch of each ``leaked`` text (sample id → text), or
    ``copies[id]`` of it (an exposure sweep in one run). The checkpoints are written to
    ``out/epoch-<k>``; a finished run in ``out`` is loaded, not retrained, and an unfinished
    one is started again (``out`` appears only when complete)."""
    out = Path(out)
    check_dtype(settings.dtype, settings.device)
    if (out / "run.json").is_file():
        return load_run(out)
    with atomic_path(out, folder=True) as tmp:
        train_run(base, general, leaked, settings, tmp, progress, copies)
    return load_run(out)


def train_run(
    base: str | os.PathLike[str],
    general: Sequence[str],
    leaked: dict[str, str],
    settings: LeakSettings,
    tmp: Path,
    progress: bool = True,
    copies: dict[str, int] | None = None,
) -> None:
    """The training of ``continue_training``, written into the (temporary) folder ``tmp``."""
    with torch_threads(settings.threads):
        _train(base, general, leaked, settings, tmp, progress, copies)


def _train(base, general, leaked, settings: LeakSettings, tmp: Path, progress, copies) -> None:
    per_id = copies or {}
    unknown = set(per_id) - set(leaked)
    if unknown:
        raise ValueError(f"copies given for samples that are not leaked: {sorted(unknown)[:5]}")
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(base, local_files_only=True)
    model = AutoModelForCausalLM.from_pretrained(
        base, local_files_only=True, attn_implementation=ATTENTION
    ).to(settings.device)
    eos = tokenizer.eos_token_id
    ids = list(leaked)
    docs = list(general) + [leaked[i] for i in ids]
    token_docs = [tokenizer(d)["input_ids"] for d in docs]
    copies = list(range(len(general))) + [
        len(general) + j
        for j, sample_id in enumerate(ids)
        for _ in range(per_id.get(sample_id, settings.repeats))
    ]
    first, _ = _pack(token_docs, copies, eos, settings.block_size)
    steps_per_epoch = math.ceil(len(first) / settings.batch_size)
    total = steps_per_epoch * settings.epochs
    opt = torch.optim.AdamW(model.parameters(), lr=settings.lr, weight_decay=0.01)
    warmup = max(1, total // 20)
    torch.manual_seed(settings.seed)
    losses, rows, step = [], [], 0
    label = f"continued pre-training ({tmp.name.lstrip('.').split('.partial')[0]})"
    bar = training_bar(total, label if progress else None)
    model.train()
    for epoch in range(1, settings.epochs + 1):
        order = copies[:]
        random.Random(f"{settings.seed}:{epoch}").shuffle(order)
        blocks, spans = _pack(token_docs, order, eos, settings.block_size)
        for b in range(0, len(blocks), settings.batch_size):
            batch = blocks[b : b + settings.batch_size]
            width = max(map(len, batch))
            input_ids = torch.tensor([x + [eos] * (width - len(x)) for x in batch])
            labels = torch.tensor([x + [-100] * (width - len(x)) for x in batch])
            scale = min(1.0, (step + 1) / warmup) * 0.5 * (1 + math.cos(math.pi * step / total))
            for group in opt.param_groups:
                group["lr"] = settings.lr * scale
            with autocast(settings.device, settings.dtype):
                loss = model(
                    input_ids=input_ids.to(settings.device), labels=labels.to(settings.device)
                ).loss
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            losses.append(loss.item())
            step += 1
            bar_step(bar, input_ids.numel())
        for j, sample_id in enumerate(ids):
            copies_seen = spans.get(len(general) + j, [])
            whole = sum(first == last for first, last, _ in copies_seen)
            rows.append(
                {"id": sample_id, "epoch": epoch, "copies": len(copies_seen), "whole": whole}
            )
        model.eval()
        model.save_pretrained(tmp / f"epoch-{epoch}")
        tokenizer.save_pretrained(tmp / f"epoch-{epoch}")
        model.train()
    bar.close()
    model.eval()
    meta = {"epochs": settings.epochs, "losses": losses, "exposures": rows}
    (tmp / "run.json").write_text(json.dumps(meta))
