"""The testbed chapters' tables, each computed here from the cached scores: memorisation
per checkpoint, the main detection table, the controls and the sensitivity studies."""

from __future__ import annotations

import pandas as pd
from scipy import stats

from srlib.detection.compare import common_decided, deployable, evaluate_detectors, long_table
from srlib.detection.contrasts import COLUMNS, contrast_table
from srlib.detection.decide import calibrated_threshold, threshold_decide
from srlib.detection.declared import CHOSEN_ON, TUNED_ON, declared_contrasts
from srlib.detection.plugin_contrasts import contrasts as plugin_contrasts
from srlib.detection.registry import detector
from srlib.detection.verdicts import CONFIRMATORY, POOLED, WITHOUT_TUNING
from srlib.errors import NotBuilt
from srlib.stats.metrics import metric_table
from srlib.stats.verdicts import rate_holds
from srlib.testbed import experiment as ex
from srlib.testbed.experiment import black_stage
from srlib.testbed.runs import EXPOSURE, NULL, PARAPHRASE
from srlib.testbed.testbed import Testbed, read_variants, variants_artifact
from srlib.transforms import Variants


def memorisation_table(tb: Testbed) -> pd.DataFrame:
    """Per checkpoint: leaked against held-out perplexity and gain over the base model, with
    the one-sided Mann-Whitney p-value (the null control should show no difference)."""
    base = tb.scores(tb.base, 0)  # the originals are all it needs
    rows = []
    for stage in ex.stages(tb)[1:]:
        rows.append(
            {
                "run": stage.run,
                "epoch": stage.epoch,
                **ex.memorisation(tb, tb.scores(stage.path, 0), base),
            }
        )
    return pd.DataFrame(rows)


def filtered_ids(tb: Testbed) -> set[str]:
    """Samples the paper's filter keeps: the base model does not already find the original
    easier than all its variants (decided by SR gray on the base model)."""
    base = tb.scores(tb.base)
    return set(base.id[base.sr_gray.fillna(False).eq(False) & base.sr_gray.notna()])


def filter_table(tb: Testbed) -> pd.DataFrame:
    """Per benchmark: samples, dropped by the filter (base model already prefers the
    original), kept; with the nominal chance level for comparison."""
    base = tb.scores(tb.base)
    base = base.assign(dropped=base.sr_gray.fillna(False).astype(bool))
    out = base.groupby("benchmark").agg(samples=("id", "size"), dropped=("dropped", "sum"))
    out["dropped share"] = out.dropped / out.samples
    out["chance"] = base.groupby("benchmark").n_variants.apply(lambda n: (1 / (n + 1)).mean())
    return out


def stage_detectors(tb: Testbed, stage: ex.Stage, n: int | None = None) -> pd.DataFrame:
    """The long detector table of one checkpoint (see ``compare.long_table``)."""
    n = tb.config.n if n is None else n
    table = tb.scores(stage.path, n, black=black_stage(tb, stage))
    table = table.assign(score_blind=table.id.map(ex.blind(tb)[0]))
    return long_table(table, tb.scores(tb.base, n), tb.scores(tb.reference, n))


def stage_calibration(tb: Testbed, stage: ex.Stage) -> pd.DataFrame:
    """Every detector on the clean calibration split under one checkpoint, as the long
    table ``compare.long_table`` makes (baseline scores, the blind classifier's, and the
    self-referential margins of the samples with variants): where thresholds are set."""
    cal = tb.calibration_scores(stage.path, black_stage(tb, stage, calibration=True))
    cal = cal.assign(score_blind=cal.id.map(ex.blind(tb)[1]))
    base, unrelated = tb.calibration_scores(tb.base), tb.calibration_scores(tb.reference)
    return long_table(cal, base, unrelated)


