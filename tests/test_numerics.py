"""Portable numerics: the kernel pin chosen per machine, set before torch in every process, and
a caller's environment that cannot change it (short of the named opt-out)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from srlib.models import numerics

OTHER_KERNELS = {"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE"}
"""What a caller might have in its shell: other kernels than the pin's."""

HAS_AVX2 = "avx2" in numerics.cpu_flags() and os.uname().machine == "x86_64"


def test_the_pin_follows_the_machine_and_the_opt_out():
    avx2, old = {"sse2", "avx2", "fma"}, {"sse2", "sse4_2"}  # a CPU with AVX2, one without
    assert numerics.target("x86_64", avx2, {}) == ("portable", numerics.PINNED)
    assert numerics.target("x86_64", old, {}) == ("baseline", numerics.BASELINE)
    assert numerics.target("aarch64", avx2, {}) == ("native", {})
    assert numerics.target("x86_64", avx2, {"SRLIB_NUMERICS": "native"}) == ("native", {})
    assert numerics.target("x86_64", avx2, {"SRLIB_NUMERICS": "pinned"})[0] == "portable"


def test_every_mode_is_said_in_one_line():
    base = {"machine": "x86_64", "cpu features": "avx2", **numerics.PINNED}
    assert numerics.said(base | {"mode": "portable"}).startswith("portable numerics")
    assert "no AVX2" in numerics.said(base | {"mode": "baseline"})
    native = numerics.said(base | {"mode": "native", "machine": "aarch64"})
    assert "another build's numbers" in native and "\n" not in native
    info = base | {"mode": "portable", "torch kernels": "AVX2", "vendor": "GenuineIntel"}
    assert numerics.label(info) == "portable AVX2 GenuineIntel"
    assert numerics.cpu_vendor("vendor_id\t: AuthenticAMD\n") == "AuthenticAMD"
    assert numerics.target("x86_64", {"sse2", "avx2"}, {})[0] == "baseline"  # AVX2 needs FMA
    assert numerics.target("x86_64", set(), {})[0] == "baseline"  # flags unknown: the safe one


def _python(code: str, **env: str) -> subprocess.CompletedProcess:
    """``code`` in a fresh interpreter with ``env`` added to this process's environment."""
    return subprocess.run(
        [sys.executable, "-c", code], env={**os.environ, **env}, capture_output=True, text=True
    )


SHOW = "import torch; print(torch.backends.cpu.get_cpu_capability(), os.environ['MKL_CBWR'])"


@pytest.mark.skipif(not HAS_AVX2, reason="the portable pin needs an x86-64 CPU with AVX2")
def test_a_callers_kernels_do_not_reach_torch_and_the_opt_out_keeps_them():
    pinned = _python("import os, srlib; " + SHOW, **OTHER_KERNELS)
    assert pinned.stdout.split() == ["AVX2", "AVX2,STRICT"], pinned.stderr
    native = _python("import os, srlib; " + SHOW, SRLIB_NUMERICS="native", **OTHER_KERNELS)
    assert native.stdout.split() == ["DEFAULT", "COMPATIBLE"], native.stderr


@pytest.mark.skipif(not HAS_AVX2, reason="the portable pin needs an x86-64 CPU with AVX2")
def test_torch_used_before_srlib_is_refused_where_it_trains():
    """torch picks its kernels at its first operation: one before ``import srlib`` ran with
    the caller's; training and scoring then refuse, naming the fix."""
    code = (
        "import torch\ntorch.ones(3).exp()\nimport srlib\n"
        "from srlib.models.base import torch_threads\nwith torch_threads(1): pass"
    )
    late = _python(code, **OTHER_KERNELS)
    assert late.returncode != 0 and "NumericsError" in late.stderr
    assert "import srlib before torch" in late.stderr
    imported_only = code.replace("torch.ones(3).exp()\n", "")  # no operation yet: pinned
    assert _python(imported_only, **OTHER_KERNELS).returncode == 0
    changed = imported_only.replace(
        "import srlib\n", "import srlib, os\nos.environ['MKL_CBWR'] = 'AVX'\n"
    )
    assert "['MKL_CBWR'] changed" in _python(changed).stderr


def test_what_torch_computes_under_other_numerics_is_keyed_apart(monkeypatch):
    from srlib import store

    model, corpus = store.Artifact("models", {"x": 1}), store.Artifact("corpus", {"x": 1})
    before = model.key, corpus.key
    monkeypatch.setitem(store.NUMERICS, "mode", "native")
    assert model.key != before[0] and model.manifest()["inputs"]["numerics"]["mode"] == "native"
    monkeypatch.setitem(store.NUMERICS, "mode", "portable")
    assert model.key == before[0]
    other = "GenuineIntel" if store.NUMERICS.get("vendor") == "AuthenticAMD" else "AuthenticAMD"
    monkeypatch.setitem(store.NUMERICS, "vendor", other)
    assert model.key != before[0]  # another vendor's numbers: apart (whichever this one is)
    assert corpus.key == before[1]  # text no kernel touches: the lock's corpus keys hold
