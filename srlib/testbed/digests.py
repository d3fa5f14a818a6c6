"""The digests of what a testbed built, named by their role (not by cache paths), so two
builds in different folders or on different machines can be compared row by row
(``srlib.book.digests``): the kernels they were computed with, the corpus, the base and
reference models, every checkpoint of every run (each replicate's too) and every score table
computed so far."""

from __future__ import annotations

from pathlib import Path

from srlib.models import numerics
from srlib.store import folder_digest, frame_row, row
from srlib.testbed.testbed import Testbed


def checkpoint_names(tb: Testbed, replicates: dict[int, Testbed] | None = None) -> dict:
    """Checkpoint folder → its role: ``base``, ``reference``, ``<run> seed <s> epoch <k>``."""
    names = {Path(tb.reference): "reference"}
    for seed, rep in {tb.config.seed: tb, **(replicates or {})}.items():
        names.setdefault(Path(rep.base), "base" if rep is tb else f"base seed {seed}")
        for run, result in rep.runs.items():
            for k, path in enumerate(result.checkpoints, 1):
                names[Path(path)] = f"{run} seed {seed} epoch {k}"
    return names


def testbed_digests(
    tb: Testbed, replicates: dict[int, Testbed] | None = None, models: dict | None = None
) -> list[dict]:
    """Digest rows of the corpus, every model (``models``: more label → folder, such as the
    audit's zoo) and every score table the testbed and its ``replicates`` remembered."""
    check = tb.corpus.check or {}
    rows = [row("numerics", "kernels", numerics.label(), numerics.said())]
    rows.append(row("corpus", "training corpus", tb.corpus.digest(), check.get("status", "")))
    names = checkpoint_names(tb, replicates)
    for label, folder in (models or {}).items():
        names.setdefault(Path(folder), label)
    rows += [row("model", name, folder_digest(path)) for path, name in names.items()]
    for seed, rep in {tb.config.seed: tb, **(replicates or {})}.items():
        for key, table in rep.memo.items():
            if key[0] == "scores":
                _, path, n, black, own = key
                what = names.get(Path(path), Path(path).name)
                setting = "gray+black" if black else "gray"
                name = f"{what} n={n} {setting}{_mine(own)} (split seed {seed})"
                rows.append(frame_row("scores", name, table))
            elif key[0] == "calibration":
                _, path, black, own = key
                what = names.get(Path(path), Path(path).name)
                name = f"calibration {what} {'gray+black' if black else 'gray'}{_mine(own)}"
                rows.append(frame_row("scores", name, table))
    return rows


def _mine(plugins: tuple) -> str:
    """What a table's name adds for the plug-ins scored in it (nothing without any)."""
    return " + " + ", ".join(name for name, *_ in plugins) if plugins else ""
