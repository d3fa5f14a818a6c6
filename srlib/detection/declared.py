"""The book's contrasts, declared in code: two questions, each its own family, the paper's
gain as the paper states it, and the record of when each was fixed.

**Discrimination** — which score ranks the leaked model's leaked problems above its unseen
ones? Each SR rule against each baseline of its setting, the baseline's threshold flagging as
many of the leaked model's held-out problems as the rule flags of them (``operating``'s
``heldout`` point, cross-fitted): at equal false-positive rates on the model judged, a
difference in MCC is a difference in leaked problems found. The AUC difference (no threshold
at all) stands beside it.

**Threshold transport** — whose decisions hold when the threshold comes from a clean model?
The same pairs, the baseline's threshold flagging as many of the **null controls'** problems
(a clean model of the same recipe) as the rule flags of them (the ``null`` point), applied to
the leaked model. The leaked model's scores move as a whole, so a detector whose flags move
less with that shift wins here even at equal discrimination: the paper's argument for a
threshold-free rule, and a different question from the first.

Each family is Holm-adjusted on its own (two questions, two families). The paper's gains
(``PAPER_GAIN``) are tested as it reports them: SR's F1 against the **mean** over the
baselines of its setting, one-sided in the claim's direction, at both points.

What was fixed when (``HISTORY``): the declared comparison changed each time after results had
been read; the seeds those results came from (``CHOSEN_ON``) cannot confirm the families, and
the book calls a pool confirmatory only over other seeds (``replicates: [3, 4, 5]`` runs one
with the same code; they score the same problems, whose shared part of the variance informed
the choice too)."""

from __future__ import annotations

from collections.abc import Sequence

from srlib.detection.arms import Arm, Contrast

FAMILIES = ("discrimination", "transport", "deployable", "plug-in")
"""The roles whose contrasts are one family each, Holm-adjusted within each part."""

QUESTIONS = {
    "discrimination": "which score ranks leaked problems above unseen ones on the leaked model"
    " (the baseline flags as many of its held-out problems as the rule, cross-fitted)",
    "transport": "whose decisions hold when the threshold is set on a clean model of the same"
    " recipe (the baseline flags as many of the null controls' problems as the rule,"
    " cross-fitted) and applied to the leaked model",
    "deployable": "whose decisions hold with a threshold set on another benchmark's clean"
    " problems (the baseline flags as many of them as the rule)",
    "plug-in": "how a researcher's own detector compares, at the null controls' rate (its rule"
    " against SR with both calibrated to the testbed's fpr)",
}
"""Each family's question, as the headline says it."""

PAPER_GAIN = {"SR gray": 0.2152, "SR black": 0.1446}
"""The study's reported F1 gains of SR over the threshold baselines, averaged over them
(+21.52 and +14.46 points, gray- and black-box)."""

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
)  # fmt: skip
"""(commit, date, what the declared comparison became): every change was made after results
had been read."""


def declared_contrasts(
    gray: Sequence[str] = ("PPL", "Min-K%", "Min-K%++", "Zlib"),
    black: Sequence[str] = ("NGO", "n-gram acc"),
) -> list[Contrast]:
    """The book's contrasts (``HISTORY`` says when each was fixed; none before every result).

    Families, each Holm-adjusted on its own: the paper's rules (SR gray, SR black) against
    each baseline of their setting in MCC, at the discrimination point (``heldout``) and at
    the threshold-transport point (``null``). The paper's gain: SR's F1 against the mean of
    its setting's baselines' F1, at both points (one-sided against ``PAPER_GAIN``).
    Secondary: each pair in F1 and TPR at both points; ranking (AUC of the rule's margin
    against the baseline's score); matched on the calibration split (deployable); the
    baseline calibrated to ``fpr`` (SR's "no threshold needed" condition); the oracle
    threshold; the audit's low-FPR regime (both calibrated to flag 5%, and 1%, of clean
    calibration problems; MCC and TPR); the other reference-free SR rules against their own
    score's baseline at both points; and the best self-referential rule against the best
    calibrated baseline, both chosen inside every resample."""
    settings = (("SR gray", tuple(gray)), ("SR black", tuple(black)))
    pairs = [(sr, b) for sr, bs in settings for b in bs]
    points = {"discrimination": "heldout", "transport": "null"}
    out = [
        Contrast(f"{sr} − {b} ({role})", Arm((sr,)), Arm((b,), mode, matched_to=sr), role)
        for role, mode in points.items()
        for sr, b in pairs
    ]
    out += [
        Contrast(
            f"{sr} − mean of {len(bs)} baselines (F1, {role})",
            Arm((sr,)),
            Arm(bs, mode, matched_to=sr, pool="mean"),
            "paper",
            "f1",
        )
        for role, mode in points.items()
        for sr, bs in settings
        if bs
    ]
    out += [
        Contrast(f"{sr} − {b} ({metric.upper()}, {role})", Arm((sr,)),
                 Arm((b,), mode, matched_to=sr), "secondary", metric)
        for metric in ("f1", "tpr")
        for role, mode in points.items()
        for sr, b in pairs
    ]  # fmt: skip
    out += [
        Contrast(f"{sr} − {b} (AUC)", Arm((sr,), "scores"), Arm((b,), "scores"), "secondary", "auc")
        for sr, b in pairs
    ]
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
