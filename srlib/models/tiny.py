"""Small GPT-style models made here, offline: a byte-level BPE tokenizer trained on local
text, a GPT-2 of a few layers, and a plain training loop. They stand in for real
checkpoints in tests and in the CPU profile of the book."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from srlib.models.base import bar_step, quiet_progress, torch_threads, training_bar
from srlib.models.cpu import ATTENTION, autocast, check_dtype

EOS = "<|endoftext|>"


@dataclass
class TinyConfig:
    """A nanoGPT-style size card; the defaults train at a few thousand tokens/s on 2 cores."""

    vocab_size: int = 2048  # BPE merges learned from the training text
    n_layer: int = 2  # transformer blocks
    n_head: int = 2  # attention heads per block
    n_embd: int = 64  # width
    n_positions: int = 512  # context length in tokens
    seed: int = 0  # weight initialisation
    activation: str = "gelu_pytorch_tanh"  # GPT-2's tanh GELU as one fused kernel (the same
    # function as "gelu_new", a tenth faster per training step here)
    dropout: float = 0.0  # GPT-2's embedding, attention and residual dropout (0.1 in GPT-2).
    # Off, as in the pre-training of LLaMA-family code models (CodeLlama, DeepSeek-Coder,
    # Qwen2.5-Coder): base training is one pass over its text, and memorisation under
    # continued pre-training is what the testbed studies. A CPU training step is a third
    # shorter without it (docs/measured-builds.md)


def train_tokenizer(texts: Sequence[str], vocab_size: int = 2048):
    """A byte-level BPE tokenizer (GPT-2 style) learned from ``texts``; no download."""
    from tokenizers import ByteLevelBPETokenizer
    from transformers import PreTrainedTokenizerFast

    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(
        list(texts), vocab_size=vocab_size, special_tokens=[EOS], show_progress=False
    )  # its progress lines went to stdout: an empty output box in the book
    return PreTrainedTokenizerFast(
        tokenizer_object=bpe._tokenizer, eos_token=EOS, pad_token=EOS, unk_token=EOS
    )


def tiny_gpt2(tokenizer, config: TinyConfig | None = None):
    """A freshly initialised GPT-2 sized by ``config`` for ``tokenizer``."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    config = config or TinyConfig()
    torch.manual_seed(config.seed)
    cfg = GPT2Config(
        vocab_size=len(tokenizer),
        n_positions=config.n_positions,
        n_embd=config.n_embd,
        n_layer=config.n_layer,
        n_head=config.n_head,
        bos_token_id=tokenizer.eos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.eos_token_id,
        activation_function=config.activation,
        attn_implementation=ATTENTION,
        resid_pdrop=config.dropout,
        embd_pdrop=config.dropout,
        attn_pdrop=config.dropout,
    )
    return GPT2LMHeadModel(cfg)


def train_lm(
    model,
    tokenizer,
    texts: Sequence[str],
    steps: int,
    batch_size: int = 8,
    block_size: int = 128,
    lr: float = 3e-3,
    seed: int = 0,
    threads: int | None = 1,
    dtype: str = "float32",
    progress: str | None = None,
) -> list[float]:
    """Train on ``texts`` (joined by EOS, cut into blocks) for ``steps`` on ``threads`` CPU
    threads (the losses and weights depend on it), the forward pass autocast to ``dtype``
    (weights and optimiser state stay float32); returns the losses. ``progress``: the label
    of a progress bar (steps, tokens/s, time left), None for none."""
    check_dtype(dtype)
    with torch_threads(threads):
        args = (steps, batch_size, block_size, lr, seed, dtype, progress)
        return _train_lm(model, tokenizer, texts, *args)


def _train_lm(model, tokenizer, texts, steps, batch_size, block_size, lr, seed, dtype, label):
    import torch

    ids: list[int] = []
    for t in texts:
        ids += tokenizer(t)["input_ids"] + [tokenizer.eos_token_id]
    if len(ids) < block_size + 1:
        raise ValueError(f"{len(ids)} tokens of training text; need more than {block_size}")
    data = torch.tensor(ids)
    rng = random.Random(seed)
    torch.manual_seed(seed)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    warmup = max(1, steps // 10)
    model.train()
    losses = []
    bar = training_bar(steps, label)
    for k in range(steps):
        scale = min(1.0, (k + 1) / warmup) * 0.5 * (1 + math.cos(math.pi * k / steps))
        for group in opt.param_groups:
            group["lr"] = lr * scale
        starts = [rng.randrange(len(data) - block_size) for _ in range(batch_size)]
        batch = torch.stack([data[s : s + block_size] for s in starts])
        with autocast("cpu", dtype):
            loss = model(input_ids=batch, labels=batch).loss
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(loss.item())
        bar_step(bar, batch_size * block_size)
    bar.close()
    model.eval()
    return losses


def save(model, tokenizer, path: str | Path) -> Path:
    """Save model and tokenizer where ``HFModel(path)`` loads them."""
    path = Path(path)
    with quiet_progress():
        model.save_pretrained(path)
        tokenizer.save_pretrained(path)
    return path
