"""Portable numerics: the CPU kernels every process of the project computes with, pinned before
torch is imported, so the same commit trains and scores the same numbers on every CPU of one
numerics class (the kernels and the vendor: see below).

The same float32 training gives other weights when ATen's kernel set or MKL's code branch
changes, and both pick themselves by the CPU's features (``../shared/numerics``). ``pin()`` caps
them at a baseline every x86-64 CPU of the last decade has: ATen's AVX2 kernels, MKL's
conditional-numerical-reproducibility AVX2 branch in strict mode (the same results whatever the
data's alignment), oneDNN's highest ISA at AVX2 (the thread count is fixed by each config).
The values replace the caller's environment: a reader's shell must not change the numbers.
``SRLIB_NUMERICS=native`` (the one named opt-out) leaves the machine's own choice, for
faster paths (bf16 units, a GPU) whose numbers are another build's. Where the CPU cannot
honour the pin (no AVX2: the ``BASELINE`` kernels instead; not x86-64: the machine's own)
the build still runs and ``state()`` says so, for the appendix and the digests. Measured: the
pin makes the digests independent of the caller's kernel variables; MKL documents its
reproducible branches for Intel CPUs, and an AMD CPU gave other digests under the same pin
(docs/measured-builds.md), so the digests' class names the vendor too."""

from __future__ import annotations

import os
import platform
import sys
from functools import cache
from pathlib import Path

from srlib import store

OPT_OUT = "SRLIB_NUMERICS"
"""Environment variable: ``native`` keeps the machine's own kernels (another build's numbers)."""

PINNED = {
    "ATEN_CPU_CAPABILITY": "avx2",
    "MKL_CBWR": "AVX2,STRICT",
    "ONEDNN_MAX_CPU_ISA": "AVX2",
}
"""The kernel sets of the portable build (x86-64 with AVX2)."""

BASELINE = {
    "ATEN_CPU_CAPABILITY": "default",
    "MKL_CBWR": "COMPATIBLE",
    "ONEDNN_MAX_CPU_ISA": "SSE41",
}
"""What an x86-64 CPU without AVX2 is pinned to instead (SSE2 code in ATen and MKL, oneDNN up
to SSE4.1: slower, and another build's numbers than ``PINNED``)."""


class NumericsError(RuntimeError):
    """torch computes with other kernels than the pin says (torch picks its kernels at its
    first operation: one ran before ``import srlib``)."""


def cpu_flags(cpuinfo: str | None = None) -> set[str]:
    """The processor's feature flags (Linux ``/proc/cpuinfo``; empty where it cannot be read)."""
    for line in _cpuinfo(cpuinfo).splitlines():
        if line.startswith("flags"):
            return set(line.partition(":")[2].split())
    return set()


def _cpuinfo(text: str | None) -> str:
    """``text``, or Linux's ``/proc/cpuinfo`` (empty where there is none)."""
    if text is not None:
        return text
    path = Path("/proc/cpuinfo")
    return path.read_text(errors="replace") if path.is_file() else ""


def target(
    machine: str | None = None, flags: set[str] | None = None, environ: dict | None = None
) -> tuple[str, dict[str, str]]:
    """The numerics mode for this machine and the variables it sets: ``portable`` (AVX2 pin),
    ``baseline`` (x86-64 without AVX2), ``native`` (opted out, or not x86-64: nothing set)."""
    environ = os.environ if environ is None else environ
    machine = (machine or platform.machine()).lower()
    if environ.get(OPT_OUT, "").strip().lower() == "native":
        return "native", {}
    if machine not in ("x86_64", "amd64"):
        return "native", {}
    flags = cpu_flags() if flags is None else flags
    if not {"avx2", "fma"} <= flags:  # ATen's AVX2 kernels need both; unknown flags: baseline
        return "baseline", dict(BASELINE)
    return "portable", dict(PINNED)


@cache
def pin() -> str:
    """Set the kernel variables of ``target()`` in this process's environment (read by torch
    when it is imported, inherited by every process this one starts); the mode. Called by
    ``import srlib``, so before torch in every process that imports srlib first."""
    mode, values = target()
    os.environ.update(values)
    store.NUMERICS.update({"mode": mode, "vendor": cpu_vendor(), **values})  # keys what it computes
    return mode


def expected_capability() -> str | None:
    """The ATen kernel set the pin asked torch for (None where it asked for nothing)."""
    pin()
    return store.NUMERICS.get("ATEN_CPU_CAPABILITY")


def require() -> None:
    """Raise ``NumericsError`` when torch computes with other kernels than the pin set (torch
    ran an operation before srlib was imported), or a pinned variable was changed since:
    what trains or scores calls it."""
    want = expected_capability()
    if want is None:
        return
    import torch

    have = torch.backends.cpu.get_cpu_capability()
    changed = [k for k in PINNED if os.environ.get(k) != store.NUMERICS.get(k)]
    if have.lower() != want.lower() or changed:
        now = f"torch uses the {have} kernels" + (f", {changed} changed" if changed else "")
        raise NumericsError(
            f"{now}; the pinned build uses {want.upper()}: import srlib before torch and leave "
            f"its kernel variables (or set {OPT_OUT}=native to opt out; another build's numbers)"
        )


def state() -> dict[str, str]:
    """What is in force, for the appendix and the digests: the mode, each pinned variable's
    value, torch's kernel set and the CPU's features that decide them."""
    pin()
    mode, values = (
        store.NUMERICS["mode"],
        {k: store.NUMERICS[k] for k in PINNED if k in store.NUMERICS},
    )
    flags = cpu_flags()
    isa = [f for f in ("avx2", "avx512f", "avx512_bf16", "amx_bf16") if f in flags]
    out = {"mode": mode, "machine": platform.machine(), "cpu features": " ".join(isa) or "-"}
    out["vendor"] = cpu_vendor()
    for name in PINNED:
        out[name] = os.environ.get(name, "-")
    kernels = values.get("ATEN_CPU_CAPABILITY", "")
    if "torch" in sys.modules or not kernels:
        import torch

        kernels = torch.backends.cpu.get_cpu_capability()
    out["torch kernels"] = kernels.upper()
    return out


def cpu_vendor(cpuinfo: str | None = None) -> str:
    """The processor's vendor (``GenuineIntel``, ``AuthenticAMD``; ``unknown`` elsewhere): MKL
    documents its reproducible branches for Intel CPUs, and an AMD CPU gave other digests."""
    for line in _cpuinfo(cpuinfo).splitlines():
        if line.startswith("vendor_id"):
            return line.partition(":")[2].strip()
    return "unknown"


def label(info: dict[str, str] | None = None) -> str:
    """The build's numerics in a few words, its digest row and the class of machines whose
    digests the lock compares: ``portable AVX2 GenuineIntel``, ``native AVX512 AuthenticAMD``."""
    info = state() if info is None else info
    return f"{info['mode']} {info.get('torch kernels', '?')} {info.get('vendor', 'unknown')}"


def said(info: dict[str, str] | None = None) -> str:
    """One line a build prints and the appendix shows: which numerics this build computed with."""
    info = state() if info is None else info
    pinned = ", ".join(f"{k}={info[k]}" for k in PINNED)
    if info["mode"] == "portable":
        return f"portable numerics (float32 kernels pinned to AVX2: {pinned})"
    if info["mode"] == "baseline":
        return (
            "this CPU has no AVX2: kernels pinned to the baseline "
            f"({pinned}); another build's numbers than the book's"
        )
    why = "opted out" if os.environ.get(OPT_OUT) else f"not x86-64 ({info['machine']})"
    return f"native numerics ({why}): the machine's own kernels, another build's numbers"
