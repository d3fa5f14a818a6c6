"""Secret contexts (Soltaniani & Ghafari 2026, §II-A): the ``w`` characters before and after
a secret, the secret itself excluded. The two sides are kept apart, so that tokens are never
glued together across the removed secret; ``text`` joins them for exact comparison."""

from __future__ import annotations

from dataclasses import dataclass

from srlib.codetext import line_starts


@dataclass(frozen=True)
class Context:
    """The text before and after one secret occurrence."""

    before: str
    after: str

    @property
    def text(self) -> str:
        """Both sides with a newline between them (the secret's place)."""
        return self.before + "\n" + self.after


def secret_context(text: str, start: int, end: int, window: int = 200) -> Context:
    """The context of the secret ``text[start:end]``: ``window`` characters on each side."""
    if not 0 <= start <= end <= len(text):
        raise ValueError(f"secret span [{start}, {end}) is outside a text of {len(text)} chars")
    if window < 0:
        raise ValueError(f"window must be non-negative, got {window}")
    return Context(text[max(0, start - window) : start], text[end : end + window])


def offset(text: str, line: int, column: int, one_based_column: bool = True) -> int:
    """Character offset of a 1-based line and a column (1-based by default, as SecretBench)."""
    starts = line_starts(text)
    if not 1 <= line <= len(starts):
        raise ValueError(f"line {line} is outside a text of {len(starts)} lines")
    return starts[line - 1] + column - (1 if one_based_column else 0)
