"""The package's architecture, checked: a module imports only from its own layer or below
(README "Layout"), there is no import cycle, and the package root stays small."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRLIB = Path(__file__).resolve().parent.parent / "srlib"

LAYERS = [
    {"errors", "jsonl", "codetext", "localfiles", "samples", "store"},
    {"execution"},
    {"benchmarks"},
    {"transforms"},
    {"models"},
    {"detection"},
    {"duplication"},
    {"plots"},
    {"testbed"},
    {"audit"},
    {"book"},
    {"cli", "__init__"},  # the entry points: the command and the package's public names
]
"""Lowest first; the same list as the README's layout section."""


def _unit(module: str) -> str:
    """The layer unit of a dotted srlib module: its subpackage, or its root module name."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _layer(unit: str) -> int:
    for i, units in enumerate(LAYERS):
        if unit in units:
            return i
    raise AssertionError(f"srlib.{unit} is in no layer of the README's layout")


def _imports() -> dict[str, set[str]]:
    """srlib module → the srlib modules it imports (at any depth of the file)."""
    out = {}
    for path in SRLIB.rglob("*.py"):
        rel = path.relative_to(SRLIB.parent).with_suffix("")
        name = ".".join(p for p in rel.parts if p != "__init__")
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                if node.module == "srlib":
                    found |= {f"srlib.{a.name}" for a in node.names}
                elif node.module.startswith("srlib."):
                    found.add(node.module)
            elif isinstance(node, ast.Import):
                found |= {a.name for a in node.names if a.name.startswith("srlib.")}
        out[name] = found
    return out


def test_no_module_imports_from_a_layer_above_it():
    upward = []
    for module, imported in _imports().items():
        for other in imported:
            if _layer(_unit(other)) > _layer(_unit(module)):
                upward.append(f"{module} -> {other}")
    assert not upward, upward


def test_no_import_cycle_between_modules():
    imports = _imports()
    graph = {m: {i for i in imp if i in imports} for m, imp in imports.items()}
    seen, stack = set(), []

    def visit(node):
        if node in stack:
            pytest.fail("import cycle: " + " -> ".join(stack[stack.index(node) :] + [node]))
        if node in seen:
            return
        stack.append(node)
        for nxt in graph.get(node, ()):
            if nxt != node and not node.startswith(nxt + "."):
                visit(nxt)
        stack.pop()
        seen.add(node)

    for node in graph:
        visit(node)


def test_the_package_root_holds_few_modules():
    root = sorted(p.stem for p in SRLIB.glob("*.py") if p.stem != "__init__")
    assert len(root) <= 8, root


def test_the_readme_layout_names_every_subpackage_and_root_module():
    readme = (SRLIB.parent / "README.md").read_text()
    layout = readme.split("## Layout", 1)[1].split("\n## ", 1)[0]
    names = [p.name + "/" for p in SRLIB.iterdir() if p.is_dir() and (p / "__init__.py").exists()]
    names += [p.name for p in SRLIB.glob("*.py") if p.stem != "__init__"]
    missing = [n for n in names if n not in layout]
    assert not missing, missing
