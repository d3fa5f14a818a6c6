"""The duplication-impact chapter's verdict sentences, each from the table it judges
(``drops.step_table``, ``drops.against_reference``, ``drops.net_differences``, with
``p (Holm)`` and ``family-wise`` from ``drops.family``): memorisation (``drops.duplicate_gain``)
and the net drops, the study's ordering beside the references', grouped inflation random →
file → repository, the chapter's answer (``headline``: glued into the chapter's box, which the
landing page shows through ``srlib.book.appendix.write_headline``) and the closing paragraph.
A finding is stated only where its family-wise test says so; otherwise the sentence says there is no
evidence — a result. What a sentence reads outside the family (the study's own raw reading,
the relative drop beside the study's, the rule's drop, the pool's change, the learning
curve) is said to be descriptive."""

from __future__ import annotations

import pandas as pd

from srlib.duplication.impact.drops import REFERENCES
from srlib.stats.verdicts import direction

STUDY_NAMES = {
    "Random Forest": "Random Forest",
    "LSTM": "LSTM",
    "Encoder + MLP (frozen)": "GraphCodeBERT-MLP",
    "Encoder (fine-tuned)": "GraphCodeBERT",
}
"""Each family here → its counterpart in the study's tables."""
FAMILY = "family-wise, Holm"
DESCRIPTIVE = "descriptive: 95% intervals, not tests of the family"
STUDY = "study's drop"
"""The drop as the study reads it: start on its candidates − end on its own."""


def _ci(value: float, low: float, high: float, sign: str = "+") -> str:
    return f"{value:{sign}.2f} [{low:{sign}.2f}, {high:{sign}.2f}]"


def _side(row: pd.Series, low: str, high: str) -> str:
    """ "better" / "worse" where the family-wise test holds (its interval's side), else
    "no evidence"."""
    if row.get("family-wise") != "yes":
        return "no evidence"
    return direction(row[low], row[high])


def _trained(table: pd.DataFrame) -> pd.DataFrame:
    return table.drop(index=list(REFERENCES), level="model", errors="ignore")


def _row(table: pd.DataFrame, model: str, step: str) -> pd.Series | None:
    return table.loc[(model, step)] if (model, step) in table.index else None


def memorisation(
    steps: pd.DataFrame, gain: pd.DataFrame, step: str = "mixed → unique"
) -> list[str]:
    """Per trained model: the study's drop over ``step`` split into composition and the net
    drop; the memorisation test (``drops.duplicate_gain``: on the candidates with a
    duplicate, trained with their own files against without them) and the net drop on the
    pool, each judged family-wise (the pool's own change beside the test, descriptively)."""
    said_gain = {
        "better": "memorisation",
        "worse": "it scores them better without them",
        "no evidence": "no evidence of memorisation",
    }
    said_net = {
        "better": "trained with the duplicates it scores higher there",
        "worse": "trained with the duplicates it scores lower there",
        "no evidence": "no evidence of a difference",
    }
    out = []
    for (model, name), r in _trained(steps).iterrows():
        if name != step:
            continue
        text = (
            f"{model}, {step}: the study's drop {_ci(*_three(r, STUDY))} MCC = composition "
            f"{_ci(*_three(r, 'composition'))} + net drop {_ci(*_three(r, 'net drop'))}"
        )
        if model in gain.index:
            g = gain.loc[model]
            text += (
                f". On its {g.candidates:,} candidates with a duplicate, trained with their own "
                f"files (and so their twins there) minus without them: "
                f"{_ci(g.gain, g.low, g.high)} MCC: {said_gain[_side(g, 'low', 'high')]} "
                f"({_holm(g)}); on the pool's candidates, which have no twin, the same change is "
                f"{_ci(g['pool gain'], g['pool gain low'], g['pool gain high'])} ({DESCRIPTIVE})"
            )
        else:
            text += ". No memorisation test for it: that needs its File results too"
        out.append(
            f"{text}. On the pool, whose candidates have no duplicate, the net drop: "
            f"{said_net[_side(r, 'beyond low', 'beyond high')]} ({_holm(r)})."
        )
    return out


