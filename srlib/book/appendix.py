"""The pages every build writes from what was actually run: the reproducibility appendix
(the commit, the versions of the packages that matter, the machine, each chapter's
parameters as papermill injected them and its execution time, the cache's size) and the
landing page's headline (what the cells tagged ``headline`` printed or glued as the chapter's
answer)."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import platform
import subprocess
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

import pandas as pd

from srlib.book.digests import collect, lock_verdict
from srlib.book.download import csv_link
from srlib.costs import read_costs
from srlib.models import numerics
from srlib.models.cpu import bf16_units
from srlib.store import write_json

PACKAGES = (
    "srlib",
    "torch",
    "transformers",
    "tokenizers",
    "numpy",
    "pandas",
    "scikit-learn",
    "scipy",
    "libcst",
    "datasketch",
    "detect-secrets",
    "seaborn",
    "papermill",
    "jupyter-book",
)


def _commit(root: Path) -> str:
    """The checked-out commit, marked when the working tree has changes."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git checkout)"
    return head + (" (with uncommitted changes)" if dirty else "")


def _version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def _machine() -> list[tuple[str, str]]:
    """Cores, memory, processor and GPU of this machine."""
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    try:
        import torch

        gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none"
        kernels = torch.backends.cpu.get_cpu_capability()
    except ImportError:
        gpu = kernels = "unknown (torch not installed)"
    return [
        ("system", f"{platform.system()} {platform.release()} ({platform.machine()})"),
        ("Python", platform.python_version()),
        ("CPU cores", str(os.cpu_count())),
        ("memory", f"{memory:.1f} GiB"),
        ("GPU", gpu),
        ("CPU bf16 units (bfloat16 training)", bf16_units()),
        ("torch CPU kernels", kernels),
        ("numerics", numerics.said()),
        *((f"pinned {k}", v) for k, v in numerics.state().items() if k in numerics.PINNED),
    ]


def _size(folder: Path) -> str:
    total = (
        sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) if folder.exists() else 0
    )
    return f"{total / 2**20:,.1f} MiB"


STAGES = {
    "corpus": "corpus: read and decontaminated",
    "variants": "variants: made and executed",
    "models": "training: base and reference models",
    "runs": "training: continued pre-training (leaks, controls)",
    "model calls: logprobs/f32": "scoring: token log-probabilities",
    "model calls: generate": "generation (black-box detectors)",
    "tables": "detection tables (beside their model calls)",
    "plugin-scores": "plug-in scores (beside their model calls)",
}
"""The ledgers' stages as the appendix names them (others, such as a study's detectors, as
they are)."""
STUDIES = {"real-model": "real model"}
"""Cache folders whose stages are named apart, prefixed with the study's name: what the
real-model chapter made (``srlib.realmodel``: the audit, its scores, the leaked runs)."""


def _stage(stage: str, made: str) -> str:
    """A ledger line's stage as the appendix names it (``STAGES``, ``STUDIES``)."""
    named = STAGES.get(stage, stage)
    study = STUDIES.get(made.split("/", 1)[0])
    return f"{study} — {named}" if study else named


