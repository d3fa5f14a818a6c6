"""Scope-aware renaming of functions (τf) and variables (τv) with libcst, byte-exact.

The sample's code is parsed once (``analyze``); libcst's scope analysis links every binding
to its uses, and each occurrence becomes an edit of exactly the identifier's characters, so
formatting, comments, quotes and line ends stay untouched. What is never renamed:
attributes, keyword names of calls, builtins, imported names, globals other than the
sample's own functions, class members, names in ``global``/``nonlocal`` statements, names
in functions that call ``locals``/``vars``/``eval``/``exec``/``globals``/``dir``, string
contents (except whole-word mentions of renamed functions in docstrings, comments and prose
prompts), and parameters whose name is passed by keyword anywhere in the sample.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import random
import re
from collections import OrderedDict
from collections.abc import Collection
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import (
    ClassScope,
    ComprehensionScope,
    FunctionScope,
    GlobalScope,
    MetadataWrapper,
    PositionProvider,
    ScopeProvider,
)

from srlib.samples import Sample
from srlib.transforms.edits import Edit, Module, apply_edits
from srlib.transforms.lexicon import RESERVED, choose_name, split_identifier
from srlib.transforms.scopecheck import same_scopes

CODE_FIELDS = ("prompt", "solution")
DYNAMIC = frozenset({"locals", "vars", "eval", "exec", "globals", "dir"})
KEEP = frozenset({"self", "cls"})


@dataclass
class Symbol:
    """One renamable binding: its kind, name, and every place its name is written."""

    kind: str  # "function" or "variable"
    name: str
    scope: str  # where it lives, for the mapping record ("<module>", "f", "f.<lambda>", ...)
    depth: int  # scopes between it and the module (0: a module-level function)
    occurrences: list[tuple[str, int]] = field(default_factory=list)  # (field, offset)


@dataclass
class Analysis:
    """The renamable symbols of a sample, the identifiers it already uses, or why none."""

    symbols: list[Symbol]
    taken: set[str]
    reason: str = ""

    def of_kind(self, kind: str) -> list[Symbol]:
        """Symbols of one kind ("function" or "variable")."""
        return [s for s in self.symbols if s.kind == kind]


_ANALYSES: OrderedDict[str, Analysis] = OrderedDict()  # the last analyses, by sample content
_KEEP_ANALYSES = 4096


def analyze(sample: Sample) -> Analysis:
    """Find every function and variable of ``sample`` that can be renamed safely. The same
    sample is analysed once per process (libcst's scope analysis is the costly part of
    making variants, and chapters and tests make variants of the same samples again); each
    call gets its own copy, so a caller may change what it receives."""
    key = json.dumps(dataclasses.asdict(sample), sort_keys=True, default=str)
    if key not in _ANALYSES:
        _ANALYSES[key] = _analyze(sample)
        if len(_ANALYSES) > _KEEP_ANALYSES:
            _ANALYSES.popitem(last=False)
    _ANALYSES.move_to_end(key)
    return copy.deepcopy(_ANALYSES[key])


def _analyze(sample: Sample) -> Analysis:
    module = Module.of(sample)
    taken = set(re.findall(r"[A-Za-z_]\w*", module.text + sample.prompt)) | RESERVED
    try:
        tree = cst.parse_module(module.text)
    except cst.ParserSyntaxError:
        try:
            tree = cst.parse_module(module.expand_indentation())
        except cst.ParserSyntaxError as e:
            return Analysis([], taken, f"libcst cannot parse the code: {str(e).splitlines()[0]}")
    wrapper = MetadataWrapper(tree)
    scopes = wrapper.resolve(ScopeProvider)
    positions = wrapper.resolve(PositionProvider)
    facts = _Facts()
    wrapper.visit(facts)
    symbols: list[Symbol] = []
    for scope in dict.fromkeys(s for s in scopes.values() if s is not None):
        by_name: dict[str, list] = {}
        for a in scope.assignments:
            by_name.setdefault(a.name, []).append(a)
        for name, assignments in by_name.items():
            kind = _kind(scope, name, assignments, facts)
            if kind is None:
                continue
            sym = _symbol(kind, name, scope, assignments, positions, module)
            if sym is not None:
                symbols.append(sym)
    for sym in symbols:
        if sym.kind == "function":
            sym.occurrences += _mentions(sym.name, sample, module, facts, positions)
    _resolve_overlaps(symbols)
    kept, dropped = _verified(sample, module, symbols, taken)
    reason = f"scope check rejected: {', '.join(dropped)}" if dropped else ""
    return Analysis(kept, taken, reason)


def _verified(sample, module: Module, symbols: list[Symbol], taken: set[str]):
    """Keep the symbols whose rename Python's symtable confirms (see ``scopecheck``)."""

    def ok(group: list[Symbol]) -> bool:
        names = {id(s): f"srlib_{i}_{s.name}" for i, s in enumerate(group)}
        edits = [
            Edit(f, off, off + len(s.name), names[id(s)]) for s in group for f, off in s.occurrences
        ]
        renamed = Module.of(dataclasses.replace(sample, **apply_edits(sample, edits))).text
        return same_scopes(module.text, renamed, {s.name for s in group}, set(names.values()))

    if not symbols or ok(symbols):
        return symbols, []
    kept = [s for s in symbols if ok([s])]
    return kept, [f"{s.scope}:{s.name}" for s in symbols if s not in kept]


