"""The artifact store: every cached thing (corpus, variants, models, runs, score tables,
duplication folds and per-fold results, audit parts) is keyed on its inputs *and* on the
source of the srlib modules that produce it — the modules named, and every srlib module they
import, transitively — written atomically, and described by a manifest that is read back and
checked on reuse. Changing a producer changes the key, so the next build recomputes that
artifact and, because downstream keys include upstream keys, everything built from it;
nothing else.

A user's output folder (``srlib dedup evaluate --out``, ``srlib audit --out``, a study's
notebook folder) is claimed with ``claim_folder``: a folder that holds another run's results
(other settings, other srlib code) is refused in one line naming it and what differs.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import functools
import hashlib
import importlib.util
import itertools
import json
import os
import shutil
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from srlib.costs import MISSED, clocks, costed
from srlib.errors import InputError

MANIFEST = "srlib-manifest.json"
_WRITES = itertools.count()  # numbers this process's temporary paths, so no two collide
SRLIB = Path(__file__).resolve().parent


PRODUCERS: dict[str, tuple[str, ...]] = {
    "corpus": ("srlib.testbed.corpus",),  # local files, decontaminated (the overlap filter)
    "variants": ("srlib.transforms.variants",),  # renamer, lexicon, mutator, sandbox
    "models": ("srlib.testbed.train",),  # tokenizer, tiny GPT-2, training loop
    "runs": ("srlib.testbed.leak",),  # continued pre-training with the leak
    "tables": ("srlib.detection.detect", "srlib.models.hf", "srlib.models.cache"),  # scores
    "plugin-scores": ("srlib.detection.detect", "srlib.models.hf", "srlib.models.cache"),  # one
    # plug-in's columns, from the same model calls as the tables (its own source: an input)
    "dedup-study": ("srlib.duplication.impact.study",),  # folds' results of every detector
    "audit": ("srlib.audit.run",),  # an audit's parts, variants and summary
}
"""Artifact kind → the srlib modules that produce it (with all they import, transitively)."""

COMPUTED = {"models", "runs", "tables", "plugin-scores", "dedup-study", "audit"}
"""Kinds whose values depend on the CPU kernels: keyed on the numerics too."""

NUMERICS: dict[str, str] = {}
"""The numerics this process computes with (``srlib.models.numerics.pin`` fills it): a mode,
the CPU's vendor and the kernel settings. Artifacts of ``COMPUTED`` kinds are keyed on it, so
another build's numbers (the opt-out, another vendor) never reuse this build's cache."""


class FolderInUse(InputError):
    """An output folder holds another run's results: reusing it would report them."""


def _jsonable(value: Any) -> Any:
    """``value`` as JSON: dataclasses as dicts, paths and unknown objects as text."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, bytes):
        return hashlib.sha256(value).hexdigest()
    return value


def digest(*parts: Any, length: int = 16) -> str:
    """A short stable hash of JSON-able parts (dataclasses, bytes and paths included)."""
    h = hashlib.sha256()
    for part in parts:
        h.update(json.dumps(_jsonable(part), sort_keys=True, default=str).encode())
        h.update(b"\0")
    return h.hexdigest()[:length]


def text_digest(texts: Sequence[str]) -> str:
    """The hash of a list of texts (order matters), without building one big string."""
    h = hashlib.sha256()
    for t in texts:
        h.update(hashlib.sha256(t.encode("utf-8")).digest())
    return h.hexdigest()


DIGEST_ORDER = ("numerics", "corpus", "model", "scores", "claims", "duplication")  # a build's
# pipeline, earliest first: the kernels it computed with (``srlib.models.numerics``), then what
# it built; the duplication studies' tables last
_NOT_RESULTS = {MANIFEST}  # the store's manifest holds paths and code hashes, not results


def frame_digest(frame: Any) -> str:
    """The digest of a pandas table's content (columns, index, every value at full precision)."""
    text = frame.to_csv(float_format="%.17g")
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def folder_digest(folder: str | os.PathLike[str]) -> str:
    """The digest of a folder's files (relative names and bytes; the store manifest left out):
    a model checkpoint's weights, tokenizer and configuration."""
    root, h = Path(folder), hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file() and p.name not in _NOT_RESULTS):
        h.update(str(path.relative_to(root)).encode() + b"\0")
        h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


def row(what: str, name: str, value: str, note: str = "") -> dict:
    """One digest row: ``what`` (one of ``DIGEST_ORDER``), its ``name``, the digest, a note."""
    if what not in DIGEST_ORDER:
        raise ValueError(f"unknown digest kind {what!r}; choose from {DIGEST_ORDER}")
    return {"what": what, "name": name, "digest": value, "note": note}


