"""Optional LLM rewriter: a language model proposes variants the way the SrDetection paper does.

The model sees the sample's code (or tests) and an instruction; its answer is never trusted:

- **renames** (``function``, ``variable``): the answer must align with the original word for
  word, every difference an identifier, consistently renamed, into a name not used before.
  The renames it proposes must be ones the scope analysis can carry out; they are then
  applied by the same byte-exact machinery as the deterministic transformation (so call
  sites in the tests follow), and audited with ``rename_problems``.
- **tests** (``test``): the answer may change only number and string literals of the tests,
  token for token, with the same layout; it must still pass with the original solution. A
  prompt that quotes the tests (MBPP) gets the new lines too, so the scored text changes.

Every accepted variant is executed in the sandbox. ``generate`` is any callable from
prompts to completions: a model backend's generation method, an OpenAI-compatible client,
or a script in tests.
"""

from __future__ import annotations

import dataclasses
import io
import re
import tokenize
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from srlib.codetext import line_starts
from srlib.samples import Sample
from srlib.transforms.edits import Edit, apply_edits
from srlib.transforms.rename import analyze
from srlib.transforms.surface import rename_problems, word_diff
from srlib.transforms.variants import VALIDATION_CPU_SECONDS, Variant, Variants, _validate

Generate = Callable[[list[str]], list[str]]
TEMPLATES = {
    "function": (
        "Rename the function `{entry_point}` (and any helper functions) to different names a "
        "programmer might have chosen. Change nothing else: keep every other character, "
        "including spaces, comments and strings. Answer with the complete code only.\n"
        "```python\n{code}\n```\n"
    ),
    "variable": (
        "Rename the parameters and local variables of this code to different names a "
        "programmer might have chosen. Do not rename functions, attributes or imports. Change "
        "nothing else. Answer with the complete code only.\n```python\n{code}\n```\n"
    ),
    "test": (
        "Write new test inputs for these tests: change only the literal arguments and the "
        "expected values (they must be what the function returns), keep the same number of "
        "tests and the same layout. Answer with the test code only.\n"
        "```python\n{tests}\n```\nThe function:\n```python\n{code}\n```\n"
    ),
}
_FENCE = re.compile(r"```(?:python|py)?\n(.*?)```", re.S)


def extract_code(answer: str) -> str:
    """The first fenced code block of a model's answer, or the whole answer."""
    m = _FENCE.search(answer)
    return m.group(1) if m else answer


@dataclass
class LLMRewriter:
    """Ask a model for variants, and keep only those that pass every check."""

    generate: Generate
    templates: dict[str, str] = field(default_factory=lambda: dict(TEMPLATES))
    attempts: int = 3  # prompts per wanted variant

    def variants(
        self, sample: Sample, n: int, kind: str = "function", validate: bool = True, **sandbox
    ) -> Variants:
        """Up to ``n`` distinct accepted variants of one ``kind``, drops recorded with reasons."""
        if kind not in self.templates:
            raise ValueError(f"no prompt template for kind {kind!r}; have {sorted(self.templates)}")
        prompts = [self._prompt(sample, kind, i) for i in range(n * self.attempts)]
        out, seen = Variants(), {sample.text}
        candidates = []
        for i, answer in enumerate(self.generate(prompts)):
            variant, why = self._candidate(sample, kind, extract_code(answer), i)
            if variant is None:
                out.dropped.append({"variant": i, "stage": "check", "reason": why})
            elif variant.text in seen:
                out.dropped.append({"variant": i, "stage": "check", "reason": "duplicate text"})
            else:
                seen.add(variant.text)
                candidates.append(variant)
        opts = {"timeout": VALIDATION_CPU_SECONDS, "workers": None, "progress": False, **sandbox}
        for variant, (ok, why) in zip(
            candidates, _validate(candidates, validate, opts), strict=True
        ):
            if not ok:
                out.dropped.append({"variant": variant.id, "stage": "validation", "reason": why})
            elif len(out) < n:
                variant.index, variant.id = len(out), f"{sample.id}#llm{len(out)}"
                out.append(variant)
        if len(out) < n:
            out.reasons.append(f"only {len(out)} of {n} model rewrites passed the checks")
        return out

    def _prompt(self, sample: Sample, kind: str, i: int) -> str:
        text = self.templates[kind].format(
            entry_point=sample.entry_point, code=sample.code, tests=sample.tests
        )
        return text + ("" if i == 0 else f"\n(Variant {i + 1}: choose differently.)\n")

    def _candidate(self, s: Sample, kind: str, code: str, i: int) -> tuple[Variant | None, str]:
        if kind == "test":
            return _test_candidate(s, code, i)
        return _rename_candidate(s, kind, code, i)


