"""The book's contrasts, declared in code: two questions, each its own confirmatory family of
the paper's comparisons, the statistic chosen for its question and its power; the paper's
gain at this book's points; everything else exploratory; and the record of when each was
fixed (``HISTORY``) with the power stated before the confirming seeds were run (``DESIGN``).

**Discrimination** — which score ranks the leaked model's leaked problems above its unseen
ones? Asked of the scores themselves, with no threshold: the AUC on the leaked model of each
SR rule's margin against the **mean** AUC of the baselines of its setting (the paper reports
its gain as an average over them). Exploratory beside it: each baseline alone, the TPR at 1%
and 5% of the leaked model's held-out half (cross-fitted, ``operating``'s ``heldout@r``), and
the MCC with the baseline flagging as many held-out problems as the rule (``heldout``).

**Threshold transport** — whose decisions hold when the threshold comes from a clean model?
The rule's decisions against the baselines' (their mean MCC), each baseline's threshold
flagging as many of the **null controls'** problems (a clean model of the same recipe) as the
rule flags of them (the ``null`` point, cross-fitted) and applied to the leaked model. The
leaked model's scores move as a whole, so a detector whose flags move less with that shift
wins here even at equal discrimination: the paper's argument for a threshold-free rule, and
a different question from the first.

Each family is Holm-adjusted on its own over its two contrasts (gray- and black-box). The
paper's gain (``PAPER_GAIN``, F1 over the mean of the baselines) is tested one-sided at this
book's two matched points, which are not the paper's own thresholds.

What was fixed when (``HISTORY``): every change was made after results had been read; the
seeds those results came from (``CHOSEN_ON``) cannot confirm a family, so the book's default
replicate seeds (``TestbedConfig.replicates``) are others, whose results nobody had read when
``DESIGN`` was committed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from srlib.detection.arms import MATCHED, Arm, Contrast

FAMILIES = ("discrimination", "transport", "deployable", "plug-in")
"""The roles whose contrasts are one family each, Holm-adjusted within each part."""

CONFIRMATORY_ROLES = ("discrimination", "transport")
"""The two confirmatory families, the book's two questions: each Holm-adjusted on its own."""

QUESTIONS = {
    "discrimination": "which score ranks leaked problems above unseen ones on the leaked model"
    " (the AUC of each rule's margin against the mean AUC of its setting's baselines)",
    "transport": "whose decisions hold when the threshold is set on a clean model of the same"
    " recipe (each baseline flags as many of the null controls' problems as the rule,"
    " cross-fitted) and applied to the leaked model (the rule's MCC against the baselines'"
    " mean)",
    "deployable": "whose decisions hold with a threshold set on another benchmark's clean"
    " problems (the baseline flags as many of them as the rule)",
    "plug-in": "how a researcher's own detector compares, at the null controls' rate (its rule"
    " against SR with both calibrated to the testbed's fpr)",
}
"""Each family's question, as the headline says it."""

PAPER_GAIN = {"SR gray": 0.2152, "SR black": 0.1446}
"""The study's reported F1 gains of SR over the threshold baselines, averaged over them
(+21.52 and +14.46 points, gray- and black-box)."""

TUNED_ON = 0
"""The seed the testbed's settings were tuned on (its learning rates, the leak's strength:
``TestbedConfig.seed`` by default); a replicate's own config carries its replicate seed, so
the pools name this one."""

CHOSEN_ON = (0, 1, 2)
"""The replicate seeds whose results had been read when the families were last changed: a
pool over them is exploratory; only other seeds confirm."""

HISTORY = (
    ("6c7dabc", "2026-12-01", "SR against baselines calibrated to flag 5% of MBPP's clean"
     " calibration split"),
    ("484d8d5", "2026-12-02", "after that result was read: baselines matched to SR's flag rate"
     " on the calibration split"),
    ("9d87562", "2026-12-03", "after a review showed thresholds do not carry from MBPP's"
     " calibration problems: matched on the null controls' evaluated problems"),
    ("#54", "2026-12-04", "after a review simulated that point rewarding a detector"
     " whose flags move less between clean and leaked models: discrimination (matched on the"
     " leaked model's held-out half) and threshold transport (the null point) as two families,"
     " the paper's gain as a mean over baselines, one-sided"),
    ("#62", "2026-12-05", "after seeds 0–2's families were read (every verdict inconclusive,"
     " and a simulation showed six contrasts on 2 degrees of freedom could not have decided):"
     " discrimination asked of the scores (AUC), transport of the decisions (MCC), each rule"
     " against the mean of its setting's baselines, two contrasts a family, the rest"
     " exploratory; matched thresholds flag exactly the rule's count; the power in DESIGN"
     " stated for four replicate seeds (3–6) whose results nobody had read"),
)  # fmt: skip
"""(commit, date, what the declared comparison became): every change was made after results
had been read."""


