"""The README is the front door: short, and every command and path it shows works. Links of
the docs pages resolve too, so a page moved or renamed is caught here."""

from __future__ import annotations

import re
import shlex
import textwrap
from pathlib import Path

import pytest

from srlib.cli import parse

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").rglob("*.md"))]


def _blocks(text: str, language: str) -> list[str]:
    """The fenced code blocks of ``language`` in a markdown text, with continuations joined."""
    found = re.findall(rf"```{language}\n(.*?)```", text, flags=re.S)
    return [textwrap.dedent(re.sub(r"\\\n\s*", " ", b)) for b in found]


def _commands(text: str) -> list[list[str]]:
    """Each shell line of the README's bash blocks, split as a shell would (comments off)."""
    lines = [line for block in _blocks(text, "bash") for line in block.splitlines()]
    return [shlex.split(line, comments=True) for line in lines if line.strip()]


def test_the_readme_is_short():
    assert len(README.read_text().splitlines()) <= 200


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page):
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text())
    local = [link for link in links if not re.match(r"[a-z]+:", link)]
    missing = [link for link in local if not (page.parent / link).exists()]
    assert not missing, missing


def test_every_srlib_command_in_the_readme_parses():
    """Each `.venv/bin/srlib ...` line is a valid command line (parsed, not run)."""
    lines = [c[1:] for c in _commands(README.read_text()) if c[0].endswith("bin/srlib")]
    assert len(lines) >= 4
    for argv in lines:
        assert callable(parse(argv).func), argv


def test_every_make_target_notebook_and_tool_the_readme_names_exists():
    text = README.read_text()
    commands = _commands(text)
    targets = set(re.findall(r"^([\w-]+):", (ROOT / "Makefile").read_text(), flags=re.M))
    assert {c[1] for c in commands if c[0] == "make"} <= targets
    assert set(re.findall(r"`make ([\w-]+)`", text)) <= targets
    notebooks = re.findall(r"notebooks/[\w-]+\.ipynb", text)
    assert notebooks and all((ROOT / n).exists() for n in notebooks)
    tools = {Path(c[0]).name for c in commands if c[0].startswith(".venv/bin/")}
    assert tools <= {"srlib", "papermill"}, tools


def test_the_readme_own_detector_example_is_a_gray_box_score(tmp_path):
    """The README's detector, saved as its comment says, loads as a gray-box score."""
    from srlib.detection import plugins

    code = _blocks(README.read_text(), "python")[0]
    (tmp_path / "my_scores.py").write_text("import math\n\n" + code)
    function = plugins.load_function(f"{tmp_path / 'my_scores.py'}:sure_tokens")
    assert plugins.infer_kind(function) == "gray"
