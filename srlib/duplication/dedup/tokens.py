"""Identifier and literal tokens of a context, the features of Allamanis's near-duplicate
detector: Python's ``tokenize`` keeps NAME (keywords excluded) and STRING tokens; for other
languages, or Python fragments that do not tokenize (a window cut mid-string), a documented
lexer takes identifiers and quoted strings. Numbers are dropped, as in the original tool."""

from __future__ import annotations

import io
import keyword
import re
import tokenize

OTHER_KEYWORDS = (
    "abstract boolean break byte case catch char class const continue default do double else "
    "enum extends final finally float for function goto if implements import instanceof int "
    "interface long native new null package private protected public return short static "
    "super switch synchronized this throw throws transient try var void volatile while let "
    "yield true false nil func go defer struct type map chan select fallthrough range end def "
    "elsif unless begin rescue module require include namespace use echo foreach val fun when"
)
KEYWORDS = frozenset(keyword.kwlist) | frozenset(OTHER_KEYWORDS.split())
_GENERIC = re.compile(
    r"""(?P<str>"(?:\\.|[^"\\\n])*"?|'(?:\\.|[^'\\\n])*'?|`[^`]*`?)|(?P<id>[A-Za-z_$][\w$]*)"""
)


def generic_tokens(text: str) -> list[str]:
    """Identifiers (language keywords excluded) and quoted strings; a string the window cut
    off (no closing quote on its line) runs to the end of the line."""
    out = []
    for m in _GENERIC.finditer(text):
        tok = m.group()
        if m.group("str") is not None or tok not in KEYWORDS:
            out.append(tok)
    return out


def python_tokens(text: str) -> list[str] | None:
    """NAME (not keywords) and STRING tokens by ``tokenize``; None if the text does not lex."""
    out = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.ERRORTOKEN and tok.string.strip():
                return None  # e.g. a quote whose string the window cut off
            name = tok.type == tokenize.NAME and not keyword.iskeyword(tok.string)
            if name or tok.type == tokenize.STRING:
                out.append(tok.string)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None
    return out


def context_tokens(text: str, language: str = "") -> list[str]:
    """Tokens of one side of a context: Python's lexer for Python when it works, else the
    generic one."""
    if language.lower() in ("py", "python"):
        toks = python_tokens(text)
        if toks is not None:
            return toks
    return generic_tokens(text)
