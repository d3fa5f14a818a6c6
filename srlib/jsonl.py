"""The one line-numbered JSONL reader: every error names the file and the line."""

from __future__ import annotations

import errno
import gzip
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from srlib.errors import InputError


def iter_jsonl(
    path: str | os.PathLike[str], error: type[InputError] = InputError
) -> Iterator[tuple[int, Any]]:
    """``(line number, parsed value)`` for each non-blank line of a JSONL (or ``.jsonl.gz``)
    file; a missing file is ``FileNotFoundError``, a line that is not UTF-8 or not JSON an
    ``error`` (an ``InputError``) naming ``file:line``."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(errno.ENOENT, "no such JSONL file", str(path))
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rb") as fh:
        for lineno, raw in enumerate(fh, 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise error(
                    f"{path}:{lineno}: not UTF-8 ({e.reason} at byte {e.start} of the line)"
                ) from e
            if not line.strip():
                continue
            try:
                yield lineno, json.loads(line)
            except json.JSONDecodeError as e:
                raise error(f"{path}:{lineno}: not JSON ({e.msg} at character {e.pos + 1})") from e
