"""The testbed chapters' verdict sentences, each from the table it judges (the notebooks
only print them): what stands beside the detection claim, the calibration-shift summary, the
pooled tests' power and false-positive rate, and the audit zoo's answer. Which detectors
count is the registry's; where an interval exists the sentence follows it
(``detection.verdicts``)."""

from __future__ import annotations

import pandas as pd

from srlib.stats.verdicts import above_chance, rate_holds


def _span(values: pd.Series) -> str:
    """The range of the finite entries, naming no winner (a point estimate picks none)."""
    values = values.dropna()
    if values.empty:
        return "–"
    if len(values) == 1:
        return f"{values.iloc[0]:.2f} ({values.index[0]})"
    return f"{values.min():.2f} to {values.max():.2f} over {len(values)} rules"


def detection_context(auc: pd.DataFrame, fpr: pd.Series) -> list[str]:
    """What stands beside the claim (``detection.verdicts.claim_headline``): how often plain SR
    gray flags the held-out half (``fpr``: each detector's false-positive rate there) and
    whether the blind text-only classifier separates leaked from held-out samples (``auc``:
    the pooled ROC-AUC rows, detector, value, low, high), which would mean part of every
    detector's score may be a shift between the halves rather than memorisation."""
    out = []
    if "SR gray" in fpr:
        out.append(f"Plain SR gray flags {fpr['SR gray']:.0%} of the held-out half.")
    auc = auc.drop_duplicates("detector").set_index("detector")
    if "Blind (text only)" in auc.index:
        blind = auc.loc["Blind (text only)"]
        shift = " Part of every detector's score may then be that shift." if blind.low > 0.5 else ""
        out.append(
            above_chance(
                "The blind text-only classifier of leaked against held-out problems",
                blind.value,
                blind.low,
                blind.high,
            )
            + shift
        )
    return out


def calibration_shift_summary(mcc: pd.DataFrame) -> list[str]:
    """Per benchmark, from ``controls.calibration_shift``'s MCC rows: the range of MCC of the
    threshold-free self-referential rules, and of the threshold baselines calibrated on the
    other benchmark and on its own held-out half — ranges, not a "best" rule picked by its
    point estimate (which rule is better is what the contrasts, with selection inside, say)."""
    out = []
    for group, g in mcc.groupby("group", sort=False):
        free = g[(g.calibration == "none") & (g.family == "self-referential")]
        baselines = g[g.family == "threshold baseline"]
        cross = baselines[baselines.calibration == "other benchmark"]
        same = baselines[baselines.calibration == "same benchmark (2-fold)"]
        free_s, cross_s, same_s = (
            _span(x.set_index("detector").value) for x in (free, cross, same)
        )
        out.append(
            f"{group}: MCC of the threshold-free rules {free_s}; of the baselines calibrated on "
            f"the other benchmark {cross_s}, on its own held-out half {same_s}."
        )
    return out


def pooled_power(power: pd.DataFrame, alpha: float) -> list[str]:
    """At the largest set size per design, condition and benchmark: the rejection rate where
    the model saw the set (power), and where it did not whether α holds, two-sided (subsets
    of one pool, not independent tests: read ``pooled_fpr`` for the rate over those)."""
    keys = ["design", "set", "benchmark"]
    largest = power.loc[power.groupby(keys).samples.idxmax()]
    out = []
    for (design, name, bench), r in largest.set_index(keys).iterrows():
        if r["saw it"]:
            out.append(
                f"{design}, {name}, {bench}: rejected in {r['rejection rate']:.0%} of sets "
                f"of {r.samples}."
            )
        else:
            rate = rate_holds(
                f"{design}, {name}, {bench} (never saw it), sets of {r.samples} drawn from one "
                "pool",
                int(r.rejected),
                int(r.draws),
                alpha,
            )
            out.append(rate.replace(f"the nominal {alpha:g}", f"α = {alpha:g}"))
    return out


def pooled_fpr(fpr: pd.DataFrame, alpha: float) -> list[str]:
    """The pooled tests' false-positive rate per design over the clean sets' independent
    tests (``controls.false_positive_rate``), against α, from its interval."""
    out = []
    for _, r in fpr.iterrows():
        if not r.tests:
            out.append(f"{r.design}: no clean set was tested.")
            continue
        name = f"{r.design}, clean tests rejected"
        out.append(
            rate_holds(name, int(r.rejected), int(r.tests), alpha).replace(
                f"the nominal {alpha:g}", f"α = {alpha:g}"
            )
        )
    return out


