"""Byte-exact text surgery: a sample's code as one module, and span edits mapped back to fields."""

from __future__ import annotations

from dataclasses import dataclass

from srlib.codetext import NEWLINE, line_starts
from srlib.samples import Sample


@dataclass(frozen=True)
class Edit:
    """Replace ``text[start:end]`` of one field with ``new``."""

    field: str
    start: int
    end: int
    new: str


@dataclass
class Module:
    """The sample's code fields joined into one parseable module, with each field's span."""

    text: str
    spans: dict[str, tuple[int, int]]
    line_starts: list[int]
    shifts: list[int] | None = None  # per line: columns added by expand_indentation()

    @classmethod
    def of(cls, sample: Sample) -> Module:
        """Join prompt (when code), solution, setup and tests as ``program()`` would run them."""
        fields = ["prompt", "solution"] if sample.format == "completion" else ["solution"]
        if sample.format != "stdio":
            fields += ["setup", "tests"]
        text, spans = "", {}
        for name in fields:
            value = getattr(sample, name)
            if not value:
                continue
            glue_to_prompt = name == "solution" and sample.format == "completion"
            if text and not text.endswith(("\n", "\r")) and not glue_to_prompt:
                text += "\n"
            spans[name] = (len(text), len(text) + len(value))
            text += value
        return cls(text, spans, line_starts(text))

    def offset(self, line: int, column: int) -> int:
        """Offset of a 1-based line and 0-based column (as libcst reports positions)."""
        shift = self.shifts[line - 1] if self.shifts else 0
        return self.line_starts[line - 1] + column - shift

    def expand_indentation(self) -> str:
        """The text with tabs in indentation expanded (libcst rejects mixed tabs and spaces,
        Python does not); ``offset`` then maps positions in it back to ``text``."""
        lines, shifts = [], []
        for line in NEWLINE.split(self.text):
            indent = line[: len(line) - len(line.lstrip(" \t"))]
            lines.append(indent.expandtabs(8) + line[len(indent) :])
            shifts.append(len(lines[-1]) - len(line))
        self.shifts = shifts
        seps = NEWLINE.findall(self.text) + [""]
        return "".join(line + sep for line, sep in zip(lines, seps, strict=True))

    def locate(self, offset: int, length: int) -> tuple[str, int] | None:
        """The field holding ``[offset, offset + length)`` and the offset within it."""
        for name, (start, end) in self.spans.items():
            if start <= offset and offset + length <= end:
                return name, offset - start
        return None


def apply_edits(sample: Sample, edits: list[Edit]) -> dict[str, str]:
    """New values of the edited fields; overlapping edits are a ``ValueError``."""
    by_field: dict[str, list[Edit]] = {}
    for e in edits:
        by_field.setdefault(e.field, []).append(e)
    out = {}
    for name, field_edits in by_field.items():
        text = getattr(sample, name)
        pieces, pos = [], 0
        for e in sorted(field_edits, key=lambda e: (e.start, e.end)):
            if e.start < pos:
                raise ValueError(f"{sample.id}: overlapping edits in {name} at {e.start}")
            pieces += [text[pos : e.start], e.new]
            pos = e.end
        out[name] = "".join(pieces) + text[pos:]
    return out
