"""Every gray-box detector of the audit read against the fresh problems, not against chance.

A threshold baseline has no rate of its own until a threshold is chosen; here each is judged
two ways against the control problems (the model's own scores on problems it cannot have
seen): without a threshold, by the AUC of its score between a benchmark's problems and the
control's (0.5: the model treats the benchmark like problems it never saw; Mann-Whitney's
test), and at the threshold that flags at most the share ``fpr`` of the control problems
(``detection.decide.calibrated_threshold``, the book's deployable threshold), by the share of
the benchmark it then flags. That threshold is **cross-fitted** (``operating.halves``): each
problem, control or benchmark, is judged with the threshold set on the control half its id
does not fall in, so the control's own rate is measured out of fold and Fisher's test of the
two rates does not compare a rate with the threshold that fixed it. SR's rules need no
threshold: their flag rate is compared with their rate on the control (Fisher's exact test)
and their margin ranked like a score. The p-values are Holm-adjusted over every detector and
benchmark of the table: one family, the question "which detectors tell this benchmark from
problems the model never saw?". Fisher's test here is two-sided (a rate may fall below the
control's), where the audit's summary tests an excess one-sided."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import fisher_exact, mannwhitneyu

from srlib.audit.summary import CONTROL
from srlib.detection.decide import calibrated_threshold
from srlib.detection.operating import halves
from srlib.stats.significance import holm

SCORES = {"PPL": "score_ppl", "Min-K%": "score_min_k", "Min-K%++": "score_min_k_pp",
          "Zlib": "score_zlib"}  # fmt: skip
RULES = {"SR gray": ("sr_gray", "sr_gray_margin")}  # flag column, margin column


def _auc(bench: np.ndarray, control: np.ndarray) -> tuple[float, float]:
    """AUC of ``bench`` above ``control`` and the two-sided Mann-Whitney p-value."""
    test = mannwhitneyu(bench, control, alternative="two-sided")
    return float(test.statistic / (len(bench) * len(control))), float(test.pvalue)


def detector_table(samples: pd.DataFrame, fpr: float = 0.05) -> pd.DataFrame:
    """One row per benchmark and detector of an audit's per-sample table (``Audit.samples``,
    one model, gray-box): the AUC of its score (a rule's margin) against the control problems
    with its p-value, its flag rate and the control's (a score at the cross-fitted threshold
    flagging at most ``fpr`` of the control; a rule as it decides), Fisher's p-value of the
    two rates, and Holm's adjustment of both p-values over the table."""
    control = samples[samples.set == CONTROL]
    rows = []
    for bench, g in samples[samples.set != CONTROL].groupby("benchmark", sort=False):
        for name, column in SCORES.items():
            bt, ct = g.dropna(subset=[column]), control.dropna(subset=[column])
            b, c = bt[column].to_numpy(float), ct[column].to_numpy(float)
            cuts = _cuts(ct, c, fpr)
            rows.append(
                _row(bench, name, "score", b, c, _judged(bt, b, cuts), _judged(ct, c, cuts))
            )
        for name, (flag, margin) in RULES.items():
            b, c = g.dropna(subset=[flag]), control.dropna(subset=[flag])
            rows.append(
                _row(bench, name, "rule", b[margin].to_numpy(float), c[margin].to_numpy(float),
                     b[flag].to_numpy(bool), c[flag].to_numpy(bool))
            )  # fmt: skip
    table = pd.DataFrame(rows)
    for column in ("p_auc", "p_rate"):
        tested = table[column].notna() if len(table) else []
        table[f"{column}_holm"] = np.nan
        if len(table) and tested.any():
            table.loc[tested, f"{column}_holm"] = holm(table.loc[tested, column].to_list())
    return table


def _cuts(table: pd.DataFrame, scores: np.ndarray, fpr: float) -> tuple[float, float] | None:
    """The calibrated threshold of each control half (``operating.halves``); None where a
    half is empty (too few control problems to cross-fit)."""
    side = halves(table.id)
    if not all((side == k).any() for k in (0, 1)):
        return None
    return tuple(calibrated_threshold(scores[side == k], fpr) for k in (0, 1))


def _judged(table: pd.DataFrame, scores: np.ndarray, cuts) -> np.ndarray | None:
    """Each row flagged with the threshold of the control half its id does not fall in (None
    without thresholds)."""
    if cuts is None:
        return None
    return scores > np.where(halves(table.id) == 0, cuts[1], cuts[0])


def _row(bench, name, kind, b, c, b_flags, c_flags) -> dict:
    auc, p_auc = _auc(b, c)
    rate = control_rate = p_rate = float("nan")
    if b_flags is not None and c_flags is not None:
        k, m = int(b_flags.sum()), int(c_flags.sum())
        rate, control_rate = k / len(b_flags), m / len(c_flags)
        _, p_rate = fisher_exact([[k, len(b_flags) - k], [m, len(c_flags) - m]])
    return {
        "benchmark": bench,
        "detector": name,
        "kind": kind,
        "problems": len(b),
        "control problems": len(c),
        "auc": auc,
        "p_auc": p_auc,
        "rate": rate,
        "control_rate": control_rate,
        "p_rate": float(p_rate),
    }


def detector_sentences(table: pd.DataFrame) -> list[str]:
    """Per benchmark: the detectors whose AUC against the control differs from 0.5
    family-wise (Holm), and those that do not."""
    out = []
    for bench, g in table.groupby("benchmark", sort=False):
        apart = g[g.p_auc_holm < 0.05]
        same = g[g.p_auc_holm >= 0.05]
        said = ", ".join(f"{r.detector} (AUC {r.auc:.2f})" for r in apart.itertuples())
        rest = ", ".join(f"{r.detector} ({r.auc:.2f})" for r in same.itertuples())
        text = f"{bench} against the fresh problems: "
        text += f"told apart by {said}" if said else "told apart by no detector"
        text += f"; no evidence that {rest} tell it apart" if rest else ""
        out.append(text + " (Holm over every detector and benchmark).")
    return out


def rates_by_length(samples: pd.DataFrame, lengths: dict[str, int], bands: int = 3) -> pd.DataFrame:
    """SR's gray-box flag rate per benchmark within bands of the scored text's length (cut at
    the pooled quantiles of every set's lengths, ``lengths``: id → characters): where the
    fresh problems are longer than a benchmark's, a difference in rate that stays within a band
    is not the length's doing. Exploratory: no test."""
    table = samples.dropna(subset=["sr_gray"]).assign(chars=lambda t: t.id.map(lengths))
    table["band"] = pd.qcut(table.chars, bands, precision=0)
    return table.pivot_table(
        index="band", columns="benchmark", values="sr_gray", aggfunc=["mean", "size"],
        observed=False,
    ).rename(columns={"mean": "rate", "size": "problems"}, level=0)  # fmt: skip
