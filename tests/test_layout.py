"""The package's architecture, checked: a module imports only from its own layer or below
(docs/api/README.md), there is no import cycle, the package root stays small, and the install
lock agrees with pyproject.toml."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]

SRLIB = Path(__file__).resolve().parent.parent / "srlib"

LAYERS = [
    {"errors", "jsonl", "codetext", "localfiles", "samples", "costs", "store"},
    {"stats"},  # the statistics both studies and the testbed share; it imports neither
    {"execution"},
    {"benchmarks"},
    {"transforms"},
    {"models"},
    {"detection"},
    {"duplication"},
    {"plots"},
    {"testbed"},
    {"audit"},
    {"realmodel"},
    {"book"},
    {"cli", "__init__"},  # the entry points: the command and the package's public names
]
"""Lowest first; the same list as docs/api/README.md's."""


def _unit(module: str) -> str:
    """The layer unit of a dotted srlib module: its subpackage, or its root module name."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _layer(unit: str) -> int:
    for i, units in enumerate(LAYERS):
        if unit in units:
            return i
    raise AssertionError(f"srlib.{unit} is in no layer of docs/api/README.md")


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


def _locked() -> dict[str, list[tuple[str, str]]]:
    """requirements.lock: package → [(version, marker)] (a package may have one per marker)."""
    found: dict[str, list[tuple[str, str]]] = {}
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        if line[:1].isalnum():
            spec, _, marker = line.rstrip(" \\").partition(" ; ")
            name, _, version = spec.partition("==")
            found.setdefault(canonicalize_name(name), []).append((version, marker))
    return found


def test_the_lock_pins_every_dependency_within_pyproject_and_environment_yml_reads_it():
    """A stale lock (a dependency added or a range moved in pyproject.toml without `make lock`)
    fails here, before an install from it misses a package."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = project["dependencies"] + [
        d for ds in project["optional-dependencies"].values() for d in ds
    ]
    locked = _locked()
    for spec in map(Requirement, wanted):
        name = canonicalize_name(spec.name)
        if name == "torch":  # installed by pip from its pin, never from the lock
            assert name not in locked and str(spec.specifier).startswith("==")
            continue
        versions = [v for v, m in locked.get(name, []) if not m or Marker(m).evaluate()]
        assert versions and all(spec.specifier.contains(v, prereleases=True) for v in versions), (
            spec
        )
    lines = (ROOT / "requirements.lock").read_text().splitlines()
    pins = [i for i, line in enumerate(lines) if line[:1].isalnum()]
    assert pins and all("--hash=sha256:" in lines[i + 1] for i in pins)  # every file hashed


def test_environment_yml_installs_what_make_install_installs(tmp_path):
    """conda's file makes the interpreter only and says to run ``make install`` into it: the
    pip steps, in order, into that environment's Python — torch from its pin and the hashed
    lock both without dependencies (with them, hash-checking refuses the locked packages that
    require torch, which the lock leaves out), then the project."""
    import subprocess

    import yaml

    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    assert not [d for d in env["dependencies"] if isinstance(d, dict)]  # no pip section
    assert 'make install VENV="$CONDA_PREFIX"' in (ROOT / "environment.yml").read_text()
    prefix = tmp_path / "conda-env"
    steps = subprocess.run(
        ["make", "-n", "-B", "install", f"VENV={prefix}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    installs = [line for line in steps.splitlines() if " install " in line]
    python = f"{prefix}/bin/python"
    assert all(python in line for line in installs), installs
    torch, lock, project = (
        next(i for i, line in enumerate(installs) if what in line)
        for what in ("torch==", "-r requirements.lock", "-e .")
    )
    assert torch < lock < project
    for i in (torch, lock, project):
        assert "--no-deps" in installs[i], installs[i]
    assert "--require-hashes" in installs[lock]


TESTBED_ROOMS = {
    "shared": {"__init__", "config", "runs", "testbed", "experiment"},  # what both rooms hold
    "making": {"sources", "locked", "corpus", "train", "leak", "build", "zoo", "prepare"},  # models
    "reading": {"report", "controls", "cleancal", "verdicts", "digests", "premise"},  # tables
}
"""The testbed's rooms in the order data flows: the making room trains models and scores them
(``prepare``: every score a report reads), the reading room makes tables of them and never
trains; both stand on the shared room (the configuration, the testbed object, run names)."""


def _testbed_imports(module: str) -> set[str]:
    """The testbed modules ``module`` imports at run time (not under ``if TYPE_CHECKING``)."""
    tree = ast.parse((SRLIB / "testbed" / f"{module}.py").read_text())
    typing_only = {
        id(n)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING"
        for n in ast.walk(node)
    }
    found = set()
    for node in ast.walk(tree):
        if id(node) in typing_only or not isinstance(node, ast.ImportFrom) or node.level:
            continue
        if node.module == "srlib.testbed":
            found |= {a.name for a in node.names}
        elif (node.module or "").startswith("srlib.testbed."):
            found.add(node.module.split(".")[2])
    for node in ast.walk(tree):  # ``import srlib.testbed.x`` too
        if isinstance(node, ast.Import) and id(node) not in typing_only:
            found |= {a.name.split(".")[2] for a in node.names
                      if a.name.startswith("srlib.testbed.")}  # fmt: skip
    return found


def test_the_testbeds_reading_room_never_imports_the_making_room():
    modules = {p.stem for p in (SRLIB / "testbed").glob("*.py")}
    roomed = set().union(*TESTBED_ROOMS.values())
    assert modules == roomed, f"in no room: {modules - roomed}; gone: {roomed - modules}"
    reach = {}
    for module in modules:
        seen, todo = set(), [module]
        while todo:
            for other in _testbed_imports(todo.pop()) - seen:
                seen.add(other)
                todo.append(other)
        reach[module] = seen
    making = TESTBED_ROOMS["making"]
    wrong = {m: reach[m] & making for m in TESTBED_ROOMS["reading"] | TESTBED_ROOMS["shared"]}
    assert not any(wrong.values()), {m: sorted(v) for m, v in wrong.items() if v}
    upward = {m: reach[m] & TESTBED_ROOMS["reading"] for m in making | TESTBED_ROOMS["shared"]}
    assert not any(upward.values()), {m: sorted(v) for m, v in upward.items() if v}


def test_every_module_is_in_the_api_reference_and_every_page_in_the_book():
    """The API reference (``book/api/``) renders each module's docstrings with autodoc: every
    srlib module is on one of its pages exactly once, and every page is in ``_toc.yml`` (the
    book's ``-W -n`` build then fails on a docstring Sphinx cannot read or a reference into
    srlib that does not resolve)."""
    import re

    import yaml

    modules = sorted(
        ".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        for p in SRLIB.rglob("*.py")
        if p.name != "__main__.py"
    )
    pages = sorted((ROOT / "book" / "api").glob("*.md"))
    rendered = [
        m
        for page in pages
        for m in re.findall(r"^\.\. automodule:: (\S+)$", page.read_text(), re.M)
    ]
    assert sorted(rendered) == modules, (
        f"missing: {sorted(set(modules) - set(rendered))}; "
        f"not modules or twice: {sorted(set(rendered) - set(modules)) or rendered}"
    )
    toc = (ROOT / "_toc.yml").read_text()
    files = set(re.findall(r"file: (\S+)", toc))
    assert {f"book/api/{p.stem}" for p in pages} <= files
    config = yaml.safe_load((ROOT / "_config.yml").read_text())["sphinx"]
    assert "sphinx.ext.autodoc" in config["extra_extensions"]
