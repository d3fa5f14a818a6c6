"""The one table of detectors: each detector's name (its one spelling), family, the score it
reads, the reference model it needs, whether it decides without a threshold, and whether an
auditor can deploy it. Tables, figures, contrasts and verdicts read it; nothing else decides
what a detector is.

Families (``FAMILIES``):

- **self-referential** — SrDetection's rule on some score: the original against its own
  variants; no threshold, no reference data (Min-K%, Min-K%++, Zlib: the same rule on
  those scores).
- **needs a reference model** — anything that reads another model's scores: the reference
  ratio, and the SR rules contrasted with a reference. With the exact pre-leak checkpoint
  (``base``) no auditor can run them; with an unrelated model they answer another question
  (is this model more familiar than that one?). Never counted as deployable.
- **threshold baseline** — an oriented score that needs a threshold (PPL, Min-K% Prob,
  Min-K%++, Zlib ratio, NGO, n-gram accuracy).
- **trivial reference** — what any detector must beat: flag everything, and the blind
  text-only classifier that sees no model.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from srlib.errors import InputError

FAMILIES = (
    "self-referential",
    "needs a reference model",
    "threshold baseline",
    "trivial reference",
)


class UnknownDetector(KeyError):
    """A detector name that is not in the registry; the message lists the known ones."""


@dataclass(frozen=True)
class Detector:
    """One detector, as every table and verdict reads it."""

    name: str  # the one spelling, in every table, figure and sentence
    family: str  # one of ``FAMILIES``
    score: str  # the per-sample column (or per-variant list column) it reads
    setting: str  # "gray" (log-probs), "black" (generations) or "none" (no model)
    reference: str | None = None  # "base" (the pre-leak model) or "unrelated"; None: none
    threshold_free: bool = False  # decides by itself (SR rules); else needs a threshold
    deployable: bool = True  # can an auditor without the pre-leak model run it?
    cite: str = ""  # where it is defined


def _sr(name: str, score: str, setting: str = "gray", reference: str | None = None) -> Detector:
    family = "needs a reference model" if reference else "self-referential"
    return Detector(
        name,
        family,
        score,
        setting,
        reference,
        threshold_free=True,
        deployable=not reference,
        cite="li2026srdetection",
    )


def _baseline(name: str, score: str, setting: str = "gray", cite: str = "") -> Detector:
    return Detector(name, "threshold baseline", score, setting, cite=cite)


_BUILT_IN = [
    _sr("SR gray", "gray_scores"),
    _sr("SR black", "black_scores", setting="black"),
    _sr("SR Min-K%", "min_k_scores"),
    _sr("SR Min-K%++", "min_k_pp_scores"),
    _sr("SR Zlib", "zlib_scores"),
    _sr("SR gray vs base", "gray_scores", reference="base"),
    _sr("SR Min-K% vs base", "min_k_scores", reference="base"),
    _sr("SR Min-K%++ vs base", "min_k_pp_scores", reference="base"),
    _sr("SR Zlib vs base", "zlib_scores", reference="base"),
    _sr("SR gray vs unrelated", "gray_scores", reference="unrelated"),
    _baseline("PPL", "score_ppl", cite="carlini2021extracting"),
    _baseline("Min-K%", "score_min_k", cite="shi2024detecting"),
    _baseline("Min-K%++", "score_min_k_pp", cite="zhang2025minkpp"),
    _baseline("Zlib", "score_zlib", cite="carlini2021extracting"),
    _baseline("NGO", "score_ngo", setting="black", cite="li2026srdetection"),
    _baseline("n-gram acc", "score_ngram_acc", setting="black", cite="xu2024benchmarking"),
    Detector("Ref (base)", "needs a reference model", "score_ref", "gray", "base", False, False),
    Detector("Blind (text only)", "trivial reference", "score_blind", "none", cite="das2025blind"),
    Detector("flag everything", "trivial reference", "", "none", threshold_free=True),
]

DETECTORS: dict[str, Detector] = {}
"""Name → detector, in the order tables list them: built from ``register``, the built-ins
first (``plugins`` registers a user's detector the same way)."""


class DetectorCollision(InputError):
    """A detector registered under a name another detector already has."""


def register(entry: Detector) -> Detector:
    """Add ``entry`` to the registry (every table, contrast and verdict reads it from then on);
    a name already taken by another detector, or a family outside ``FAMILIES``, is an error
    naming it (the same entry again, as a notebook cell run twice makes, is no change)."""
    if DETECTORS.get(entry.name) == entry:
        return entry
    if entry.name in DETECTORS:
        taken = DETECTORS[entry.name].family
        raise DetectorCollision(
            f"a detector named {entry.name!r} is already registered ({taken}); "
            "give yours another name"
        )
    if entry.family not in FAMILIES:
        raise InputError(f"{entry.name!r}: unknown family {entry.family!r}; choose from {FAMILIES}")
    DETECTORS[entry.name] = entry
    return entry


for _entry in _BUILT_IN:
    register(_entry)


def detector(name: str) -> Detector:
    """The registry's entry for ``name``; an unknown name lists the known ones."""
    if name not in DETECTORS:
        raise UnknownDetector(f"unknown detector {name!r}; known: {', '.join(DETECTORS)}")
    return DETECTORS[name]


def family(name: str) -> str:
    """The family of detector ``name``."""
    return detector(name).family


def names(
    family: str | None = None, deployable: bool | None = None, threshold_free: bool | None = None
) -> list[str]:
    """Detector names, in registry order, with the given properties."""
    return [
        d.name
        for d in DETECTORS.values()
        if (family is None or d.family == family)
        and (deployable is None or d.deployable == deployable)
        and (threshold_free is None or d.threshold_free == threshold_free)
    ]


def table() -> pd.DataFrame:
    """The registry as a table (what the book shows readers)."""
    return pd.DataFrame([d.__dict__ for d in DETECTORS.values()]).set_index("name")


def annotate(frame: pd.DataFrame, column: str = "detector") -> pd.DataFrame:
    """``frame`` with each detector's ``family`` and ``deployable`` from the registry (an
    unknown name is an error, so no table can carry a misspelt detector)."""
    entries = [detector(n) for n in frame[column]]
    return frame.assign(
        family=[d.family for d in entries], deployable=[d.deployable for d in entries]
    )
