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


def _options(command: str) -> set[str]:
    """The option strings of ``srlib COMMAND`` (its sub-parser's)."""
    import argparse

    from srlib.cli.parser import parser

    sub = next(a for a in parser()._actions if isinstance(a, argparse._SubParsersAction))
    return {o for action in sub.choices[command]._actions for o in action.option_strings}


def _shell_lines(text: str) -> list[str]:
    """Each command of a page's bash blocks: continuations joined, and a line that leaves a
    quotation open joined with the next (a multi-line ``python -c "..."``)."""
    out, pending = [], ""
    for block in _blocks(text, "bash"):
        for line in block.splitlines():
            line = re.sub(r"(^|\s)#\s.*$", "", line)  # a comment (its apostrophes are prose)
            pending = f"{pending}\n{line}" if pending else line
            if pending.strip() and pending.count('"') % 2 == 0 and pending.count("'") % 2 == 0:
                out.append(pending)
                pending = ""
        assert not pending.strip(), f"a command left a quotation open: {pending!r}"
    return out


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_command_a_page_shows_names_real_flags_notebooks_and_parameters(page):
    """A shell example that cannot run in a test is checked for what it names: an ``srlib``
    line parses (its ``[--option ...]`` usage groups named by the sub-command), a
    ``papermill`` line names a notebook and only parameters its parameters cell declares,
    and any other tool is one this project installs or a server named as the reader's own."""
    for line in _shell_lines(page.read_text()):
        _check_command(line)


@pytest.mark.parametrize("notebook", sorted((ROOT / "notebooks").glob("*.ipynb")), ids=str)
def test_every_chapters_rerun_lines_and_exercise_commands_name_real_things(notebook):
    """The commands a chapter's markdown shows: its "Rerun this chapter" box (indented lines,
    whole commands: checked as a page's are) and commands named in code spans in its prose
    and exercises (often a fragment, ``srlib audit --detector``: the sub-command and every
    option it names must exist)."""
    import nbformat

    whole, spans = [], []
    for cell in nbformat.read(notebook, as_version=4).cells:
        if cell.cell_type == "markdown":
            whole += re.findall(r"^ {4}((?:srlib|papermill) .*)$", cell.source, flags=re.M)
            spans += re.findall(r"`((?:srlib|papermill) [^`]*)`", cell.source)
    assert any(line.startswith("srlib book --only") for line in whole + spans), notebook.name
    for line in whole:
        _check_command(line)
    for span in spans:
        argv = shlex.split(span)
        if argv[0] == "papermill":
            _check_command(span)
            continue
        name = " ".join(argv[1:3]) if argv[1:3] == ["dedup", "evaluate"] else argv[1]
        flags = {a.split("=")[0] for a in argv if a.startswith("--")}
        assert flags <= _options(name), (span, flags - _options(name))


def _check_command(line: str) -> None:
    """What a shown command names exists (``srlib``: it parses; ``papermill``: notebook and
    parameters; anything else: installed here, or the reader's own)."""
    import papermill
    import yaml

    line = re.sub(r"(^|\s)#.*$|\s&\s*$", "", line)  # a comment; a server sent to the background
    optional = re.findall(r"\[([^\]]*)\]", line)
    argv = shlex.split(re.sub(r"\[[^\]]*\]", " ", line))
    tool = Path(argv[0]).name
    if tool == "srlib":
        command = parse(argv[1:])
        assert callable(command.func), line
        name = " ".join(argv[1:3]) if argv[1:3] == ["dedup", "evaluate"] else argv[1]
        named = {w for group in optional for w in re.findall(r"--[\w-]+", group)}
        assert named <= _options(name), (line, named - _options(name))
    elif tool == "papermill":
        notebook = ROOT / argv[1]
        assert notebook.exists(), line
        declared = set(papermill.inspect_notebook(str(notebook)))
        given = {argv[i + 1] for i, a in enumerate(argv) if a == "-p"}
        for i, a in enumerate(argv):
            if a == "-y":
                given |= set(yaml.safe_load(argv[i + 1]))
        assert given <= declared, (line, given - declared)
    else:
        installed = (ROOT / ".venv" / "bin" / tool).exists()
        assert installed or tool in {"make", "python", "vllm"}, line  # vllm: the reader's


def test_the_own_detector_pages_python_runs_on_a_model(
    memorised, tmp_path, monkeypatch, own_registry
):
    """``docs/api/own-detector.md``'s two Python blocks, as written: the detector saved as its
    comment says, then the loading and scoring code run on a small model and two samples."""
    from srlib.benchmarks import load_benchmark

    score, use = _blocks((ROOT / "docs" / "api" / "own-detector.md").read_text(), "python")
    (tmp_path / "my_scores.py").write_text("import math\n\n" + score)
    monkeypatch.chdir(tmp_path)
    namespace = {"model": memorised, "samples": load_benchmark("humaneval")[:2]}
    exec(compile(use, "own-detector.md", "exec"), namespace)  # noqa: S102 - the page's example
    table = namespace["table"]
    assert table.score_plugin_sure_tokens.between(0, 1).all() and len(table) == 2
