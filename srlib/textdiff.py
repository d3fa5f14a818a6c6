"""Token-level highlighting of how one text differs from another, as HTML."""

from __future__ import annotations

import difflib
import html
import re

from srlib.codetext import CODE_TOKEN

_SPLIT = re.compile(rf"{CODE_TOKEN.pattern}|\s+")  # code tokens and the space between


def highlight(a: str, b: str) -> str:
    """``b`` as HTML, with the tokens that differ from ``a`` marked."""
    ta, tb = _SPLIT.findall(a), _SPLIT.findall(b)
    out = []
    for tag, _, _, j1, j2 in difflib.SequenceMatcher(a=ta, b=tb, autojunk=False).get_opcodes():
        text = html.escape("".join(tb[j1:j2]))
        out.append(text if tag == "equal" or not text else f"<mark>{text}</mark>")
    return "".join(out)
