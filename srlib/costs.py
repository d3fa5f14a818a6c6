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
) -> Iterator[None]:
    """Append to ``root/costs.jsonl`` the wall and CPU seconds (its ended worker processes
    included) this process spent making ``made`` (a path under ``root``) — from ``since``
    (``clocks()`` when the work began) or the block's start to its end, less what was
    recorded inside that span — once the block succeeds: where a build's minutes went, read
    back by ``read_costs``. Timing only: nothing computed reads it."""
    start = since or clocks()
    yield
    end = clocks()
    inner, reach = [0.0, 0.0], start[0]
    for w0, w1, c0, c1 in sorted(s for s in _SPANS if s[0] >= start[0] and s[1] <= end[0]):
        if w0 >= reach:  # the outermost spans inside only
            inner, reach = [inner[0] + w1 - w0, inner[1] + c1 - c0], w1
    _SPANS.append((start[0], end[0], start[1], end[1]))
    line = {
        "made": Path(made).relative_to(root).as_posix(),
        "stage": stage,
        "cpu_s": round(end[1] - start[1] - inner[1], 2),
        "wall_s": round(end[0] - start[0] - inner[0], 2),
        "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    with (Path(root) / COSTS).open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(line) + "\n")


def read_costs(root: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The cost lines of every ledger under ``root`` whose thing is still there (the last line
    of each, so a thing made again counts once; ``path#part`` names a part of a file, such
    as a batch of model calls in the score cache), ``made`` relative to ``root``."""
    out: dict[str, dict[str, Any]] = {}
    for ledger in sorted(Path(root).rglob(COSTS)):
        for text in ledger.read_text(encoding="utf-8").splitlines():
            try:
                line = json.loads(text)
                made = (ledger.parent / line["made"]).relative_to(root).as_posix()
            except (ValueError, KeyError, TypeError):
                continue  # a line cut short by an interrupted write
            if (Path(root) / made.split("#")[0]).exists():
                out[made] = line | {"made": made}
    return list(out.values())
