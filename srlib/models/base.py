"""The one protocol every detector uses: token log-probabilities and generations."""

from __future__ import annotations

import base64
import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np


@dataclass
class TokenScores:
    """Per predicted token of one text (the first token is not predicted).

    ``logprobs[t]`` is log p(x_t | x_<t); ``mean[t]`` and ``var[t]`` are the mean and variance
    of log p(z | x_<t) over the vocabulary under p itself (what Min-K%++ normalises with):
    μ_t = Σ_z p(z) log p(z), σ²_t = Σ_z p(z) (log p(z))² − μ_t². They are NaN when the backend
    cannot see the whole distribution (a hosted API that returns only top-k log-probs).
    """

    tokens: list[str]
    logprobs: np.ndarray
    mean: np.ndarray
    var: np.ndarray

    def __post_init__(self) -> None:
        n = len(self.tokens)
        for name in ("logprobs", "mean", "var"):
            arr = np.asarray(getattr(self, name), dtype=np.float64)
            if arr.shape != (n,):
                raise ValueError(f"{name} has shape {arr.shape}, expected ({n},)")
            setattr(self, name, arr)

    def to_dict(self, compact: bool = False) -> dict:
        """A JSON-serialisable dict (for the cache and the server); ``compact`` stores the
        arrays as base64 float32 (a third of the size, and fast to read back)."""
        if compact:
            pack = lambda a: base64.b64encode(a.astype("<f4").tobytes()).decode()  # noqa: E731
        else:
            pack = lambda a: a.tolist()  # noqa: E731
        return {
            "tokens": self.tokens,
            "logprobs": pack(self.logprobs),
            "mean": pack(self.mean),
            "var": pack(self.var),
        }

    @classmethod
    def from_dict(cls, d: dict) -> TokenScores:
        """Inverse of ``to_dict`` (either form)."""

        def unpack(v):
            if isinstance(v, str):
                return np.frombuffer(base64.b64decode(v), dtype="<f4").astype(np.float64)
            return np.asarray(v, dtype=np.float64)

        return cls(d["tokens"], *(unpack(d[k]) for k in ("logprobs", "mean", "var")))


@dataclass(frozen=True)
class GenerationSettings:
    """How to continue a prompt: greedy by default; sampling with a seed."""

    max_new_tokens: int = 64
    temperature: float = 0.0  # 0 means greedy
    top_p: float = 1.0
    seed: int = 0
    num_samples: int = 1
    settled_code_tokens: int = 0  # a backend may stop a generation once its first k code
    # tokens are final (``codetext.code_tokens_settled``); 0: never. Only those k are then whole


@runtime_checkable
class LanguageModel(Protocol):
    """What srlib needs from a model; ``fingerprint`` identifies it for the cache."""

    fingerprint: str

    def token_logprobs(self, texts: list[str]) -> list[TokenScores]:
        """Scores of every predicted token of each text."""
        ...

    def generate(self, prompts: list[str], settings: GenerationSettings) -> list[list[str]]:
        """``settings.num_samples`` continuations (text after the prompt) per prompt."""
        ...


@contextlib.contextmanager
def torch_threads(threads: int | None) -> Iterator[None]:
    """Run the block with torch on exactly ``threads`` CPU threads (None: as it is). CPU
    numerics depend on the thread count (reductions are split differently), so training
    and scoring fix it: a table then depends on its parameters, not on how many chapters ran
    beside it. The kernels are checked first (``numerics.require``): the pin must be in force."""
    from srlib.models.numerics import require

    require()
    if threads is None:
        yield
        return
    import torch

    from srlib.models.cpu import keep_freed_memory

    keep_freed_memory()
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def training_bar(total: int, label: str | None) -> Any:
    """A progress bar over optimiser steps that shows tokens/s and time left (``bar_step``
    after each step); silent without a ``label``. Where it is drawn (the book's progress log, a
    widget in JupyterLab) is ``srlib.execution.progress``'s choice."""
    from srlib.execution.progress import tqdm

    return tqdm(total=total, desc=label, unit="step", disable=label is None, smoothing=0.1)


def bar_step(bar: Any, tokens: int) -> None:
    """One optimiser step of ``tokens`` on ``bar``, with the tokens/s trained so far."""
    if not bar.disable:
        elapsed = bar.format_dict["elapsed"]
        if elapsed > 0:
            rate = (bar.n + 1) * tokens / elapsed
            bar.set_postfix_str(f"{rate:,.0f} tokens/s", refresh=False)
    bar.update(1)


@contextlib.contextmanager
def quiet_progress():
    """No Hugging Face progress bar ("Loading weights" per model opened, "Writing model
    shards" per model saved) inside the block; restored after."""
    from transformers.utils import logging as hf_logging

    enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if enabled:
            hf_logging.enable_progress_bar()
