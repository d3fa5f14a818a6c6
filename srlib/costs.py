"""What making each cached thing cost, kept beside it: a ledger (``costs.jsonl``) per folder
of cached things, one line per thing made — its wall and CPU seconds, ended worker processes
included, less what was recorded inside its span. Timing only: nothing computed reads it,
and no key includes it. ``srlib.store`` costs every artifact from the miss where its making
began; the score cache costs each batch of model calls; the appendix sums what a cache holds
by stage."""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

COSTS = "costs.jsonl"  # each folder's ledger

MISSED: dict[Path, tuple[float, float]] = {}  # artifact folder → clocks when found missing
_SPANS: list[tuple[float, float, float, float]] = []  # (wall0, wall1, cpu0, cpu1) recorded here


def clocks() -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process and of its children that have ended)."""
    t = os.times()
    return time.perf_counter(), t.user + t.system + t.children_user + t.children_system


@contextlib.contextmanager
def costed(
    root: str | os.PathLike[str],
    made: str | os.PathLike[str],
    stage: str,
    since: tuple[float, float] | None = None,
    part: str = "",
) -> Iterator[None]:
    """Record in ``root/costs.jsonl``, once the block succeeds, what making ``made`` (a path
    under ``root``; ``part``: which part of that file) cost this process from ``since`` (the
    ``clocks()`` where the work began) or the block's start: wall and CPU seconds, ended
    child processes included, less the spans recorded inside it (each has a line of its own).
    Timing only: a ledger that cannot be written loses the line, never the work."""
    relative = Path(made).relative_to(root).as_posix()  # a path outside root fails up front
    start = since or clocks()
    yield
    end = clocks()
    inside = [s for s in _SPANS if s[0] >= start[0] and s[1] <= end[0]]
    inner, reach = [0.0, 0.0], start[0]
    for w0, w1, c0, c1 in sorted(inside):
        if w0 >= reach:  # the outermost spans inside only
            inner, reach = [inner[0] + w1 - w0, inner[1] + c1 - c0], w1
    _SPANS[:] = [s for s in _SPANS if s not in inside] + [(start[0], end[0], start[1], end[1])]
    line = {
        "made": relative,
        "part": part,
        "stage": stage,
        "cpu_s": round(end[1] - start[1] - inner[1], 2),
        "wall_s": round(end[0] - start[0] - inner[0], 2),
        "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    with contextlib.suppress(OSError), (Path(root) / COSTS).open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(line) + "\n")


def read_costs(root: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The lines of every ledger under ``root`` whose thing is still there, the last one per
    thing (made again, it counts once), ``made`` relative to ``root``: what ``costed`` wrote."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for ledger in sorted(Path(root).rglob(COSTS)):
        for text in ledger.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                line = json.loads(text)
                made = (ledger.parent / line["made"]).relative_to(root).as_posix()
                ok = isinstance(line["stage"], str) and isinstance(line.get("part", ""), str)
                ok = ok and all(isinstance(line[k], int | float) for k in ("cpu_s", "wall_s"))
            except (ValueError, KeyError, TypeError):
                continue  # a line cut short by an interrupted write, or not one of ours
            if ok and (Path(root) / made).exists():
                out[made, line.get("part", "")] = line | {"made": made}
    return list(out.values())
