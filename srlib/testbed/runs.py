"""What names and holds a continued-pre-training run, read back from its folder: the run
names (the leaked run at a code-to-text ratio, the null control, the exposure sweep, the
paraphrase leak) and a finished run's checkpoints, losses and exposures. Apart from the
training code (``leak``), so the reading room reads runs without importing it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

NULL = "null"
EXPOSURE = "exposure"
PARAPHRASE = "paraphrase"


def run_name(code_to_text: float) -> str:
    """The name of the leaked run at one code-to-text ratio."""
    return f"leak@{code_to_text:g}"


@dataclass(frozen=True)
class LeakRun:
    """The checkpoints of one run (after epoch 1, 2, ...), its losses and exposures."""

    checkpoints: list[Path]
    losses: list[float]
    exposures: pd.DataFrame  # one row per leaked sample and epoch: exposures, whole


def load_run(out: Path) -> LeakRun:
    """A finished run from its folder."""
    meta = json.loads((out / "run.json").read_text())
    exposures = pd.DataFrame(meta["exposures"], columns=["id", "epoch", "copies", "whole"])
    exposures = exposures.astype({"id": str, "epoch": int, "copies": int, "whole": int})
    exposures["exposures"] = exposures.groupby("id").copies.cumsum()
    exposures["whole_exposures"] = exposures.groupby("id").whole.cumsum()
    checkpoints = [out / f"epoch-{k}" for k in range(1, meta["epochs"] + 1)]
    return LeakRun(checkpoints, meta["losses"], exposures)
