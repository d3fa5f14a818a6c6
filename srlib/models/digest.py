"""Content hashes of large files (model weights), computed once and remembered by path, size
and modification time, so that identifying a multi-GB checkpoint is free after the first time.
The memo is a JSON file under ``$SRLIB_HOME`` (default ``~/.cache/srlib``)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
from pathlib import Path

from srlib.store import write_json

_LOCK = threading.Lock()
_MEMO: dict[str, dict] = {}


def memo_path() -> Path:
    """Where the digests are remembered between processes."""
    home = os.environ.get("SRLIB_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "srlib"
    )
    return Path(home) / "file-digests.json"


def _load() -> dict[str, dict]:
    try:
        data = json.loads(memo_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _store(memo: dict[str, dict]) -> None:
    path = memo_path()
    with contextlib.suppress(OSError):  # a read-only home only costs re-hashing next time
        write_json(path, memo)


def sha256_file(path: Path, chunk: int = 1 << 22) -> str:
    """The SHA-256 of a file's whole content, read in chunks."""
    h = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


def file_digest(path: str | os.PathLike[str]) -> str:
    """SHA-256 of the file's full content; recomputed only when its size or mtime changed."""
    real = Path(path).resolve()
    st = real.stat()
    stamp = {"size": st.st_size, "mtime_ns": st.st_mtime_ns}
    key = str(real)
    with _LOCK:
        if not _MEMO:
            _MEMO.update(_load())
        known = _MEMO.get(key)
        if known and all(known.get(k) == v for k, v in stamp.items()):
            return known["sha256"]
    digest = sha256_file(real)
    with _LOCK:
        _MEMO.update(_load())
        _MEMO[key] = {**stamp, "sha256": digest}
        _store(_MEMO)
    return digest
