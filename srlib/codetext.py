"""Code as text, defined once: the code-token pattern every score and view shares, and line
offsets (which newlines count, and how a 1-based line maps to a character offset)."""

from __future__ import annotations

import re

NEWLINE = re.compile(r"\r\n|\r|\n")
CODE_TOKEN = re.compile(r"[A-Za-z_]\w*|\d+(?:\.\d+)?|\S")
"""Identifiers, numbers and single non-space symbols (no whitespace): comparable across
tokenizers and backends."""


def code_tokens(text: str) -> list[str]:
    """Identifiers, numbers and single non-space symbols: the unit of black-box scores."""
    return CODE_TOKEN.findall(text)


def line_starts(text: str, universal: bool = True) -> list[int]:
    """Character offset where each line starts. ``universal``: ``\\r\\n``, ``\\r`` and
    ``\\n`` end lines (as Python's parser sees a string); otherwise only ``\\n`` (as
    ``tokenize`` over ``io.StringIO`` does)."""
    pattern = NEWLINE if universal else re.compile("\n")
    return [0] + [m.end() for m in pattern.finditer(text)]


def char_offset(text: str, starts: list[int], line: int, col_bytes: int) -> int:
    """Character offset of a 1-based ``line`` and a UTF-8 *byte* column (as ``ast`` reports)."""
    start = starts[line - 1]
    end = starts[line] if line < len(starts) else len(text)
    return start + len(text[start:end].encode("utf-8")[:col_bytes].decode("utf-8", "ignore"))
