"""How far two builds' numbers part where their digests differ (``srlib book --compare``):
another architecture or the numerics opt-out gives other bits, and a reader needs to know
whether it gives another science. Per score table: the largest absolute difference of any
score and the smallest Spearman rank correlation of a score column between the builds (the
detectors rank samples; a ranking that holds is a result that holds). Per claim-table row:
both estimates and intervals, and whether the family-wise verdict changed."""

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
    """The largest absolute difference over the score columns both tables hold (rows in their
    build order, which the same inputs fix) and the smallest rank correlation of a column,
    naming it; NaN where the tables do not line up (other rows)."""
    columns = [
        c for c in mine.columns if c in other.columns and pd.api.types.is_float_dtype(mine[c])
    ]
    if len(mine) != len(other) or not columns:
        return {"largest |difference|": np.nan, "rank correlation": np.nan, "column": ""}
    a, b = mine[columns].reset_index(drop=True), other[columns].reset_index(drop=True)
    largest = float(np.nanmax(np.abs(a.to_numpy() - b.to_numpy())))
    rho = {c: a[c].corr(b[c], method="spearman") for c in columns if a[c].nunique() > 1}
    worst = min(rho, key=lambda c: rho[c]) if rho else ""
    return {
        "largest |difference|": largest,
        "rank correlation": float(rho[worst]) if worst else np.nan,
        "column": worst,
    }


def claim_parting(mine: pd.DataFrame, other: pd.DataFrame) -> pd.DataFrame:
    """Each claim row of either build: both estimates with their intervals, both family-wise
    verdicts and whether it changed."""
    keep = [*CLAIM_KEY, "difference", "low", "high", "family_verdict"]
    both = mine[keep].merge(other[keep], on=CLAIM_KEY, how="outer", suffixes=(" here", " there"))
    both["verdict changed"] = both["family_verdict here"].fillna("") != both[
        "family_verdict there"
    ].fillna("")
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
