"""Code as text, defined once: the code-token pattern every score and view shares, and line
offsets (which newlines count, and how a 1-based line maps to a character offset)."""

from __future__ import annotations

import difflib
import html
import re

NEWLINE = re.compile(r"\r\n|\r|\n")
CODE_TOKEN = re.compile(r"[A-Za-z_]\w*|\d+(?:\.\d+)?|\S")
"""Identifiers, numbers and single non-space symbols (no whitespace): comparable across
tokenizers and backends."""


def code_tokens(text: str) -> list[str]:
    """Identifiers, numbers and single non-space symbols: the unit of black-box scores."""
    return CODE_TOKEN.findall(text)


SETTLE_MARGIN = 4
"""Characters past a code token after which no continuation can change it: the pattern looks
at most two characters ahead (``3.`` + ``5``), and a tokenizer's decoding clean-up rewrites at
most four (`` n't``)."""


def code_tokens_settled(text: str, k: int) -> bool:
    """Whether the first ``k`` code tokens of ``text`` are final: whatever is appended, they
    stay the same (a generation can stop there without changing them). An undecoded byte
    (U+FFFD, half of a character) settles nothing."""
    if "\ufffd" in text:
        return False
    ends = [m.end() for m in CODE_TOKEN.finditer(text)]
    return len(ends) >= k and len(text) - ends[k - 1] >= SETTLE_MARGIN


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


_SPLIT = re.compile(rf"{CODE_TOKEN.pattern}|\s+")  # code tokens and the space between


def highlight(a: str, b: str) -> str:
    """``b`` as HTML, with the tokens that differ from ``a`` marked."""
    ta, tb = _SPLIT.findall(a), _SPLIT.findall(b)
    out = []
    for tag, _, _, j1, j2 in difflib.SequenceMatcher(a=ta, b=tb, autojunk=False).get_opcodes():
        text = html.escape("".join(tb[j1:j2]))
        out.append(text if tag == "equal" or not text else f"<mark>{text}</mark>")
    return "".join(out)