def _resolve_overlaps(symbols: list[Symbol]) -> None:
    """An occurrence claimed by two bindings belongs to the innermost one (a local shadows a
    global throughout its function); libcst occasionally links it to both."""
    owner: dict[tuple[str, int], Symbol] = {}
    for sym in symbols:
        for occ in sym.occurrences:
            if occ not in owner or sym.depth > owner[occ].depth:
                owner[occ] = sym
    for sym in symbols:
        sym.occurrences = [o for o in dict.fromkeys(sym.occurrences) if owner[o] is sym]


class _Facts(cst.CSTVisitor):
    """Module-wide facts that restrict renaming: keywords used, global/nonlocal names, ..."""

    def __init__(self) -> None:
        self.keywords: set[str] = set()
        self.double_star = False
        self.declared: set[str] = set()
        self.dynamic_defs: list[cst.CSTNode] = []
        self.docstrings: list[cst.CSTNode] = []
        self.comments: list[cst.Comment] = []
        self._defs: list[cst.CSTNode] = []

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self.keywords.add(node.keyword.value)
        if node.star == "**":
            self.double_star = True

    def visit_Global(self, node: cst.Global) -> None:
        self.declared.update(n.name.value for n in node.names)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self.declared.update(n.name.value for n in node.names)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._defs.append(node)
        body = node.body.body if isinstance(node.body, cst.IndentedBlock) else []
        self._docstring(body)

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._defs.pop()

    def visit_Module(self, node: cst.Module) -> None:
        self._docstring(node.body)

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value in DYNAMIC and self._defs:
            self.dynamic_defs.extend(self._defs)

    def visit_Comment(self, node: cst.Comment) -> None:
        self.comments.append(node)

    def _docstring(self, body) -> None:
        if body and isinstance(body[0], cst.SimpleStatementLine):
            first = body[0].body[0] if body[0].body else None
            if isinstance(first, cst.Expr) and isinstance(
                first.value, cst.SimpleString | cst.ConcatenatedString
            ):
                self.docstrings.append(first.value)


def _binding_name(node: cst.CSTNode) -> cst.Name | None:
    """The Name node an assignment writes, for the assignment kinds we can rename."""
    if isinstance(node, cst.Name):
        return node
    if isinstance(node, cst.Param | cst.FunctionDef):
        return node.name
    if isinstance(node, cst.ExceptHandler) and node.name is not None:
        return node.name.name if isinstance(node.name.name, cst.Name) else None
    return None