@dataclass(frozen=True)
class Planned:
    """One confirmatory contrast's design, fixed before its seeds were run: the effect it is
    to find (``effect``, in its metric), and the variance parts assumed for it — read on the
    exploratory seeds (``CHOSEN_ON``: their claim table, pooled), the problems' part as the
    mean of its pairs' problem SE (the SE of a mean of differences is at most the mean of
    their SEs: conservative)."""

    contrast: str
    effect: float
    problem_se: float
    seed_sd: float
    seed_df: int = len(CHOSEN_ON) - 1  # the seeds' SD was read on CHOSEN_ON's seeds

    def power(self, seeds: int, family: int = 2) -> float:
        """The stated power of the family verdict at ``seeds`` (``stats.pooling.power``), at
        the seeds' SD as estimated."""
        from srlib.stats.pooling import power

        return power(self.problem_se**2, self.seed_sd**2, seeds, self.effect, family)

    def power_range(self, seeds: int, family: int = 2):
        """The stated power with the seeds' SD an estimate on ``seed_df`` degrees of freedom
        (``stats.pooling.power_range``: at the estimate, expected over its uncertainty, at the
        top of its 95% range)."""
        from srlib.stats.pooling import power_range

        return power_range(
            self.problem_se**2, self.seed_sd**2, seeds, self.effect, family, self.seed_df
        )

    def seeds_needed(self, family: int = 2) -> float:
        """The fewest seeds with 80% power (``stats.pooling.seeds_needed``)."""
        from srlib.stats.pooling import seeds_needed

        return seeds_needed(self.problem_se**2, self.seed_sd**2, self.effect, family)


DESIGN = (
    Planned("SR gray − mean of 4 baselines (AUC)", 0.05, 0.0057, 0.0091),
    Planned("SR black − mean of 2 baselines (AUC)", 0.05, 0.0, 0.0311),
    Planned("SR gray − mean of 4 baselines (MCC, transport)", 0.10, 0.0137, 0.0233),
    Planned("SR black − mean of 2 baselines (MCC, transport)", 0.10, 0.0, 0.0138),
)  # fmt: skip
"""The confirmatory contrasts' design (``Planned``), written down with ``HISTORY``'s #62 entry
before any result of the replicate seeds 3–6 was read (their training had started): the
effects the power is stated for (each ``Planned.effect``, in its contrast's metric, chosen
after seeds 0–2's variance was seen; the equivalence margin is the contrast table's own)
and the variance parts they were read from: the seeds 0–2 claim table of #61's full build
(``3bbde74``; its record in ``data/corpus/lock.json`` has since been replaced). The
seeds' part is a point estimate on few degrees of freedom (``Planned.seed_df``), so the power is
stated with that uncertainty (``Planned.power_range``): at the estimate, expected over it, and
at the top of its 95% range. The detection chapter prints each one's power at the build's
seeds before its table;
``tests/test_power.py`` checks the power's formula against the family verdicts of simulated
testbeds."""


def _against_mean(
    settings: list[tuple[str, tuple[str, ...]]],
    label: str,
    a_mode: str,
    b_mode: str,
    role: str,
    metric: str,
) -> list[Contrast]:
    """Each paper's rule at ``a_mode`` against the mean of its setting's baselines at
    ``b_mode`` (matched to the rule where the mode matches), named "RULE − mean of N
    baselines (LABEL)"."""
    matched = b_mode in MATCHED
    return [
        Contrast(
            f"{sr} − mean of {len(bs)} baselines ({label})",
            Arm((sr,), a_mode),
            Arm(bs, b_mode, matched_to=sr if matched else None, pool="mean"),
            role,
            metric,
        )
        for sr, bs in settings
    ]


