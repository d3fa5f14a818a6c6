"""What a contrast compares (``contrasts``): an arm — a detector, or the best of several, at a
threshold mode — and a contrast of two arms on one metric, each checked when declared so that
a misdeclared comparison fails before any score is read."""

from __future__ import annotations

from dataclasses import dataclass

from srlib.detection.registry import detector

MODES = ("none", "calibrated", "matched", "null", "heldout", "oracle", "scores")
MATCHED = ("matched", "null", "heldout")  # modes matched to a threshold-free rule's rate
POOLS = ("best", "mean")
ROLES = ("discrimination", "transport", "deployable", "plug-in", "paper", "secondary")
METRICS = {"mcc": "mcc", "f1": "f1", "tpr": "recall", "auc": "roc_auc"}


@dataclass(frozen=True)
class Arm:
    """One side of a contrast: a detector (or the best, or the mean, of several) at a threshold
    mode (``operating``); ``matched_to`` names the threshold-free rule whose flag rate a
    ``matched`` arm (on the calibration split), a ``null`` arm (on the null controls'
    evaluated problems, cross-fitted) or a ``heldout`` arm (on the leaked model's held-out
    half, cross-fitted) is matched to; ``fpr`` sets a calibrated arm's own rate (default:
    the table's), or, for a ``heldout`` arm matched to no rule, the share of the leaked
    model's held-out half it flags (cross-fitted: a true-positive rate at that
    false-positive rate, a rule's margin or a score read alike); ``scores`` ranks by the
    score itself (a self-referential rule's margin), for ranking metrics. An arm of several
    detectors is the best of them (``pool`` "best", chosen in every resample) or their mean
    ("mean": the paper's average over baselines)."""

    detectors: tuple[str, ...]
    threshold: str = "none"
    matched_to: str | None = None
    fpr: float | None = None
    pool: str = "best"

    def __post_init__(self) -> None:
        if self.threshold not in MODES:
            raise ValueError(f"threshold mode must be one of {MODES}, got {self.threshold!r}")
        if not self.detectors:
            raise ValueError("an arm needs at least one detector")
        if self.pool not in POOLS:
            raise ValueError(f"an arm pools its detectors by one of {POOLS}, got {self.pool!r}")
        at_rate = self.threshold == "heldout" and self.fpr is not None
        if (self.threshold in MATCHED and not at_rate) != (self.matched_to is not None):
            raise ValueError(
                "a matched arm names the rule it is matched to (or, held-out, its own fpr), "
                "and only it does"
            )
        if self.matched_to is not None and not detector(self.matched_to).threshold_free:
            raise ValueError(f"{self.matched_to!r} has a threshold: nothing to match it to")
        if self.fpr is not None and (
            self.threshold not in ("calibrated", "heldout") or not 0 < self.fpr < 1
        ):
            raise ValueError(
                f"an own fpr (got {self.fpr}) is a calibrated or held-out arm's, in (0, 1)"
            )
        for name in self.detectors:
            entry = detector(name)  # an unknown name lists the known ones
            free_ok = ("none", "scores", "calibrated")  # a rule's margin may be calibrated
            free_ok += ("heldout",) if at_rate else ()  # or set on the held-out half
            thresholded_ok = ("calibrated", *MATCHED, "oracle", "scores")
            if self.threshold not in (free_ok if entry.threshold_free else thresholded_ok):
                raise ValueError(
                    f"{name!r} is {'threshold-free' if entry.threshold_free else 'thresholded'}"
                    f": it cannot run at threshold mode {self.threshold!r}"
                )

    @property
    def label(self) -> str:
        """How tables name the arm."""
        who = (
            self.detectors[0]
            if len(self.detectors) == 1
            else f"{self.pool} of {len(self.detectors)}"
        )
        if self.threshold == "matched":
            return f"{who} (at {self.matched_to}'s calibration rate)"
        if self.threshold == "null":
            return f"{who} (at {self.matched_to}'s null-control rate)"
        if self.threshold == "heldout" and self.matched_to is None:
            return f"{who} (at {self.fpr:.0%} of held-out)"
        if self.threshold == "heldout":
            return f"{who} (at {self.matched_to}'s held-out rate)"
        if self.fpr is not None:
            return f"{who} (calibrated, {self.fpr:.0%} FPR)"
        return who if self.threshold in ("none", "scores") else f"{who} ({self.threshold})"

    @property
    def mode(self) -> str:
        """The threshold mode as the computation keys it (a matched arm with its rule)."""
        if self.threshold in MATCHED and self.matched_to is not None:
            return f"{self.threshold}:{self.matched_to}"
        return self.threshold if self.fpr is None else f"{self.threshold}@{self.fpr}"


@dataclass(frozen=True)
class Contrast:
    """A − B on ``metric``, declared before the scores are read."""

    name: str
    a: Arm
    b: Arm
    role: str = "discrimination"  # ``ROLES``: a family (``declared.FAMILIES``), "paper"
    # (the study's own gain, tested one-sided) or "secondary" (its own interval only)
    metric: str = "mcc"  # "mcc", "f1", "tpr" or "auc" (arms at mode "scores")

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"role must be one of {ROLES}, got {self.role!r}")
        if self.metric not in METRICS:
            raise ValueError(f"metric must be one of {sorted(METRICS)}, got {self.metric!r}")
        ranking = {self.a.threshold == "scores", self.b.threshold == "scores"}
        if ranking != {self.metric == "auc"}:
            raise ValueError("AUC compares arms at threshold mode 'scores', and only AUC does")
