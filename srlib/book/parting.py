"""How far two builds' numbers part where their digests differ (``srlib book --compare``):
another architecture or the numerics opt-out gives other bits, and a reader needs to know
whether it gives another science. Per score table (rows paired by sample id): the largest
absolute difference and the smallest Spearman rank correlation over its score columns, each
naming its column (the detectors rank samples; a ranking that holds is a result that holds),
and the values missing in one build only. Per claim-table row: both estimates and intervals,
both verdicts (the interval's and the family-wise one) and whether either changed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

CLAIM_KEY = ["contrast", "part"]  # one claim-table row


def _frame(root: Path | None, row: dict | None) -> pd.DataFrame | None:
    """The table a digest row kept (its ``file`` under the build's ``root``), or None."""
    if root is None or not row or not row.get("file"):
        return None
    file = root / row["file"]
    return pd.read_parquet(file) if file.is_file() else None


def score_parting(mine: pd.DataFrame, other: pd.DataFrame) -> dict:
    """Over the float columns both tables hold, rows paired by ``id`` (by position where ids
    repeat, after checking the ids line up): the largest absolute difference and its column,
    the weakest Spearman rank correlation and its column, and how many values are NaN in one
    build only. NaN where the tables do not pair (other rows)."""
    columns = [
        c for c in mine.columns if c in other.columns and pd.api.types.is_float_dtype(mine[c])
    ]
    out = {"largest |difference|": np.nan, "in": "", "rank correlation": np.nan, "of": "",
           "NaN in one only": 0}  # fmt: skip
    paired = _paired(mine, other, columns)
    if paired is None or not columns or paired[0].empty:
        return out
    a, b = paired
    gaps = {
        c: float(np.nanmax(np.abs(a[c] - b[c]))) for c in columns if (a[c] - b[c]).notna().any()
    }
    ranked = [c for c in columns if a[c].nunique() > 1 and b[c].nunique() > 1]  # a constant
    rho = {c: a[c].corr(b[c], method="spearman") for c in ranked}  # column ranks nothing
    rho = {c: float(r) for c, r in rho.items() if pd.notna(r)}
    out["NaN in one only"] = int(sum((a[c].isna() != b[c].isna()).sum() for c in columns))
    if gaps:
        out["in"] = max(gaps, key=gaps.__getitem__)
        out["largest |difference|"] = gaps[out["in"]]
    if rho:
        out["of"] = min(rho, key=rho.__getitem__)
        out["rank correlation"] = rho[out["of"]]
    return out


def _paired(mine: pd.DataFrame, other: pd.DataFrame, columns: list[str]):
    """The two tables' ``columns`` with rows paired by ``id``; None where they do not pair."""
    if len(mine) != len(other):
        return None
    if "id" in mine.columns and "id" in other.columns:
        if mine["id"].is_unique and other["id"].is_unique:
            if set(mine["id"]) != set(other["id"]):
                return None
            b = other.set_index("id").loc[mine["id"], columns].reset_index(drop=True)
            return mine[columns].reset_index(drop=True), b
        if mine["id"].tolist() != other["id"].tolist():
            return None
    return mine[columns].reset_index(drop=True), other[columns].reset_index(drop=True)


def claim_parting(mine: pd.DataFrame, other: pd.DataFrame) -> pd.DataFrame:
    """Each claim row of either build: both estimates with their intervals, both verdicts
    (the interval's and the family-wise one) and whether either changed."""
    keep = [*CLAIM_KEY, "difference", "low", "high", "verdict", "family_verdict"]
    both = mine[keep].merge(
        other[keep], on=CLAIM_KEY, how="outer", suffixes=(" here", " there"), validate="1:1"
    )
    changed = {
        column: both[f"{column} here"].fillna("") != both[f"{column} there"].fillna("")
        for column in ("verdict", "family_verdict")
    }
    both["family-wise verdict changed"] = changed["family_verdict"]
    both["verdict changed"] = changed["verdict"] | changed["family_verdict"]
    return both


def parting(
    mine: list[dict], other: list[dict], mine_root: Path | None, other_root: Path | None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """For every score table and claim table whose digests differ and whose numbers both
    builds kept: the score tables' parting (a row each) and the claim rows side by side."""
    theirs = {(r["what"], r["name"]): r for r in other}
    scores, claims = [], []
    for r in mine:
        t = theirs.get((r["what"], r["name"]))
        if t is None or t["digest"] == r["digest"] or r["what"] not in ("scores", "claims"):
            continue
        a, b = _frame(mine_root, r), _frame(other_root, t)
        if a is None or b is None:
            continue
        if r["what"] == "scores":
            scores.append({"table": r["name"], **score_parting(a, b)})
        else:
            claims.append(claim_parting(a, b).assign(table=r["name"]))
    return pd.DataFrame(scores), (pd.concat(claims) if claims else pd.DataFrame())


def say(
    mine: list[dict], other: list[dict], mine_root: Path | None, other_root: Path | None
) -> str:
    """``parting`` as the text ``srlib book --compare`` prints."""
    scores, claims = parting(mine, other, mine_root, other_root)
    if scores.empty and claims.empty:
        return "(no table's numbers kept by both builds: compared by digest only)"
    lines = []
    with pd.option_context("display.width", 200, "display.max_columns", 30):
        if not scores.empty:
            lines += ["score tables, here against there:"]
            lines += [scores.to_string(index=False, float_format="{:.3g}".format)]
        if not claims.empty:
            family = int(claims["family-wise verdict changed"].sum())
            lines += [f"claim rows ({family} family-wise verdicts changed, "
                      f"{int(claims['verdict changed'].sum())} verdicts in all):"]  # fmt: skip
            lines += [claims.to_string(index=False, float_format="{:+.3f}".format)]
    return "\n".join(lines)
