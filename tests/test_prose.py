"""The prose types no measured number or setting — in digits or in words ("three seeds"):
numbers come from the configuration or the results, glued or printed by a cell, and a page
that cannot render them links to the docstring or the table that holds them. Checked: every
chapter's markdown, the sentences its code cells print, the book's own pages, the README and
``docs/``. Allowed: what a citation reports (in its sentence), the statistical conventions
the book states in words, a dated record (a sentence naming the commit it was measured on),
counts that are the design itself (``STRUCTURE``, each with its reason), and numbers inside
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
NAMES = re.compile(
    r"\b(F1|SHA-256|UTF-8|all-MiniLM\S*|Qwen[\w.-]*|SmolLM2[\w.-]*|smollm2[\w.-]*|AVX-?512|AVX2|2-core|x86-64|"
    r"CC BY \d\.\d|"
    r"HTTP \d{3}|exits? \d|exit status \d|[\w.-]+#\d+|StarCoder2-\d+B)"  # names, codes, issues
)
ALLOWED = re.compile(r"95% (interval|confidence)|\[95% interval\]|bootstrap 95%|80% power")
NUMBER = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?%?")


WORD = re.compile(
    r"\b(?:two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|"
    r"fifty|hundred|thousand|dozen|twice|thrice)\b",
    re.I,
)
STRUCTURE = re.compile(
    "|".join(
        [
            r"two (?:questions|studies|parts|commands|families)\b",  # the book's design
            r"two(?:-| )sided|two halves|two folds",  # a test's sides; cross-fitting's halves
            r"(?:the|these|two) two (?:runs|builds|machines|tables)|two builds|two machines",
            r"two (?:things|contexts|detectors|have|side by side|no longer|flag)",  # a pair
            r"two(?=[,:])|twice(?=[,:])|(?:registers|joins the registry) twice",
            r"three (?:transformations|kinds)|all three",  # τf, τv and τt: the paper's design
            r"three (?:asserts|lines)",  # MBPP's records; the plug-in example as printed
            r"twice in one",  # an exact copy: the same context met a second time
            r"two layers are|two rooms|three controls|three references|two no-training",
        ]
    ),
    re.I,
)
LIST_MARKER = re.compile(r"^\s*\d+\.[ \t]+", re.M)  # a numbered list's markers, on whole lines
COMMIT = re.compile(r"`[0-9a-f]{7,40}`")  # a dated record: measured on this commit


def typed_numbers(markdown: str) -> list[tuple[str, str]]:
    """(number, sentence) for each number typed in prose, in digits or in words (exercises,
    which ask, are not claims); a sentence that cites (``{cite:…}``) may report the cited
    work's, and one that names a commit records what was measured on it."""
    text = LIST_MARKER.sub(" ", COMMIT.sub(" {dated} ", _prose(markdown)))
    for pattern in CODE:
        text = pattern.sub(" ", text)
    found = []
    for sentence in re.split(r"(?<=[.;:])\s+|\n\n", text):
        if "{cite" in sentence or "{dated}" in sentence:
            continue
        bare = sentence
        for pattern in NOT_PROSE:
            bare = pattern.sub(" ", bare)
        bare = ALLOWED.sub(" ", NAMES.sub(" ", STRUCTURE.sub(" ", bare)))
        said = " ".join(sentence.split())
        found += [(m.group(0), said) for m in (*NUMBER.finditer(bare), *WORD.finditer(bare))]
    return found


def _typed_in(notebook: Path, cell_type: str) -> list[tuple[str, str]]:
    """What ``typed_numbers`` finds in a notebook's markdown cells, or in the sentences its
    code cells print (``printed_strings``)."""
    cells = [c for c in nbformat.read(notebook, as_version=4).cells if c.cell_type == cell_type]
    texts = [
        t for c in cells for t in (printed_strings(c.source) if cell_type == "code" else [c.source])
    ]
    return [found for text in texts for found in typed_numbers(text)]


@pytest.mark.parametrize("cell_type", ["markdown", "code"])
@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.name)
def test_no_cell_types_or_prints_a_measured_number_or_a_setting(notebook, cell_type):
    typed = _typed_in(notebook, cell_type)
    assert not typed, f"typed in {cell_type} (render it from the config or the results):\n" + (
        "\n".join(f"{n!r} in: {s[:160]}" for n, s in typed)
    )


GENERATED = {"appendix.md", "headline.md"}  # srlib.book.appendix writes them from the results
JOURNAL = {"measured-builds.md"}  # a dated log: every entry names the commit it measured
PAGES = [
    *(p for p in sorted((ROOT / "book").glob("*.md")) if p.name not in GENERATED),
    ROOT / "README.md",
    *(p for p in sorted((ROOT / "docs").rglob("*.md")) if p.name not in JOURNAL),
]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_page_types_a_measured_number_or_a_setting(page):
    typed = typed_numbers(page.read_text())
    assert not typed, "typed in prose (link to the docstring or table that holds it):\n" + (
        "\n".join(f"{n!r} in: {s[:160]}" for n, s in typed)
    )


def printed_strings(source: str) -> list[str]:
    """The literal text of every string a code cell prints or glues (an f-string's
    replacement fields are computed, so only its literal parts), one string per call."""
    import ast

    try:
        tree = ast.parse(source)
    except SyntaxError:  # a cell magic: no Python to read
        return []
    out = []
    for node in ast.walk(tree):
        func = node.func if isinstance(node, ast.Call) else None
        name = getattr(func, "id", getattr(func, "attr", ""))
        if name in ("print", "glue", "glue_answer", "Markdown"):
            specs = {
                id(c)
                for arg in node.args
                for f in ast.walk(arg)
                if isinstance(f, ast.FormattedValue) and f.format_spec
                for c in ast.walk(f.format_spec)
            }  # ``{x:>10}``: a format, not printed text
            out += [
                "".join(
                    part.value
                    for part in ast.walk(arg)
                    if isinstance(part, ast.Constant)
                    and isinstance(part.value, str)
                    and id(part) not in specs
                )
                for arg in node.args
            ]
    return out


def test_the_check_finds_numbers_in_words_and_in_printed_sentences():
    assert [n for n, _ in typed_numbers("The book trains three seeds on two cores.")] == [
        "three",
        "two",
    ]
    assert typed_numbers("It asks two questions; a two-sided test, on two halves.") == []
    said = printed_strings('print(f"{k:>10} seeds of 12 problems", sep="")\nx = "7 cores"')
    assert said == [" seeds of 12 problems"] and typed_numbers(said[0])[0][0] == "12"
    assert typed_numbers("It took 53 min on `39652fe`.") == []
    assert typed_numbers("1. First step.\n2. Then the corpus has\n2498.") == [
        ("2498", "Then the corpus has 2498.")
    ]


def test_the_check_finds_a_typed_number_and_passes_names_code_and_citations():
    assert [n for n, _ in typed_numbers("The chapter took about 34 minutes.")] == ["34"]
    assert [n for n, _ in typed_numbers("A 38-repository corpus; F1 with a 95% interval.")] == [
        "38"
    ]
    clean = "Set `fpr = 0.01`; the paper found 69.3% {cite:p}`x`; $1/(n + 1)$; [a](b2.md)."
    assert typed_numbers(clean) == []
