"""Cross-check a rename with Python's own compiler: the scopes must have the same shape.

libcst's scope analysis occasionally misses a use of a name (seen inside comprehension
conditions); a rename that leaves one use behind changes which binding that use reaches. The
``symtable`` of the renamed code must then differ from the original's: a symbol too many in
some scope, or a flag changed. This check runs on every rename before it is kept.
"""

from __future__ import annotations

import symtable
import warnings


def _flags(sym: symtable.Symbol) -> tuple[bool, ...]:
    return (
        sym.is_parameter(),
        sym.is_global(),
        sym.is_declared_global(),
        sym.is_local(),
        sym.is_free(),
        sym.is_imported(),
        sym.is_assigned(),
        sym.is_referenced(),
        sym.is_namespace(),
    )


def _tables(code: str) -> list[symtable.SymbolTable]:
    with warnings.catch_warnings():  # benchmark code has e.g. invalid escapes: not our concern
        warnings.simplefilter("ignore")
        out, todo = [], [symtable.symtable(code, "<sample>", "exec")]
    while todo:
        table = todo.pop(0)
        out.append(table)
        todo.extend(table.get_children())
    return out


def same_scopes(original: str, renamed: str, old: set[str], new: set[str]) -> bool:
    """Whether ``renamed`` has the scope structure of ``original`` under a rename old -> new:
    same tables, same number of symbols with the same flags in each, and every name outside
    ``old | new`` unchanged."""
    try:
        before, after = _tables(original), _tables(renamed)
    except SyntaxError:
        return False
    if len(before) != len(after):
        return False
    touched = old | new
    for b, a in zip(before, after, strict=True):
        if b.get_type() != a.get_type():
            return False
        bsyms, asyms = b.get_symbols(), a.get_symbols()
        if sorted(map(_flags, bsyms)) != sorted(map(_flags, asyms)):
            return False
        keep_b = {s.get_name(): _flags(s) for s in bsyms if s.get_name() not in touched}
        keep_a = {s.get_name(): _flags(s) for s in asyms if s.get_name() not in touched}
        if keep_b != keep_a:
            return False
    return True