def _started(executed: list[Path]) -> str:
    """When the earliest chapter on the page started executing, as the ledgers write times."""
    starts = []
    for path in executed:
        meta = json.loads(path.read_text(encoding="utf-8"))["metadata"].get("papermill", {})
        with contextlib.suppress(TypeError, ValueError):
            moment = datetime.fromisoformat(meta.get("start_time"))
            starts.append(moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"))
    return min(starts, default="")


def _costs(cache: Path, since: str) -> list[str]:
    """What the chapters on the page spent making what the cache holds (ledger lines written
    since ``since``), by stage, most CPU first; what earlier builds made is only counted."""
    rows = pd.DataFrame(read_costs(cache) if cache.exists() else [])
    head = ["### Where the minutes went", ""]
    if rows.empty:
        return [*head, "Nothing in the cache recorded what making it cost.", ""]
    mine = rows.finished.fillna("") >= since
    earlier = "" if mine.all() else (
        f" {int((~mine).sum())} things made earlier ({rows.cpu_s[~mine].sum() / 60:,.1f} "
        "CPU-minutes when they were made) were reused."
    )  # fmt: skip
    table = (
        rows[mine]
        .assign(
            stage=[_stage(a, b) for a, b in zip(rows[mine].stage, rows[mine].made, strict=True)]
        )
        .groupby("stage")
        .agg(entries=("made", "size"), cpu=("cpu_s", "sum"), wall=("wall_s", "sum"))
        .sort_values("cpu", ascending=False)
    )
    total = table.cpu.sum()
    if table.empty or total <= 0:
        return [*head, f"This build made nothing the ledgers record.{earlier}", ""]
    out = [
        *head,
        f"Making what this build made took {total / 60:,.1f} CPU-minutes, by stage: each "
        "thing's own work, what it needed made inside it counted in that thing's row; an "
        f"entry is one artifact, or one set of model calls.{earlier}",
        "",
        "| stage | entries | CPU min | wall min | share of CPU |",
        "|---|---:|---:|---:|---:|",
    ]
    out += [
        f"| {stage} | {r.entries} | {r.cpu / 60:,.1f} | {r.wall / 60:,.1f} | {r.cpu / total:.0%} |"
        for stage, r in table.iterrows()
    ]
    return [*out, ""]


def _chapters(executed: list[Path]) -> list[str]:
    """One section per executed chapter: its run time and the parameters it ran with."""
    out = []
    for path in executed:
        meta = json.loads(path.read_text(encoding="utf-8"))["metadata"].get("papermill", {})
        params = meta.get("parameters") or {}
        duration = meta.get("duration")
        took = f"{duration / 60:.1f} min" if isinstance(duration, int | float) else "unknown"
        out += [
            f"### {path.stem}",
            "",
            f"Executed {meta.get('end_time', '?')[:19]}, in {took}.",
            "",
        ]
        if params:
            out += ["| parameter | value |", "|---|---|"]
            out += [f"| `{k}` | `{json.dumps(v)}` |" for k, v in params.items()]
        else:
            out += ["Its defaults (no parameter injected)."]
        out.append("")
    return out


def _kind(executed: list[Path]) -> str | None:
    """ "quick" or "full", as the runner stamped every chapter; None where they were run in
    both kinds (a folder that ``--only`` runs filled over time)."""
    kinds = {
        bool(json.loads(path.read_text(encoding="utf-8"))["metadata"].get("srlib", {}).get("quick"))
        for path in executed
    }
    return None if len(kinds) > 1 else "quick" if kinds == {True} else "full"


def _digests(root: Path, executed: list[Path]) -> list[str]:
    """The digests the chapters published, as a table (and ``book/digests.json`` to compare
    with another build), with a warning when the corpus differs from the lock's."""
    rows = collect(executed)
    write_json(root / "book" / "digests.json", rows)
    out = [
        "## Digests",
        "",
        "Compare another build with `srlib book --compare OTHER_BUILD` (its folder or its",
        "`digests.json`, or the `digests.csv` offered below): it prints where the two part, first",
        "difference first.",
        "",
    ]
    differs = [r for r in rows if r["what"] == "corpus" and r["note"].startswith("differs")]
    if differs:
        out += [
            "```{warning}",
            "The training corpus differs from the lock's "
            "(`--allow-corpus-change`): the models and numbers are not the locked book's.",
            "```",
            "",
        ]
    if not rows:
        return out + ["No chapter that publishes digests has run.", ""]
    out += [lock_verdict(rows, _kind(executed)), ""]
    out += ["| what | name | digest | note | chapter |", "|---|---|---|---|---|"]
    out += [
        f"| {r['what']} | {r['name']} | `{r['digest'][:16]}` | {r['note']} | {r['chapter']} |"
        for r in rows
    ]
    return [*out, "", csv_link(pd.DataFrame(rows), "digests", index=False), ""]


def write_appendix(root: Path, executed: list[Path], cache: Path) -> Path:
    """Write ``book/appendix.md`` (and ``book/digests.json``) for the chapters in
    ``executed``; its path."""
    lines = [
        "# Appendix: how this book was built",
        "",
        "Written by the build from what was run; nothing on this page is typed by hand.",
        "",
        f"**Commit**: `{_commit(root)}`",
        "",
        "## Machine",
        "",
        "| | |",
        "|---|---|",
        *[f"| {k} | {v} |" for k, v in _machine()],
        "",
        "## Packages",
        "",
        "| package | version |",
        "|---|---|",
        *[f"| {name} | {_version(name)} |" for name in PACKAGES],
        "",
        f"## Cache\n\n`{cache.name}/` holds {_size(cache)} of trained models, runs and scores.",
        "",
        *_costs(cache, _started(executed)),
        *_digests(root, executed),
        "## Chapters as run",
        "",
        *_chapters(executed),
    ]
    path = root / "book" / "appendix.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def _markdown(text: str) -> str:
    """A printed sentence as literal Markdown text (its ``*``, ``_``, backticks and brackets
    are not markup)."""
    for char in "\\`*_[]<>":
        text = text.replace(char, "\\" + char)
    return text


def _glued_answer(outputs: list[dict]) -> str | None:
    """The chapter's answer a cell glued (``srlib.book.answer.glue_answer``: MyST-NB's
    ``glue`` under ``answer.KEY``, as Markdown), or None."""
    from srlib.book.answer import KEY

    for o in outputs:
        if o.get("metadata", {}).get("scrapbook", {}).get("name") == KEY:
            data = o.get("data", {})
            text = next((v for k, v in data.items() if k.endswith("text/markdown")), None)
            if text:
                return "".join(text).strip()
    return None


def write_headline(root: Path, executed: list[Path]) -> Path:
    """Write ``book/headline.md``: what the cells tagged ``headline`` printed, chapter by
    chapter, as prose (the first line a paragraph, each further one a bullet) — or, for a
    tagged cell that prints nothing, the answer it glued (``_glued_answer``), as a paragraph —
    each paragraph naming its chapter, and the figures they drew (written beside it as
    ``headline-<chapter>-<k>.png``), or a line saying which chapter provides it when none has
    run."""
    book = root / "book"
    for old in book.glob("headline-*.png"):
        old.unlink()
    parts = []
    for path in executed:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        tagged = [c for c in cells if "headline" in c.get("metadata", {}).get("tags", [])]
        figures = []
        for k, cell in enumerate(tagged):
            outputs = cell.get("outputs", [])
            text = "".join(
                "".join(o.get("text", ""))
                for o in outputs
                if o.get("output_type") == "stream" and o.get("name") == "stdout"
            )
            lines = [line.strip() for line in text.splitlines() if line.strip()]
            glued = _glued_answer(outputs)
            if not lines and glued:  # the cell's answer, already Markdown: not escaped
                parts += [f"{glued} (from {{doc}}`_executed/{path.stem}`)", ""]
            if lines:
                lead, rest = lines[0], lines[1:]
                parts += [f"{_markdown(lead)} (from {{doc}}`_executed/{path.stem}`)", ""]
                parts += [f"- {_markdown(line)}" for line in rest] + [""]
            for o in outputs:
                png = o.get("data", {}).get("image/png")
                if png:
                    name = f"headline-{path.stem}-{k}.png"
                    (book / name).write_bytes(base64.b64decode("".join(png)))
                    myst = cell["metadata"].get("mystnb", {})
                    alt = myst.get("image", {}).get("alt", "A figure of the headline result.")
                    caption = myst.get("figure", {}).get("caption", "")
                    figures += [f"```{{figure}} {name}", f":alt: {alt}", "", caption, "```", ""]
        parts += figures  # after the chapter's sentences
    if not parts:
        parts = ["The detection chapter computes it when the book is built."]
    path = book / "headline.md"
    path.write_text("\n".join(parts) + "\n", encoding="utf-8")
    return path
