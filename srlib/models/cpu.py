"""How training uses the machine: mixed precision (``torch.autocast`` around the forward pass,
weights and optimiser state kept in float32, the recipe of large training runs) on the CPU's
bf16 units or a GPU, which units this CPU has, and an allocator that keeps freed memory."""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import functools

from srlib.models.numerics import cpu_flags

TRAIN_DTYPES = ("float32", "bfloat16", "float16")
"""Training precisions: float32 throughout, or autocast to bfloat16 / float16 (GPU only)."""


def check_dtype(dtype: str, device: str = "cpu") -> None:
    """Raise a ValueError naming ``dtype`` when it is not a training precision on ``device``."""
    if dtype not in TRAIN_DTYPES:
        raise ValueError(f"unknown training dtype {dtype!r}; choose from {list(TRAIN_DTYPES)}")
    if dtype == "float16" and not device.startswith("cuda"):
        raise ValueError("float16 training needs a GPU (device 'cuda'); on a CPU use bfloat16")


def autocast(device: str, dtype: str) -> contextlib.AbstractContextManager:
    """The context to run a forward pass in: autocast to ``dtype`` on ``device``'s kind, or
    nothing for float32. The backward pass follows the forward pass's casts."""
    import torch

    check_dtype(dtype, device)
    kind = "cuda" if device.startswith("cuda") else "cpu"
    return torch.autocast(kind, dtype=getattr(torch, dtype), enabled=dtype != "float32")


ATTENTION = "sdpa"
"""The attention kernel of training, on every device: PyTorch's fused ``sdpa``. With dropout
off (``TinyConfig.dropout``) it is faster than eager attention on a CPU in float32 and in
bfloat16 (docs/measured-builds.md); with GPT-2's 0.1 dropouts eager was, in bfloat16."""


def bf16_units(flags: set[str] | None = None) -> str:
    """Which bf16 matrix units this CPU has (AMX tiles, AVX-512 BF16) — what makes the
    ``cpu-bf16`` profile fast here; without them bfloat16 is emulated (7–8× slower) and the
    weights differ with the kernels that emulate it (another build's numbers either way)."""
    flags = cpu_flags() if flags is None else flags
    units = [
        name
        for flag, name in (("amx_bf16", "AMX"), ("avx512_bf16", "AVX-512 BF16"))
        if flag in flags
    ]
    return ", ".join(units) if units else "none (bfloat16 would be emulated: much slower)"


@functools.cache
def keep_freed_memory() -> bool:
    """Have glibc keep large freed blocks instead of returning them to the system, so every
    training step does not fault in its activations' pages afresh (a fifth of a step's time
    in a profile, docs/measured-builds.md). Values are unchanged; False where glibc is absent."""
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
        mallopt = libc.mallopt if libc is not None else None
    except (OSError, AttributeError):
        return False
    if mallopt is None:
        return False
    m_trim_threshold, m_mmap_threshold = -1, -3
    return bool(mallopt(m_mmap_threshold, 1 << 30) and mallopt(m_trim_threshold, (1 << 31) - 1))