def main_table(
    tb: Testbed,
    runs: tuple[str, ...] | None = None,
    views: tuple[str, ...] = ("unfiltered", "filtered"),
) -> pd.DataFrame:
    """Metrics of every detector on each checkpoint of ``runs`` (default: every checkpoint
    of the main run and the null control's last, where it has seen as much general text as
    the main run), in each of ``views`` (unfiltered, and with the paper's filter), thresholds
    calibrated on that checkpoint's scores of the calibration split; every detector of a
    checkpoint on the samples all of them decide (``compare.common_decided``; ``n`` counts
    them)."""
    if runs is None:
        chosen = [s for s in ex.stages(tb) if s.run == tb.main]
        chosen += [s for s in ex.stages(tb) if s.run == NULL][-1:]
    else:
        chosen = [s for s in ex.stages(tb) if s.run in runs]
    keep = filtered_ids(tb)
    frames = []
    for stage in chosen:
        long = deciding(stage_detectors(tb, stage), tb.plugins)
        long = common_decided(long)  # every detector on the same samples
        cal = stage_calibration(tb, stage)
        parts = {"unfiltered": long, "filtered": long[long.id.isin(keep)]}
        for view in views:
            m = evaluate_detectors(parts[view], cal, tb.config.fpr, tb.config.n_boot)
            frames.append(m.assign(run=stage.run, epoch=stage.epoch, view=view))
    return pd.concat(frames, ignore_index=True)


def held_out_fpr(metrics: pd.DataFrame) -> pd.DataFrame:
    """Per checkpoint, every detector's false-positive rate on the held-out half (all
    benchmarks, unfiltered; baselines at their calibrated threshold)."""
    m = metrics[
        (metrics.metric == "fpr") & (metrics.group == "all") & (metrics.view == "unfiltered")
    ]
    m = deployable(m)
    return m.pivot_table(index=["run", "epoch"], columns="detector", values="value")


def n_sensitivity(tb: Testbed, ns=(1, 2, 3, 5, 10), draws: int = 10) -> pd.DataFrame:
    """SR gray's P/R/F1/MCC on the main run's last checkpoint for each n, over ``draws``
    random subsets of the ``n_max`` scored variants."""
    last = tb.runs[tb.main].checkpoints[-1]
    table = tb.scores(last, tb.config.n_max, apart=True)  # beside the detection chapter's n
    ns = [n for n in ns if n <= tb.config.n_max]
    return pd.concat(
        [ex.sr_subsets(table, n, draws, tb.config.seed) for n in ns], ignore_index=True
    )


def ratio_table(tb: Testbed) -> pd.DataFrame:
    """Every detector on the last checkpoint of the leaked run at each code-to-text ratio."""
    frames = []
    for name, run in tb.runs.items():
        if name in (NULL, EXPOSURE, PARAPHRASE):
            continue
        stage = ex.Stage(name, len(run.checkpoints), run.checkpoints[-1])
        long = stage_detectors(tb, stage)
        cal = stage_calibration(tb, stage)
        m = evaluate_detectors(long, cal, tb.config.fpr, tb.config.n_boot, groups=False)
        ratio = float(name.split("@")[1])
        frames.append(m.assign(run=name, code_to_text=ratio))
    return pd.concat(frames, ignore_index=True)


def naturalness_matched(tb: Testbed) -> pd.DataFrame:
    """Plain against naturalness-matched variants (chosen by the base model's
    log-likelihood, closest to the original's; made by ``prepare``): the filter rate under
    the base model and SR gray's precision, recall and MCC on the main run's last
    checkpoint."""
    artifact = variants_artifact(tb.config, tb.samples, tb.config.n, ex.naturalness_tag(tb))
    folder = tb.store.get(artifact)
    if folder is None:
        raise NotBuilt("the naturalness-matched variants were never made: "
                       "testbed.prepare.prepare(tb) makes them")  # fmt: skip
    matched = read_variants(folder, tb.samples)
    last = tb.runs[tb.main].checkpoints[-1]
    rows = []
    for kind, sets in (
        ("plain", [Variants(v[: tb.config.n]) for v in tb.variants]),
        ("naturalness-matched", matched),
    ):
        base = tb.scores(tb.base, tb.config.n, variants=sets)
        target = tb.scores(last, tb.config.n, variants=sets)
        y = target.leaked.to_numpy(bool)
        m = metric_table(y, list(target.sr_gray), n_boot=tb.config.n_boot)
        m = m.set_index("metric")
        rows.append(
            {
                "variants": kind,
                "base model flags (filter rate)": float(
                    base.sr_gray.fillna(False).astype(bool).mean()
                ),
                **{k: m.value[k] for k in ("precision", "recall", "mcc", "fpr")},
            }
        )
    return pd.DataFrame(rows)