def _holm(row: pd.Series) -> str:
    """The family-wise p a verdict reads, said beside it."""
    return f"{FAMILY}, p {_p(row['p (Holm)'])}"


def _p(value: float) -> str:
    """A bootstrap p as said: one no resample reached is "≈ 0" (below the resolution)."""
    return "≈ 0" if value == 0 else f"= {value:.3g}"


def _three(row: pd.Series, name: str) -> tuple[float, float, float]:
    return row[name], row[f"{name} low"], row[f"{name} high"]


def ordering(steps: pd.DataFrame) -> list[str]:
    """Per trained model: does the study's ordering Mixed > Near-duplicate > Unique hold net
    of composition (both net steps above zero family-wise), and does it hold as the study
    reads it (raw drops) — for the model and for the shape rule, which learns nothing."""
    first, second = "mixed → near-duplicate", "near-duplicate → unique"
    ref = [_row(steps, "shape rule", s) for s in (first, second)]
    out = []
    for model in _trained(steps).index.get_level_values("model").unique():
        one, two = _row(steps, model, first), _row(steps, model, second)
        if one is None or two is None:
            continue
        sides = {_side(one, "beyond low", "beyond high"), _side(two, "beyond low", "beyond high")}
        if sides == {"better"}:
            verdict = "the ordering holds net of composition (both net drops above 0)"
        elif "worse" in sides:
            verdict = "the ordering is reversed net of composition (a step's MCC rises)"
        else:
            verdict = "no evidence for the full ordering net of composition"
        text = (
            f"{model}: net drops Mixed → Near {_ci(*_three(one, 'net drop'))} and Near → Unique "
            f"{_ci(*_three(two, 'net drop'))}: {verdict} ({FAMILY}); as the study reads it "
            f"({DESCRIPTIVE}), {_raw(one, two)}"
        )
        if all(r is not None for r in ref):
            text += f", and for the shape rule, which learns nothing, {_raw(*ref)}"
        out.append(text + ".")
    return out


def _raw(one: pd.Series, two: pd.Series) -> str:
    """Whether both study's drops (composition included) lie above zero."""
    holds = one[f"{STUDY} low"] > 0 and two[f"{STUDY} low"] > 0
    shown = "holds" if holds else "is not shown"
    return f"the ordering {shown} ({one[STUDY]:+.2f}, {two[STUDY]:+.2f})"


def inflation(steps: pd.DataFrame) -> list[str]:
    """Per trained model: how MCC falls from a random split to file- and then
    repository-grouped splits, on the same candidates, each step judged family-wise."""
    said = {"better": "a loss", "worse": "a gain", "no evidence": "no evidence of a change"}
    out = []
    for model in _trained(steps).index.get_level_values("model").unique():
        one = _row(steps, model, "mixed → file")
        two = _row(steps, model, "file → repository")
        if one is None or two is None:
            continue
        a, b = (_side(r, "beyond low", "beyond high") for r in (one, two))
        out.append(
            f"{model}: MCC {one['from']:.2f} (random split) → {one['to']:.2f} (unseen files) → "
            f"{two['to']:.2f} (unseen repositories); random → file "
            f"{_ci(*_three(one, 'net drop'))}: {said[a]}; file → repository "
            f"{_ci(*_three(two, 'net drop'))}: {said[b]} ({FAMILY})."
        )
    return out


