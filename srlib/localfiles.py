"""The one walker over this machine's Python sources: the standard library and installed
packages, the real code that is on every machine (overlap audits, the offline secret corpus,
test fixtures). The testbed never trains on it: its text comes from the locked sources
(``testbed.sources``), so installing a package cannot change a model."""

from __future__ import annotations

import functools
import os
import random
import sysconfig
from collections.abc import Iterator, Sequence
from pathlib import Path

SCOPES = ("stdlib", "purelib", "platlib")


def python_files(scopes: Sequence[str] = SCOPES, exclude_parts: Sequence[str] = ()) -> list[Path]:
    """Sorted ``.py`` files under the ``sysconfig`` paths named by ``scopes`` (each folder
    once), leaving out files with any of ``exclude_parts`` among their path components.
    The walk is done once per process and arguments; each call gets its own list."""
    return list(_python_files(tuple(scopes), tuple(exclude_parts)))


def entries(root: Path, prune: Sequence[str] = ()) -> list[Path]:
    """Every entry under ``root`` as ``sorted(root.rglob("*"))`` lists it (folders too;
    symlinked folders listed, not entered), but never entering nor listing an entry named in
    ``prune``: one ``scandir`` per folder, and pruned trees are not walked at all."""
    return [Path(path) for path, _ in _walk(root, prune)]


def _walk(root: Path | str, prune: Sequence[str] = ()) -> list[tuple[str, bool]]:
    """``(path, is a file)`` of each entry ``entries`` lists, in its order, as strings: the
    callers filter by name before making ``Path`` objects (making and sorting one per entry
    was most of a walk's time: a generated corpus took 5.3-5.5 s before, 2.6-3.5 s after)."""
    found, folders, skip = [], [os.fspath(root)], set(prune)
    while folders:
        try:
            with os.scandir(folders.pop()) as listing:
                here = [e for e in listing if e.name not in skip]
        except OSError:
            continue
        for entry in here:
            try:
                is_file = entry.is_file()
                if entry.is_dir() and not entry.is_symlink():
                    folders.append(entry.path)
            except OSError:
                is_file = False
            found.append((entry.path, is_file))
    # the order of Path objects: by components (all share root's), not by characters
    found.sort(key=lambda item: item[0].split(os.sep))
    return found


@functools.lru_cache(maxsize=16)
def _walked(root: str, prune: tuple[str, ...]) -> tuple[tuple[str, bool], ...]:
    """``_walk`` once per process and folder: ``python_files`` and ``source_files`` both walk
    the installed packages."""
    return tuple(_walk(root, prune))


def _suffix(path: str) -> str:
    """``Path(path).suffix`` without making the ``Path``."""
    name = os.path.basename(path)
    dot = name.rfind(".")
    return name[dot:] if 0 < dot < len(name) - 1 else ""


@functools.lru_cache(maxsize=8)
def _python_files(scopes: tuple[str, ...], exclude_parts: tuple[str, ...]) -> tuple[Path, ...]:
    unknown = set(scopes) - set(SCOPES)
    if unknown:
        raise ValueError(f"unknown scope(s) {sorted(unknown)}; choose from {SCOPES}")
    paths = sysconfig.get_paths()
    files = []
    for scope in scopes:
        root = Path(paths[scope])
        # site-packages under the stdlib folder are installed packages, not the stdlib
        skip = set(exclude_parts) | ({"site-packages"} if scope == "stdlib" else set())
        files += [Path(f) for f, _ in _walked(str(root), tuple(sorted(skip))) if f.endswith(".py")]
    return tuple(dict.fromkeys(files))


def read_texts(files: Sequence[Path]) -> Iterator[tuple[Path, str]]:
    """``(path, text)`` of each file that reads as UTF-8; unreadable files are skipped."""
    for f in files:
        try:
            yield f, f.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue


LANGUAGES = {
    ".py": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".java": "java",
    ".php": "php",
    ".rb": "ruby",
    ".cs": "c#",
    ".cpp": "c++",
    ".hpp": "c++",
    ".cc": "c++",
    ".go": "go",
    ".c": "c",
    ".h": "c",
    ".pl": "perl",
    ".pm": "perl",
    ".sh": "shell",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".json": "json",
    ".toml": "toml",
    ".ini": "ini",
    ".cfg": "ini",
}
"""File suffix → language, for the files ``source_files`` gathers."""

SOURCE_ROOTS = ("/usr/include", "/usr/share/perl", "/usr/share/perl5", "/usr/lib/node_modules")


def language(path: str | Path) -> str:
    """The language of a file by its suffix (``LANGUAGES``), else the bare suffix."""
    suffix = Path(path).suffix.lower()
    return LANGUAGES.get(suffix, suffix.lstrip("."))


def language_name(name: str) -> str:
    """A language as datasets spell it — a bare extension (SecretBench's and CredData's
    ``js``, ``cs``, ``cpp``, ``py``) or a name — in this project's names (``javascript``,
    ``c#``, ``c++``, ``python``); an unknown one lower-cased as it is."""
    key = str(name or "").strip().lower()
    return LANGUAGES.get("." + key.lstrip("."), key)


def source_files(
    roots: Sequence[str] = SOURCE_ROOTS, scopes: Sequence[str] = SCOPES
) -> dict[str, list[Path]]:
    """This machine's source and configuration files other than Python, by language: every
    file with a ``LANGUAGES`` suffix under ``roots`` and the ``sysconfig`` folders of
    ``scopes`` (installed packages ship JavaScript, C headers, YAML, JSON ...), sorted. The
    walk is done once per process and arguments; each call gets its own lists."""
    found = _source_files(tuple(roots), tuple(scopes))
    return {lang: list(files) for lang, files in found.items()}


@functools.lru_cache(maxsize=8)
def _source_files(roots: tuple[str, ...], scopes: tuple[str, ...]) -> dict[str, tuple]:
    paths = sysconfig.get_paths()
    folders = dict.fromkeys([*map(Path, roots), *(Path(paths[s]) for s in scopes)])
    found: dict[str, list[Path]] = {}
    for folder in folders:
        if not folder.is_dir():
            continue
        for f, is_file in _walked(str(folder), ()):
            lang = LANGUAGES.get(_suffix(f).lower())
            if lang and lang != "python" and is_file:
                found.setdefault(lang, []).append(Path(f))
    return {lang: tuple(dict.fromkeys(files)) for lang, files in sorted(found.items())}


def python_sources(max_chars: int = 2_000_000, seed: int = 0, min_chars: int = 500) -> list[str]:
    """Standard-library ``.py`` files (tests excluded) in a seeded random order, up to
    ``max_chars`` characters in all."""
    files = python_files(("stdlib",), exclude_parts=("test", "idlelib"))
    if not files:
        raise FileNotFoundError("no Python sources in the standard library folder")
    random.Random(seed).shuffle(files)
    texts, total = [], 0
    for _, text in read_texts(files):
        if len(text) < min_chars:
            continue
        texts.append(text[: max_chars - total])
        total += len(texts[-1])
        if total >= max_chars:
            break
    return texts