def declared_contrasts(
    gray: Sequence[str] = ("PPL", "Min-K%", "Min-K%++", "Zlib"),
    black: Sequence[str] = ("NGO", "n-gram acc"),
) -> list[Contrast]:
    """The book's contrasts (``HISTORY`` says when each was fixed; none before every result).

    Confirmatory, each family Holm-adjusted on its own: discrimination — the AUC of each
    paper's rule's margin (SR gray, SR black) against the mean AUC of its setting's
    baselines; threshold transport — its MCC against the baselines' mean MCC at the null
    point. The paper's gain: SR's F1 against the mean of its setting's baselines' F1, at the
    held-out and null points (one-sided against ``PAPER_GAIN``). Exploratory (their own
    intervals only): each pair in AUC, in MCC, F1 and TPR at both points, and in TPR at 1%
    and 5% of the held-out half; matched on the calibration split (deployable); the baseline
    calibrated to ``fpr`` (SR's "no threshold needed" condition); the oracle threshold; the
    audit's low-FPR regime (both calibrated to flag 5%, and 1%, of clean calibration
    problems; MCC and TPR); the other reference-free SR rules against their own score's
    baseline at both points; and the best self-referential rule against the best calibrated
    baseline, both chosen inside every resample."""
    settings = [(sr, tuple(bs)) for sr, bs in (("SR gray", gray), ("SR black", black)) if bs]
    pairs = [(sr, b) for sr, bs in settings for b in bs]
    points = {"held-out": "heldout", "transport": "null"}  # named as the contrasts name them
    out = _against_mean(settings, "AUC", "scores", "scores", "discrimination", "auc")
    out += _against_mean(settings, "MCC, transport", "none", "null", "transport", "mcc")
    for role, mode in points.items():
        out += _against_mean(settings, f"F1, {role}", "none", mode, "paper", "f1")
    out += [
        Contrast(f"{sr} − {b} (AUC)", Arm((sr,), "scores"), Arm((b,), "scores"), "secondary", "auc")
        for sr, b in pairs
    ]
    out += [
        Contrast(f"{sr} − {b} ({role})", Arm((sr,)), Arm((b,), mode, matched_to=sr), "secondary")
        for role, mode in points.items()
        for sr, b in pairs
    ]
    for rate in (0.05, 0.01):  # discrimination at low false-positive rates, cross-fitted
        out += [
            Contrast(
                f"{sr} − {b} (TPR at {rate:.0%} of held-out)",
                Arm((sr,), "heldout", fpr=rate),
                Arm((b,), "heldout", fpr=rate),
                "secondary",
                "tpr",
            )
            for sr, b in pairs
        ]
    out += [
        Contrast(f"{sr} − {b} ({metric.upper()}, {role})", Arm((sr,)),
                 Arm((b,), mode, matched_to=sr), "secondary", metric)
        for metric in ("f1", "tpr")
        for role, mode in points.items()
        for sr, b in pairs
    ]  # fmt: skip
    out += [
        Contrast(
            f"{sr} − {b} (deployable: matched on calibration)",
            Arm((sr,)),
            Arm((b,), "matched", matched_to=sr),
            "secondary",
        )
        for sr, b in pairs
    ]
    out += [
        Contrast(f"{sr} − {b} (calibrated)", Arm((sr,)), Arm((b,), "calibrated"), "secondary")
        for sr, b in pairs
    ]
    out += [
        Contrast(f"{sr} − {b} (oracle)", Arm((sr,)), Arm((b,), "oracle"), "secondary")
        for sr, b in pairs
    ]
    for rate in (0.05, 0.01):  # the audit's low-FPR regime: both held to one clean rate
        for metric in ("mcc", "tpr"):
            out += [
                Contrast(
                    f"{sr} − {b} ({metric.upper()}, calibrated at {rate:.0%})",
                    Arm((sr,), "calibrated", fpr=rate),
                    Arm((b,), "calibrated", fpr=rate),
                    "secondary",
                    metric,
                )
                for sr, b in pairs
            ]
    for sr, b in (("SR Min-K%", "Min-K%"), ("SR Min-K%++", "Min-K%++"), ("SR Zlib", "Zlib")):
        out += [
            Contrast(f"{sr} − {b} ({role})", Arm((sr,)), Arm((b,), mode, matched_to=sr),
                     "secondary")
            for role, mode in points.items()
        ]  # fmt: skip
    srs = ("SR gray", "SR black", "SR Min-K%", "SR Min-K%++", "SR Zlib")
    out.append(
        Contrast(
            "best SR − best baseline",
            Arm(srs),
            Arm((*gray, *black), "calibrated"),
            "secondary",
        )
    )
    return out