def headline(steps: pd.DataFrame, step: str = "mixed → repository") -> str:
    """The chapter's answer, which the landing page also shows: how much a random split
    overstates what each trained detector scores on repositories it has never seen, with its
    interval."""
    rows = [(m, r) for (m, s), r in _trained(steps).iterrows() if s == step]
    if not rows:
        return f"The duplication study has no trained detector with a {step} step in this run."
    parts = [f"{m} {_ci(*_three(r, 'net drop'))} (p (Holm) {_p(r['p (Holm)'])})" for m, r in rows]
    over = [m for m, r in rows if _side(r, "beyond low", "beyond high") == "better"]
    judged = (
        f"family-wise an overstatement for {len(over)} of {len(rows)} ({', '.join(over)})"
        if over
        else f"no evidence of an overstatement for any of the {len(rows)}, family-wise"
    )
    return (
        "Duplication study: a random split of the secret-detection data overstates what a "
        f"detector scores on repositories it has never seen by {'; '.join(parts)} MCC "
        f"(random − repository-grouped split, same candidates, 95% intervals resampling "
        f"repositories and their files): {judged}."
    )


def against_study(steps: pd.DataFrame, paper: pd.DataFrame, step: str = "mixed → unique"):
    """Per model with a counterpart in the study: its relative MCC drop over ``step`` as the
    study measures it (composition included) with its interval, beside the study's."""
    out = []
    for model, study_name in STUDY_NAMES.items():
        r = _row(steps, model, step)
        if r is None:
            continue
        theirs = paper.loc[study_name, "relative drop"]
        if pd.isna(r["relative drop low"]):
            out.append(
                f"{model}: no relative drop to compare with the study's {theirs:.0%} "
                f"({study_name}): its Mixed MCC is not above 0 on every resample."
            )
            continue
        lo, hi = r["relative drop low"], r["relative drop high"]
        here = f"{r['relative drop']:.0%} [{lo:.0%}, {hi:.0%}]"
        verdict = (
            "consistent with the study"
            if lo <= theirs <= hi
            else "smaller than the study's"
            if theirs > hi
            else "larger than the study's"
        )
        out.append(
            f"{model}: relative MCC drop Mixed → Unique as the study measures it (composition "
            f"included) {here}; the study's {study_name}: {theirs:.0%}, {verdict} "
            f"({DESCRIPTIVE})."
        )
    return out


def largest_drop(differences: pd.DataFrame, model: str = "Random Forest") -> str:
    """Whether ``model``'s net drop exceeds every other trained model's (the study found
    Random Forest dropping most), from ``drops.net_differences``, family-wise."""
    if differences.empty:
        return f"No other trained model to compare {model}'s net drop with."
    side = {n: _side(r, "low", "high") for n, r in differences.iterrows()}
    if set(side.values()) == {"better"}:
        return f"{model}'s net drop exceeds every other model's ({FAMILY}), as in the study."
    words = {"better": "more than", "worse": "less than", "no evidence": "no evidence against"}
    text = "; ".join(f"{words[s]} {n}" for n, s in side.items())
    return (
        f"{model}'s net drop Mixed → Unique, paired with each other model's ({FAMILY}): {text}. "
        "The study's finding that it drops most is not reproduced here."
    )


def against_references(table: pd.DataFrame, reference: str = "shape rule") -> list[str]:
    """Per trained model: the scenarios in which it beats ``reference`` family-wise, falls
    below it, or shows no evidence of a difference (``drops.against_reference``)."""
    out = []
    for model, g in _trained(table).groupby(level="model", sort=False):
        side: dict[str, list[str]] = {"better": [], "worse": [], "no evidence": []}
        for (_, scenario), r in g.iterrows():
            side[_side(r, "low", "high")].append(scenario)
        if len(side["better"]) == len(g):
            out.append(f"{model} beats the {reference} in every scenario ({FAMILY}).")
            continue
        words = {
            "better": "beats it in",
            "worse": "falls below it in",
            "no evidence": "no evidence of a difference in",
        }
        text = "; ".join(f"{words[k]} {', '.join(v)}" for k, v in side.items() if v)
        out.append(f"{model} against the {reference} ({FAMILY}): {text}.")
    return out