def split_table(tb: Testbed) -> pd.DataFrame:
    """Per benchmark: samples, leaked, held out, samples with at least ``n`` and ``n_max``
    variants, and the size of the clean calibration split."""
    out = tb.split.groupby("benchmark", sort=False).leaked.agg(samples="size", leaked="sum")
    out["held out"] = out.samples - out.leaked
    counts = (
        pd.DataFrame(
            {
                "benchmark": [s.benchmark for s in tb.samples],
                "variants": [len(v) for v in tb.variants],
            }
        )
        .groupby("benchmark", sort=False)
        .variants
    )
    out[f"≥ {tb.config.n} variants"] = counts.apply(lambda v: int((v >= tb.config.n).sum()))
    out[f"≥ {tb.config.n_max} variants"] = counts.apply(lambda v: int((v >= tb.config.n_max).sum()))
    out["calibration (clean)"] = len(tb.calibration)
    out["calibration twins left out"] = tb.calibration_twins.get("id", pd.Series()).nunique()
    return out


def claim_parts(reps: dict[int, Testbed]) -> dict[str, tuple[pd.DataFrame, ...]]:
    """Per replicate seed (``build.replicates``): its main run's last checkpoint as the long
    detector table, the calibration long table, and its null control's last checkpoint on
    the same problems (where the threshold-transport point is measured), all samples (the
    unfiltered view) — what ``contrasts.contrast_table`` reads."""
    parts = {}
    for seed, rep in reps.items():
        run, null = rep.runs[rep.main], rep.runs[NULL]
        stage = ex.Stage(rep.main, len(run.checkpoints), run.checkpoints[-1])
        clean = ex.Stage(NULL, len(null.checkpoints), null.checkpoints[-1])
        parts[f"seed {seed}"] = (
            stage_detectors(rep, stage),
            stage_calibration(rep, stage),
            stage_detectors(rep, clean),
        )
    return parts


def claim_table(reps: dict[int, Testbed], contrasts=None) -> pd.DataFrame:
    """The declared contrasts (``declared.declared_contrasts``; ``declared.HISTORY`` says when each
    was fixed) on every replicate, pooled, pooled without the seed the settings were tuned on
    and pooled over the seeds no family was chosen on (``declared.CHOSEN_ON``; all of them
    makes the pool itself confirmatory): each difference with its paired interval (problems
    and calibration set resampled together, thresholds re-set inside) and verdict.
    ``contrasts`` (default: the declared ones and, with the testbed's plug-ins, their family,
    ``plugin_contrasts.contrasts``): those that read a plug-in are computed apart, so a
    plug-in that cannot score some samples shrinks its own comparisons' common decided set,
    never the others'; one that decides nothing on some part keeps its rows, which say why
    (whichever way its contrasts were given: the own-detector chapter passes its family)."""
    first = next(iter(reps.values()))
    parts, config = claim_parts(reps), first.config
    options = {"fpr": config.fpr, "n_boot": config.n_boot, "seed": config.seed}
    options["subsets"] = {
        WITHOUT_TUNING: [f"seed {s}" for s in reps if s != TUNED_ON],
        CONFIRMATORY: [f"seed {s}" for s in reps if s not in CHOSEN_ON],
    }
    given = list(declared_contrasts() if contrasts is None else contrasts)
    if contrasts is None and first.plugins:
        given += plugin_contrasts(first.plugins)
    owner = {n: p.entry.name for p in first.plugins for n in p.names}
    reads = lambda c: {owner[n] for arm in (c.a, c.b) for n in arm.detectors if n in owner}  # noqa: E731
    silent = undecided_plugins(parts, first.plugins) if first.plugins else {}
    builtin = [c for c in given if not reads(c)]
    own = [c for c in given if reads(c) and not reads(c) & set(silent)]
    tables = [contrast_table(parts, group, **options) for group in (builtin, own) if group]
    failures = plugin_failures(reps) if silent else None
    for name, (part_name, where) in silent.items():
        said = _no_decisions(failures, [n for n, o in owner.items() if o == name], part_name, where)
        mine = [c for c in given if name in reads(c)]
        place = next(iter(parts)) if len(parts) == 1 else POOLED
        tables.append(pd.DataFrame({"contrast": [c.name for c in mine], "role": "plug-in",
                                    "part": place, "a": [c.a.label for c in mine],
                                    "b": [c.b.label for c in mine],
                                    "metric": [c.metric for c in mine], "n": 0,
                                    "seeds": len(parts), "verdict": said,
                                    "family_verdict": said}))  # fmt: skip
    table = pd.concat(tables, ignore_index=True) if tables else pd.DataFrame()
    return table.reindex(columns=[*COLUMNS, *(c for c in table if c not in COLUMNS)])


