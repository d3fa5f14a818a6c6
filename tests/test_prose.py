"""A chapter's prose types no measured number or setting: numbers come from the configuration
or the results, glued or printed by a cell. Allowed: what a citation reports (in its
sentence), the two statistical conventions the book states in words, and numbers inside
code, math, roles and directive options (names and formulas, not claims)."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))

CODE = [
    re.compile(r"^ {4}.*$", re.M),  # indented code
    re.compile(r"`[^`\n]*`"),  # code spans, and the targets of roles ({cite:p}`key`)
]
FENCE = re.compile(r"^(`{3,}|~{3,})(\{[\w:-]+\})?")
SKIPPED = {"code", "exercise"}  # fenced code, and an exercise: it asks, it claims nothing


def _prose(markdown: str) -> str:
    """The cell without its fenced code and exercises (a directive's other content, an
    admonition's or a solution's, is prose); nested fences matched by their own marker."""
    out, open_fences = [], []
    for line in markdown.splitlines():
        bare = line.strip()
        if open_fences and bare == open_fences[-1][0]:
            open_fences.pop()
            continue
        found = FENCE.match(bare)
        if found and not any(kind == "code" for _, kind in open_fences):
            name = found.group(2)
            open_fences.append((found.group(1), name[1:-1] if name else "code"))
            continue
        if not any(kind in SKIPPED for _, kind in open_fences):
            out.append(line)
    return "\n".join(out)


NOT_PROSE = [
    re.compile(r"\$[^$]+\$"),  # math
    re.compile(r"\]\([^)]*\)"),  # link targets
    re.compile(r"^:[\w-]+:.*$", re.M),  # directive options
]
NAMES = re.compile(r"\b(F1|SHA-256|all-MiniLM\S*|Qwen[\w.-]*)")
ALLOWED = re.compile(r"95% (interval|confidence)|\[95% interval\]|bootstrap 95%|80% power")
NUMBER = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?%?")


def typed_numbers(markdown: str) -> list[tuple[str, str]]:
    """(number, sentence) for each number typed in a markdown cell's prose (exercises, which
    ask, are not claims); a sentence that cites (``{cite:…}``) may report the cited work's."""
    text = _prose(markdown)
    for pattern in CODE:
        text = pattern.sub(" ", text)
    found = []
    for sentence in re.split(r"(?<=[.;:])\s+|\n\n", text):
        if "{cite" in sentence:
            continue
        bare = sentence
        for pattern in NOT_PROSE:
            bare = pattern.sub(" ", bare)
        bare = ALLOWED.sub(" ", NAMES.sub(" ", bare))
        found += [(m.group(0), " ".join(sentence.split())) for m in NUMBER.finditer(bare)]
    return found


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.name)
def test_no_markdown_cell_types_a_measured_number_or_a_setting(notebook):
    typed = [
        found
        for cell in nbformat.read(notebook, as_version=4).cells
        if cell.cell_type == "markdown"
        for found in typed_numbers(cell.source)
    ]
    assert not typed, "typed in prose (render it from the config or the results):\n" + "\n".join(
        f"{n!r} in: {s[:160]}" for n, s in typed
    )


def test_the_check_finds_a_typed_number_and_passes_names_code_and_citations():
    assert [n for n, _ in typed_numbers("The chapter took about 34 minutes.")] == ["34"]
    assert [n for n, _ in typed_numbers("A 38-repository corpus; F1 with a 95% interval.")] == [
        "38"
    ]
    clean = "Set `fpr = 0.01`; the paper found 69.3% {cite:p}`x`; $1/(n + 1)$; [a](b2.md)."
    assert typed_numbers(clean) == []