def closing(steps: pd.DataFrame, gain: pd.DataFrame, family_size: int) -> str:
    """The chapter's closing paragraph, counted from the family-wise tests: which trained
    detectors memorise (``drops.duplicate_gain``), which show a net drop on the unique pool,
    and which score lower on unseen repositories than a random split says."""

    def judged(step: str) -> tuple[list[str], list[str]]:
        rows = [(m, r) for (m, s), r in _trained(steps).iterrows() if s == step]
        return [m for m, _ in rows], [
            m for m, r in rows if _side(r, "beyond low", "beyond high") == "better"
        ]

    models, net = judged("mixed → unique")
    grouped, repo = judged("mixed → repository")
    tail = (
        f"Each finding is one of {family_size} tests read family-wise (Holm), with intervals "
        "that resample repositories and the files within them."
    )
    unseen = (
        f"Against unseen repositories, {len(repo)} of {len(grouped)} trained detectors "
        f"({', '.join(repo) or 'none'}) score lower than a random split says, on the same "
        "candidates"
    )
    if not models and grouped:  # only the repository scenario beside Mixed ran
        return (
            f"{unseen} (Mixed and Unique were not both run, so nothing is said of "
            f"memorisation). {tail}"
        )
    if not models:
        return "This run has no trained detector with Mixed and Unique results to judge."
    memorised = [m for m, g in gain.iterrows() if _side(g, "low", "high") == "better"]
    tested = (
        f"{len(memorised)} of {len(gain)} ({', '.join(memorised) or 'none'}) score the "
        "candidates with a duplicate better trained with their own files than without them "
        "(memorisation of the training files)"
        if len(gain)
        else "the memorisation test was not run (it needs the File scenario)"
    )
    text = (
        f"Of {len(models)} trained detectors, {tested}, and {len(net)} "
        f"({', '.join(net) or 'none'}) score lower on the unique pool trained without the "
        "duplicates than with them (a net drop)"
    )
    shape = _row(steps, "shape rule", "mixed → unique")
    if shape is not None:
        text += (
            f"; the rule's own drop as the study reads it, {_ci(*_three(shape, STUDY))}, is "
            f"composition alone ({DESCRIPTIVE})"
        )
    if grouped:
        text += f". {unseen}"
    return f"{text}. {tail}"


def learning(curve: pd.DataFrame) -> list[str]:
    """Per model, from ``curve.curve_table`` (descriptive: the curve is not in the family):
    its MCC on unseen repositories at the fewest and the most training repositories, and
    the last step's paired change — whether more repositories still help."""
    out = []
    for model, rows in curve.groupby(level="model", sort=False):
        rows = rows.droplevel("model")
        first, last = rows.iloc[0], rows.iloc[-1]
        text = (
            f"{model}: MCC on unseen repositories {_ci(first.mcc, first.low, first.high, '')} "
            f"trained on {rows.index[0]:.0f} repositories, {_ci(last.mcc, last.low, last.high, '')}"
            f" on {rows.index[-1]:.0f}"
        )
        if "step" in rows and pd.notna(last.get("step")):
            change = direction(last["step low"], last["step high"])
            still = {"better": "still rising", "worse": "falling"}.get(change, "no change shown")
            text += (
                f"; the last step {_ci(last.step, last['step low'], last['step high'])}: "
                f"{still} ({DESCRIPTIVE})"
            )
        out.append(text + ".")
    return out


def mcc_wide(table: pd.DataFrame, order: tuple[str, ...]) -> pd.DataFrame:
    """``drops.mcc_table`` as model × scenario cells "MCC [low, high]", references first."""
    cells = {
        key: f"{r['mcc']:.2f} [{r['low']:.2f}, {r['high']:.2f}]" for key, r in table.iterrows()
    }
    frame = pd.Series(cells).unstack()
    models = [m for m in (*REFERENCES, *frame.index) if m in frame.index]
    return frame.loc[list(dict.fromkeys(models)), [s for s in order if s in frame.columns]]