def deciding(long: pd.DataFrame, plugins) -> pd.DataFrame:
    """``long`` without the rows of a plug-in detector that decides no sample of it (it
    would empty every detector's common decided set; the claim table and the failure counts
    say what it left undecided)."""
    names = {n for p in plugins for n in p.names} & set(long.detector)
    silent = [n for n in names if common_decided(long[long.detector == n], [n]).empty]
    return long[~long.detector.isin(silent)]


def undecided_plugins(parts: dict[str, tuple], plugins) -> dict[str, tuple[str, str]]:
    """Plug-in name → (the part, what it left without a decision) for each plug-in whose
    contrasts cannot be computed on some part (seed): no sample decided among the evaluated
    problems, none on the null control (every plug-in arm is read at the null-control
    point), or no margin of its rules on the calibration split (where they are calibrated
    against SR). It is reported, never dropped, and never stops the others."""
    out = {}
    for p in plugins:
        for name, (long, cal, *null) in parts.items():
            for where, table in (("evaluated", long), *(("null control", t) for t in null)):
                if common_decided(table[table.detector.isin(p.names)], p.names).empty:
                    out.setdefault(p.entry.name, (name, where))
            rules = [n for n in p.names if detector(n).threshold_free]  # calibrated margins
            if cal is not None and rules:
                margins = cal[cal.detector.isin(rules)].score
                if not margins.notna().any():
                    out.setdefault(p.entry.name, (name, "calibration"))
    return out


def _no_decisions(failures: pd.DataFrame, names: list[str], part: str, where: str) -> str:
    """What a plug-in without decisions says in the claim table: where, and the calls it
    could not score on that seed, by reason."""
    seed = int(part.split()[-1])
    texts = "calibration" if where == "calibration" else "evaluated"
    mine = failures[failures.detector.isin(names) & (failures.seed == seed)]
    counts = mine[mine.texts == texts].groupby("reason").calls.sum()
    why = ", ".join(f"{int(k)} calls {reason}" for reason, k in counts.items())
    return f"no decisions on {part} ({where}): {why or 'no score kept'}"


def plugin_failures(reps: dict[int, Testbed]) -> pd.DataFrame:
    """Every call a plug-in could not score, by seed, checkpoint and reason (the samples it
    leaves undecided: none is dropped silently); an empty table where every call scored."""
    rows = []
    for seed, rep in reps.items():
        for (name, path, texts), failed in rep.failures.items():
            where = "calibration" if texts == "calibration" else "evaluated"
            rows += [
                {"seed": seed, "detector": name, "checkpoint": path, "texts": where,
                 "reason": reason, "calls": calls}
                for reason, calls in failed.items()
            ]  # fmt: skip
    columns = ["seed", "detector", "checkpoint", "texts", "reason", "calls"]
    return pd.DataFrame(rows, columns=columns)