def frame_row(what: str, name: str, frame: Any, note: str = "") -> dict:
    """A digest row of a table that also carries the table (``frame``), so a publisher can keep
    its numbers for ``srlib book --compare`` to read."""
    return row(what, name, frame_digest(frame), note) | {"frame": frame}


def _module_name(module: str | ModuleType) -> str:
    return module if isinstance(module, str) else module.__name__


def _module_file(name: str) -> Path:
    """The source file of srlib module ``name`` (a package: its ``__init__.py``)."""
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        raise ValueError(f"no source for module {name!r}")
    return Path(spec.origin)


def module_source(name: str) -> bytes:
    """The source bytes of srlib module ``name`` (tests replace this to simulate an edit)."""
    return _module_file(name).read_bytes()


@functools.cache
def _srlib_imports(name: str) -> tuple[str, ...]:
    """The srlib modules that module ``name`` imports anywhere in its file."""
    found = set()
    for node in ast.walk(ast.parse(_module_file(name).read_bytes())):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "srlib" or node.module.startswith("srlib."):
                for alias in node.names:  # ``from srlib.x import y``: y may be a module
                    sub = f"{node.module}.{alias.name}"
                    found.add(sub if _importing_submodule(sub) else node.module)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("srlib.")}
    return tuple(sorted(m for m in found if m != "srlib"))


def _importing_submodule(name: str) -> bool:
    with contextlib.suppress(ModuleNotFoundError, ValueError):
        return importlib.util.find_spec(name) is not None
    return False


def producer_closure(modules: Sequence[str | ModuleType]) -> list[str]:
    """``modules`` and every srlib module they import, transitively, sorted."""
    todo, seen = [_module_name(m) for m in modules], set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo += [m for m in _srlib_imports(name) if _importing_submodule(m)]
    return sorted(seen)


def code_digests(modules: Sequence[str | ModuleType]) -> dict[str, str]:
    """Module → hash of its source, for ``modules`` and all they import from srlib."""
    return {m: hashlib.sha256(module_source(m)).hexdigest()[:16] for m in producer_closure(modules)}


@dataclass(frozen=True)
class Artifact:
    """One cached thing: its ``kind`` (the store's folder; ``PRODUCERS`` says which code
    makes it) and its ``inputs`` (JSON-able; large inputs given by their digest, upstream
    artifacts by their key, so a recomputed upstream recomputes everything below it)."""

    kind: str
    inputs: dict[str, Any]
    name: str = ""  # a readable prefix of the folder name
    code: dict[str, str] = field(init=False, compare=False)

    def __post_init__(self) -> None:
        if self.kind not in PRODUCERS:
            raise ValueError(f"unknown artifact kind {self.kind!r}; known: {sorted(PRODUCERS)}")
        object.__setattr__(self, "code", code_digests(PRODUCERS[self.kind]))

    def _inputs(self) -> dict[str, Any]:
        """The inputs as keyed: with the numerics where the kernels compute the artifact."""
        inputs = {k: _jsonable(v) for k, v in self.inputs.items()}
        if self.kind in COMPUTED:
            inputs["numerics"] = dict(NUMERICS)
        return inputs

    @property
    def key(self) -> str:
        """The hash of the inputs (the numerics among them) and of every producer's source."""
        return digest(self.kind, self._inputs(), self.code)

    def manifest(self) -> dict[str, Any]:
        """What the artifact was made from, written beside it and checked on reuse."""
        return {"kind": self.kind, "key": self.key, "inputs": self._inputs(), "code": self.code}


def differences(saved: dict[str, Any], wanted: dict[str, Any]) -> list[str]:
    """Readable names of what differs between two manifests (inputs, then code)."""
    out = []
    for section in ("inputs", "code"):
        a, b = saved.get(section, {}), wanted.get(section, {})
        for k in sorted(set(a) | set(b)):
            if json.dumps(a.get(k), sort_keys=True, default=str) != json.dumps(
                b.get(k), sort_keys=True, default=str
            ):
                out.append(k if section == "inputs" else f"code of {k}")
    return out


