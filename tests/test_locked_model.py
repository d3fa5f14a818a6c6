"""The real model as a locked source: every failure mode is one clear error and leaves nothing
half-written; the real wheel converts to the folder the lock records, and scores a fresh
problem."""

import hashlib
import json
import math
import zipfile

import pytest

from srlib.errors import InputError
from srlib.testbed import locked
from srlib.testbed.sources import SourceUnavailable

MEMBER = "pkg/model.gguf"


def _lock(tmp_path, wheel_bytes: bytes, member_bytes: bytes, converted=None):
    """A lock of one model whose wheel and member hashes are those of the given bytes."""
    lock = tmp_path / "lock.json"
    entry = {
        "about": "a stand-in",
        "source": {
            "name": "stand-in",
            "version": "1.0",
            "file": "stand_in-1.0-py3-none-any.whl",
            "sha256": hashlib.sha256(wheel_bytes).hexdigest(),
            "license": "MIT",
            "code": [],
            "text": [],
        },
        "member": MEMBER,
        "member_sha256": hashlib.sha256(member_bytes).hexdigest(),
        "parameters": 1,
        "converted": converted or {},
    }
    lock.write_text(json.dumps({"models": {"stand-in": entry}}))
    return lock


def _wheel(folder, member_bytes: bytes) -> bytes:
    """A wheel holding ``member_bytes`` at ``MEMBER``, written into ``folder``; its bytes."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "stand_in-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(MEMBER, member_bytes)
    return path.read_bytes()


def _left(cache) -> list[str]:
    return sorted(p.name for p in cache.iterdir()) if cache.exists() else []


def test_a_missing_source_says_how_to_get_it_and_fetches_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    lock = _lock(tmp_path, b"wheel", b"model")
    cache = tmp_path / "models"
    with pytest.raises(SourceUnavailable, match="SRLIB_SOURCES"):
        locked.folder("stand-in", folders=[tmp_path / "empty"], fetch=False, lock=lock, cache=cache)
    assert _left(cache) == []
    with pytest.raises(InputError, match="not a locked model; the lock has \\['stand-in'\\]"):
        locked.folder("other", lock=lock, cache=cache)


def test_a_wheel_whose_hash_differs_is_refused_before_it_is_read(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    offline = tmp_path / "offline"
    _wheel(offline, b"model")
    lock = _lock(tmp_path, b"another wheel", b"model")
    cache = tmp_path / "models"
    with pytest.raises(InputError, match="is not the locked"):
        locked.folder("stand-in", folders=[offline], fetch=False, lock=lock, cache=cache)
    assert _left(cache) == []


def test_an_offline_wheel_is_read_and_its_model_file_checked_by_its_own_hash(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    offline = tmp_path / "offline"
    wheel = _wheel(offline, b"model bytes")
    lock = _lock(tmp_path, wheel, b"other model bytes")
    cache = tmp_path / "models"
    with pytest.raises(locked.LockedModelError, match="not the locked"):
        locked.folder("stand-in", folders=[offline], fetch=False, lock=lock, cache=cache)
    assert _left(cache) == []


def test_an_interrupted_or_failed_conversion_leaves_nothing_half_written(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    offline = tmp_path / "offline"
    wheel = _wheel(offline, b"not a gguf file")
    lock = _lock(tmp_path, wheel, b"not a gguf file")
    cache = tmp_path / "models"
    args = {"folders": [offline], "fetch": False, "lock": lock, "cache": cache}
    with pytest.raises(locked.LockedModelError, match="could not read it as GGUF"):
        locked.folder("stand-in", **args)
    assert _left(cache) == []

    def interrupted(gguf, out, model):
        (out / "model.safetensors").write_bytes(b"half")
        raise KeyboardInterrupt

    monkeypatch.setattr(locked, "_convert", interrupted)
    with pytest.raises(KeyboardInterrupt):
        locked.folder("stand-in", **args)
    assert _left(cache) == []

    def converted(gguf, out, model):
        (out / "config.json").write_text("{}")

    monkeypatch.setattr(locked, "_convert", converted)
    folder = locked.folder("stand-in", **args)
    assert (folder / locked.DONE).is_file() and _left(cache) == [folder.name]
    assert locked.folder("stand-in", **args) == folder  # read, not converted again
    lock2 = _lock(tmp_path, wheel, b"not a gguf file", {locked._numerics(): "0" * 64})
    with pytest.raises(locked.LockedModelError, match="is not the lock's"):
        locked.folder("stand-in", **args | {"lock": lock2, "cache": tmp_path / "other"})
    assert _left(tmp_path / "other") == []


def test_the_real_model_converts_to_the_locked_digest_and_scores_a_fresh_problem():
    from srlib.benchmarks import load_benchmark
    from srlib.models.hf import HFModel

    entry = locked.read_lock()["smollm2-135m"]
    assert locked.is_locked("smollm2-135m")
    folder = locked.folder("smollm2-135m")  # checks the lock's record where it has one
    recorded = entry.converted.get(locked._numerics())
    assert recorded is None or locked.folder_digest(folder) == recorded
    assert locked.resolve("smollm2-135m") == str(folder) and locked.resolve("x/y") == "x/y"
    model = HFModel(locked.resolve("smollm2-135m"), batch_size=1, threads=1)
    assert model.fingerprint.startswith("hf:smollm2-135m-")
    problem = load_benchmark("fresh")[0]
    (scores,) = model.token_logprobs([problem.text])
    assert len(scores.tokens) > 50 and all(math.isfinite(x) and x <= 0 for x in scores.logprobs)