def zoo_found(answer: pd.DataFrame) -> list[str]:
    """The audit zoo (``zoo.planted``'s table): where planted leakage was found, and any
    excess 'found' where nothing was planted."""
    hits, misses = answer[answer.planted], answer[~answer.planted]
    found, false = hits[hits.found], misses[misses.found]
    where = f": {', '.join(false.model + ' on ' + false.benchmark)}." if len(false) else "."
    out = [
        f"Planted leakage found in {len(found)} of {len(hits)} model × benchmark cells "
        f"(excess {hits.excess.min():.0%} to {hits.excess.max():.0%} over the null model's "
        f"rate); an excess also 'found' in {len(false)} of {len(misses)} cells with nothing "
        f"planted{where}"
    ]
    for _, r in hits.sort_values(["benchmark", "model"]).iterrows():
        out.append(
            f"  {r.model} on {r.benchmark}: {r.rate:.0%} flagged against {r.null_rate:.0%} "
            f"(excess {r.excess:+.0%}, 95% CI [{r.excess_low:+.0%}, {r.excess_high:+.0%}])"
        )
    return out


def zoo_excess_table(answer: pd.DataFrame) -> pd.DataFrame:
    """Each leaked zoo model's excess over the null where its leak was planted (its leaked
    half), on the held-out half of that benchmark, and on the other benchmark."""
    leaked = answer[answer.model.str.contains("×")]
    both = leaked.pivot_table(index="model", columns="where", values="excess")
    order = ["leaked half", "planted benchmark", "held-out half", "other benchmark"]
    return both[[c for c in order if c in both.columns]]


def zoo_elsewhere(answer: pd.DataFrame) -> str:
    """Where the leaked models show an excess whose interval clears zero besides where their
    leak was planted (the held-out half of their benchmark, the other benchmark), and what
    such an excess means."""
    leaked = answer[answer.model.str.contains("×")]
    parts = []
    for where in ("held-out half", "other benchmark"):
        cells = leaked[leaked["where"] == where]
        if len(cells):
            above = int((cells.excess_low > 0).sum())
            parts.append(f"on the {where} {above} of {len(cells)}")
    if not parts:
        return "No leaked model was audited outside the samples it saw."
    text = "Leaked models with an excess above zero where nothing was planted: " + "; ".join(parts)
    if (leaked[~leaked.planted].excess_low > 0).any():
        return text + (
            ". What a model learns from one benchmark's originals (their naming and phrasing,"
            " a style the held-out half and the other benchmark share) makes it prefer other"
            " originals to renamed variants too: an excess says 'familiar', not 'these"
            " samples leaked'."
        )
    return text + "."


def clean_fpr_summary(table: pd.DataFrame, nominal: float) -> str:
    """From ``cleancal.clean_fpr``: how many thresholds set on a benchmark the model never
    saw flag more than ``nominal`` of another benchmark it never saw either (the rate's
    interval above it), and which."""
    cal = table[table.threshold != "none"]
    if cal.empty:
        return "No threshold could be set on a clean benchmark."
    over = cal[cal.low > nominal]
    where = ": " + ", ".join(over.detector + " on " + over.model + " (" + over.benchmark + ")")
    return (
        f"Of {len(cal)} thresholds set on a benchmark the model never saw, {len(over)} flag "
        f"more than the nominal {nominal:.0%} of another benchmark it never saw either "
        f"(95% interval above it){where if len(over) else ''}."
    )


def plugin_failures_said(failures: pd.DataFrame, plugins: tuple) -> str:
    """What ``report.plugin_failures`` found, in a sentence: no plug-in given, every call
    scored, or how many calls of which detectors were left undecided (and on what)."""
    if not plugins:
        return "No detector of your own was given (parameter `detectors`)."
    if failures.empty:
        return "Every call of " + ", ".join(p.entry.name for p in plugins) + " was scored."
    by = failures.groupby(["detector", "texts"]).calls.sum()
    parts = [f"{name}: {calls} on {texts} texts" for (name, texts), calls in by.items()]
    said = "; ".join(parts)
    return f"{int(by.sum())} calls could not be scored, so their samples are undecided ({said})."