def clean_model_rates(reps: dict[int, Testbed]) -> pd.DataFrame:
    """Per replicate seed, on the two models of it that saw no benchmark — its base model and
    its null control's last checkpoint (continued pre-training without benchmark text) — the
    share of all evaluated samples each deployable rule flags (threshold-free rules as they
    decide, scores at the threshold calibrated to flag ``fpr`` of the clean calibration
    split, set under that model) with its exact 95% interval, and for calibrated thresholds
    whether the nominal rate holds (two-sided). Every flag here is false."""
    rows = []
    for seed, rep in reps.items():
        run = rep.runs[NULL]
        for stage in (
            ex.Stage("base", 0, rep.base),
            ex.Stage(NULL, len(run.checkpoints), run.checkpoints[-1]),
        ):
            rows += _false_flags(rep, stage, seed)
    return pd.DataFrame(rows)


def flag_rate(d: pd.DataFrame, clean: pd.Series | None, fpr: float, name: str) -> dict | None:
    """One detector's flags on its long-table rows ``d`` — a threshold-free rule as it
    decides, a score at the threshold that flags ``fpr`` of the ``clean`` scores — counted:
    threshold ("none" or "calibrated"), flagged, samples, rate, its exact 95% interval, and
    for a threshold whether the nominal ``fpr`` holds, two-sided (``verdicts.rate_holds``,
    naming ``name``). None where it cannot decide (no clean scores for a threshold)."""
    calibrated_on = None
    if detector(d.detector.iloc[0]).threshold_free:
        flags, mode = d.flag.dropna().astype(bool), "none"
    elif clean is not None and clean.notna().any():
        calibrated_on = int(clean.notna().sum())
        t = calibrated_threshold(clean.dropna(), fpr)
        flags = pd.Series(threshold_decide(d.score.to_numpy(float), t)).dropna()
        flags, mode = flags.astype(bool), "calibrated"
    else:
        return None
    k, n = int(flags.sum()), int(flags.size)
    if n == 0:
        return None  # nothing decided (a plug-in that failed everywhere): no rate
    low, high = stats.binomtest(k, n).proportion_ci(0.95, method="exact")
    verdict = (
        rate_holds(name, k, n, fpr, calibrated_on=calibrated_on) if mode == "calibrated" else ""
    )
    return {"threshold": mode, "flagged": k, "samples": n, "rate": k / n, "low": low,
            "high": high, "verdict": verdict}  # fmt: skip


def _false_flags(rep: Testbed, stage: ex.Stage, seed: int) -> list[dict]:
    """``clean_model_rates``' rows of one model that saw no benchmark."""
    model = "base model" if stage.run == "base" else "null control"
    long, cal = stage_detectors(rep, stage), stage_calibration(rep, stage)
    clean = dict(list(cal.groupby("detector").score))
    rows = []
    for name, d in long.groupby("detector", sort=False):
        if not detector(name).deployable:
            continue
        rate = flag_rate(d, clean.get(name), rep.config.fpr, f"seed {seed}, {model}, {name}")
        if rate is not None:
            rows.append({"seed": seed, "model": model, "detector": name} | rate)
    return rows


def paper_table(metrics: pd.DataFrame, run: str, view: str, group: str = "all") -> pd.DataFrame:
    """The paper's main-table shape for one run and view: a row per detector and threshold,
    precision / recall / F1 / MCC (value [95% interval]) per checkpoint."""
    m = metrics[(metrics.run == run) & (metrics.view == view) & (metrics.group == group)]
    m = m[m.metric.isin(["precision", "recall", "f1", "mcc"])].copy()
    m["text"] = [
        f"{v:.2f} [{lo:.2f}, {hi:.2f}]" for v, lo, hi in zip(m.value, m.low, m.high, strict=True)
    ]
    out = m.pivot_table(
        index=["detector", "threshold"], columns=["epoch", "metric"], values="text", aggfunc="first"
    )
    order = [(e, k) for e in sorted(m.epoch.unique()) for k in ("precision", "recall", "f1", "mcc")]
    return out[[c for c in order if c in out.columns]]