def _rename_candidate(s: Sample, kind: str, code: str, i: int) -> tuple[Variant | None, str]:
    """Turn the model's renamed code into a variant made by the byte-exact machinery."""
    diff = word_diff(s.code, code.rstrip("\n") + s.code[len(s.code.rstrip("\n")) :])
    if diff is None:
        return None, "the rewrite changed more than identifiers (not aligned word for word)"
    proposed: dict[str, str] = {}
    for old, new in diff:
        if not (old.isidentifier() and new.isidentifier()) or proposed.get(old, new) != new:
            return None, f"not a consistent rename: {old!r} -> {new!r}"
        proposed[old] = new
    if not proposed:
        return None, "the rewrite changed nothing"
    analysis = analyze(s)
    symbols = {sym.name: sym for sym in analysis.of_kind(kind)}
    unsafe = sorted(set(proposed) - set(symbols))
    if unsafe:
        return None, f"renames that are not safe {kind} renames here: {unsafe}"
    clash = sorted(n for n in proposed.values() if n in analysis.taken)
    if clash or len(set(proposed.values())) != len(proposed):
        return None, f"new names collide with existing ones: {clash}"
    edits, renames = [], []
    for old, new in proposed.items():
        sym = symbols[old]
        edits += [Edit(f, off, off + len(old), new) for f, off in sym.occurrences]
        renames.append({"kind": kind, "scope": sym.scope, "old": old, "new": new})
    fields = apply_edits(s, edits)
    variant = _variant(s, fields, (kind,), i, renames=renames)
    if variant.code != code.rstrip("\n") + s.code[len(s.code.rstrip("\n")) :]:
        return None, "the rewrite renamed only some occurrences of a name"
    problems = rename_problems(s, variant, renames)
    return (None, f"surface check: {problems[0]}") if problems else (variant, "")


def _layout(code: str) -> list[tuple[int, str, str]] | None:
    """Per token: type, text (blank for number and string literals), and the exact text
    between it and the previous token, so any change of layout or of code shows."""
    try:
        toks = list(tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None
    starts = line_starts(code, universal=False)

    def offset(pos: tuple[int, int]) -> int:
        row, col = pos
        return starts[row - 1] + col if row - 1 < len(starts) else len(code)

    out, prev = [], 0
    for t in toks:
        literal = t.type in (tokenize.NUMBER, tokenize.STRING)
        out.append((t.type, "" if literal else t.string, code[prev : offset(t.start)]))
        prev = offset(t.end)
    return out


def _test_candidate(s: Sample, tests: str, i: int) -> tuple[Variant | None, str]:
    """Accept new tests that differ from the old only in number and string literals."""
    tests = tests.rstrip("\n") + s.tests[len(s.tests.rstrip("\n")) :]
    before, after = _layout(s.tests), _layout(tests)
    if before is None or after is None or before != after:
        return None, "the rewrite changed more than literals of the tests"
    if tests == s.tests:
        return None, "the rewrite changed nothing"
    old_lines, new_lines = s.tests.splitlines(), tests.splitlines()
    replaced = [
        {"field": "tests", "old": a, "new": b}
        for a, b in zip(old_lines, new_lines, strict=True)
        if a != b
    ]
    prompt = s.prompt
    for r in replaced:  # a prompt that quotes the tests (MBPP) shows the new ones
        prompt = prompt.replace(r["old"], r["new"], 1)
    fields = {"tests": tests, "prompt": prompt}
    return _variant(s, fields, ("test",), i, replaced_tests=replaced), ""


def _variant(s: Sample, fields: dict[str, str], kinds: Sequence[str], i: int, **extra) -> Variant:
    base = {**dataclasses.asdict(s), **fields, "id": f"{s.id}#llm-attempt{i}"}
    return Variant(**base, original_id=s.id, kinds=tuple(kinds), **extra)