def _kind(scope, name: str, assignments: list, facts: _Facts) -> str | None:
    """ "function", "variable", or None when this binding must keep its name."""
    if name in facts.declared or name in KEEP or name.startswith("__") or name in RESERVED:
        return None
    nodes = [a.node for a in assignments]
    if isinstance(scope, ClassScope):
        return None
    if any(_in_dynamic(scope, d) for d in facts.dynamic_defs):
        return None
    if all(isinstance(n, cst.FunctionDef) for n in nodes):
        return "function" if isinstance(scope, GlobalScope | FunctionScope) else None
    if not isinstance(scope, FunctionScope | ComprehensionScope):
        return None
    if any(isinstance(n, cst.FunctionDef) or _binding_name(n) is None for n in nodes):
        return None
    if any(isinstance(n, cst.Param) for n in nodes) and (
        name in facts.keywords or facts.double_star
    ):
        return None
    return "variable"


def _in_dynamic(scope, def_node: cst.CSTNode) -> bool:
    """Whether ``scope`` is (inside) a function that calls locals()/eval()/..."""
    while scope is not None and not isinstance(scope, GlobalScope):
        if getattr(scope, "node", None) is def_node:
            return True
        scope = scope.parent
    return False


def _symbol(kind, name, scope, assignments, positions, module: Module) -> Symbol | None:
    """Collect the occurrences of a binding; None if any lies outside the code we may edit."""
    nodes = [_binding_name(a.node) for a in assignments]
    for a in assignments:
        for ref in a.references:
            if not isinstance(ref.node, cst.Name):
                return None
            nodes.append(ref.node)
    occurrences = []
    for node in dict.fromkeys(nodes):
        pos = positions[node].start
        offset = module.offset(pos.line, pos.column)
        if module.text[offset : offset + len(name)] != name:
            raise AssertionError(f"position of {name!r} does not match the source at {offset}")
        occurrences.append(module.locate(offset, len(name)))
    home = occurrences[0][0] if occurrences else None
    if home not in CODE_FIELDS:  # defined in tests or set-up: not part of the sample's code
        return None
    label = _scope_label(scope)
    return Symbol(kind, name, label or "<module>", label.count(".") + bool(label), occurrences)


def _scope_label(scope) -> str:
    """Dotted path of the functions enclosing ``scope`` ("" for the module)."""
    parts = []
    while scope is not None and not isinstance(scope, GlobalScope):
        node = getattr(scope, "node", None)
        named = isinstance(node, cst.FunctionDef | cst.ClassDef)
        parts.append(node.name.value if named else f"<{type(node).__name__.lower()}>")
        scope = scope.parent
    return ".".join(reversed(parts))


def mention_pattern(name: str) -> re.Pattern[str]:
    """Whole-word mentions of a function name in prose; single-word names only as calls."""
    _, words, _, _ = split_identifier(name)
    tail = r"(?!\w)" if len(words) > 1 or not name.isalpha() else r"(?=\s*\()"
    return re.compile(rf"(?<![\w.]){re.escape(name)}{tail}")


def _mentions(
    name, sample: Sample, module: Module, facts: _Facts, positions
) -> list[tuple[str, int]]:
    """Mentions of a function in docstrings and comments of the code, and in a prose prompt."""
    pattern, found = mention_pattern(name), []
    for node in facts.docstrings + facts.comments:
        r = positions[node]
        start = module.offset(r.start.line, r.start.column)
        end = module.offset(r.end.line, r.end.column)
        for m in pattern.finditer(module.text, start, end):
            where = module.locate(m.start(), len(name))
            if where and where[0] in CODE_FIELDS:
                found.append(where)
    if sample.format != "completion":
        found += [("prompt", m.start()) for m in pattern.finditer(sample.prompt)]
    return found


def rename_edits(
    analysis: Analysis,
    kinds: tuple[str, ...],
    rng: random.Random,
    avoid: Collection[str] = (),
) -> tuple[list[Edit], list[dict[str, str]]]:
    """Edits that rename every symbol of the given kinds, and one record per rename
    (``kind``, ``scope``, ``old``, ``new``); no new name is one of ``avoid``."""
    taken = set(analysis.taken) | set(avoid)
    edits, renames = [], []
    for sym in analysis.symbols:
        if sym.kind not in kinds:
            continue
        new = choose_name(sym.name, taken, rng, sym.kind)
        taken.add(new)
        renames.append({"kind": sym.kind, "scope": sym.scope, "old": sym.name, "new": new})
        edits += [Edit(f, off, off + len(sym.name), new) for f, off in sym.occurrences]
    return edits, renames