@contextlib.contextmanager
def atomic_path(
    target: str | os.PathLike[str],
    folder: bool = False,
    keep: Callable[[], bool] | None = None,
) -> Iterator[Path]:
    """A temporary path beside ``target`` to write; moved onto ``target`` when the block
    succeeds, removed when it fails, so ``target`` is either complete or absent. With
    ``keep``, a ``target`` that another process completed meanwhile and ``keep()`` accepts is
    left in place (never removed under a reader's feet) and the new copy dropped."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.partial-{os.getpid()}-{next(_WRITES)}")
    _remove(tmp)
    if folder:
        tmp.mkdir()
    try:
        yield tmp
        if keep is not None and target.exists() and keep():
            return
        if folder and target.exists():
            _remove(target)
        try:
            os.replace(tmp, target)
        except OSError:
            if keep is None or not (target.exists() and keep()):
                raise
    finally:
        _remove(tmp)


def write_text(target: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``target`` atomically."""
    with atomic_path(target) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_json(target: str | os.PathLike[str], value: Any) -> None:
    """Write ``value`` as JSON to ``target`` atomically."""
    write_text(target, json.dumps(value, indent=1, default=str))


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


class Store:
    """Artifacts under ``root/<kind>/<name>-<key>/``, each with its manifest."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)

    def path(self, artifact: Artifact) -> Path:
        """Where ``artifact`` lives (whether or not it has been made)."""
        stem = f"{artifact.name}-{artifact.key}" if artifact.name else artifact.key
        return self.root / artifact.kind / stem

    def get(self, artifact: Artifact) -> Path | None:
        """The artifact's folder if it is complete and its manifest matches, else None (a
        folder whose manifest does not match is removed: it is recomputed; the making that
        follows is costed from here, see ``costed``)."""
        found = self._found(artifact)
        if found is None:
            MISSED[self.path(artifact)] = clocks()
        return found

    def _found(self, artifact: Artifact) -> Path | None:
        folder = self.path(artifact)
        try:
            saved = json.loads((folder / MANIFEST).read_text())
        except (OSError, ValueError):
            saved = None
        if saved == json.loads(json.dumps(artifact.manifest(), default=str)):
            return folder
        if folder.exists():
            _remove(folder)
        return None

    @contextlib.contextmanager
    def put(self, artifact: Artifact) -> Iterator[Path]:
        """A temporary folder to write the artifact into; it becomes the artifact's folder,
        manifest included, only when the block succeeds (its cost recorded from ``get``'s
        miss, where the making began)."""

        def keep() -> bool:  # another process finished the same artifact meanwhile
            return self._found(artifact) is not None

        target = self.path(artifact)
        with (
            costed(self.root, target, artifact.kind, MISSED.pop(target, None)),
            atomic_path(target, folder=True, keep=keep) as tmp,
        ):
            yield tmp
            write_json(tmp / MANIFEST, artifact.manifest())


def key_of(path: str | os.PathLike[str]) -> str:
    """The store key of the artifact holding ``path`` (the folder itself or a folder above
    it, e.g. a run's checkpoint), or "" for a path outside the store."""
    for folder in (Path(path), *Path(path).parents):
        try:
            return str(json.loads((folder / MANIFEST).read_text())["key"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return ""


def check_folder(folder: str | os.PathLike[str], artifact: Artifact) -> bool:
    """Whether ``folder`` already belongs to the run ``artifact`` describes (False: new or
    empty); a folder holding another run's results raises ``FolderInUse`` naming it and
    what differs."""
    folder = Path(folder)
    file = folder / MANIFEST
    if file.is_file():
        try:
            saved = json.loads(file.read_text())
        except ValueError:
            saved = {}
        if saved.get("kind") != artifact.kind:
            raise FolderInUse(
                f"{folder} holds a {saved.get('kind', 'damaged')!r} run, not {artifact.kind!r}; "
                "use another folder"
            )
        diff = differences(saved, json.loads(json.dumps(artifact.manifest(), default=str)))
        if diff:
            more = ", ..." if len(diff) > 6 else ""
            raise FolderInUse(
                f"{folder} holds results of another run (it differs in {', '.join(diff[:6])}"
                f"{more}); use another folder or empty this one"
            )
        return True
    if folder.is_dir() and any(not p.name.startswith(".") for p in folder.iterdir()):
        raise FolderInUse(f"{folder} is not empty and holds no srlib run; use another folder")
    return False


def claim_folder(folder: str | os.PathLike[str], artifact: Artifact) -> Path:
    """Use ``folder`` for the run ``artifact`` describes: a new or empty folder is claimed
    (its manifest written), one claimed by the same run is resumed, and one that holds
    another run's results is refused (``check_folder``)."""
    folder = Path(folder)
    if not check_folder(folder, artifact):
        folder.mkdir(parents=True, exist_ok=True)
        write_json(folder / MANIFEST, artifact.manifest())
    return folder
