"""The one walker over this machine's Python sources: the standard library and installed
packages, the real code that is on every machine (training text, overlap audits)."""

from __future__ import annotations

import sysconfig
from collections.abc import Iterator, Sequence
from pathlib import Path

SCOPES = ("stdlib", "purelib", "platlib")


def python_files(scopes: Sequence[str] = SCOPES, exclude_parts: Sequence[str] = ()) -> list[Path]:
    """Sorted ``.py`` files under the ``sysconfig`` paths named by ``scopes`` (each folder
    once), leaving out files with any of ``exclude_parts`` among their path components."""
    unknown = set(scopes) - set(SCOPES)
    if unknown:
        raise ValueError(f"unknown scope(s) {sorted(unknown)}; choose from {SCOPES}")
    paths = sysconfig.get_paths()
    files = []
    for scope in scopes:
        root = Path(paths[scope])
        # site-packages under the stdlib folder are installed packages, not the stdlib
        skip = set(exclude_parts) | ({"site-packages"} if scope == "stdlib" else set())
        files += [
            f for f in sorted(root.rglob("*.py")) if not skip & set(f.relative_to(root).parts)
        ]
    return list(dict.fromkeys(files))


def read_texts(files: Sequence[Path]) -> Iterator[tuple[Path, str]]:
    """``(path, text)`` of each file that reads as UTF-8; unreadable files are skipped."""
    for f in files:
        try:
            yield f, f.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue


TEXT_NAMES = ("LICENSE", "LICENCE", "COPYING", "AUTHORS", "README", "CHANGES", "NOTICE")


def text_files(scopes: Sequence[str] = ("purelib", "platlib")) -> list[Path]:
    """Sorted natural-language files of installed packages: ``METADATA`` (package
    descriptions), licence, authors and readme files, and ``.md``/``.rst`` documents."""
    paths = sysconfig.get_paths()
    roots = dict.fromkeys(Path(paths[s]) for s in scopes)
    found = []
    for root in roots:
        for f in sorted(root.rglob("*")):
            wanted = f.suffix in (".md", ".rst") or f.name == "METADATA"
            wanted = wanted or f.name.upper().startswith(TEXT_NAMES)
            if wanted and f.suffix not in (".py", ".pyc", ".so") and f.is_file():
                found.append(f)
    return list(dict.fromkeys(found))
