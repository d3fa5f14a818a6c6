"""The scoring stage: train every replicate seed's models and score every checkpoint the
detection chapter's reports read (``report.main_table``, ``claim_table``,
``clean_model_rates``), one task per seed, serially or side by side on a Dask cluster.

Each task opens the testbed from the parameters it was opened with (``build.shared``, kept on
``Testbed.opened``) and writes only to the store and the score cache under ``cache_dir``, both
safe for several processes (atomic folders; SQLite in WAL mode); so a worker needs srlib and
that folder, nothing else. The reports then read what the tasks left there. Every task runs
with the config's thread count and the pinned kernels, and a table's numbers depend only on
its inputs, so a cluster of any size gives the serial build's digests (``tests``: two local
workers against one process)."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterable

from tqdm import tqdm

from srlib.testbed import experiment as ex
from srlib.testbed.build import cached_variants, replicate, shared
from srlib.testbed.experiment import black_stage
from srlib.testbed.runs import NULL
from srlib.testbed.testbed import Testbed
from srlib.transforms import Variants


def read_stages(rep: Testbed, own: bool) -> list[ex.Stage]:
    """The checkpoints of one replicate the detection reports read: its base model and null
    control's last (clean-model rates), its main run's last (the claim) and, for the
    testbed's ``own`` seed, every checkpoint of the main run (the main table)."""
    main, null = rep.runs[rep.main].checkpoints, rep.runs[NULL].checkpoints
    first = 1 if own else len(main)
    chosen = [ex.Stage("base", 0, rep.base)]
    chosen += [ex.Stage(rep.main, k, main[k - 1]) for k in range(first, len(main) + 1)]
    return chosen + [ex.Stage(NULL, len(null), null[-1])]


def score_replicate(rep: Testbed, own: bool) -> None:
    """Score every checkpoint of ``rep`` that a report reads (``read_stages``), on the
    evaluated problems and the calibration split, with the base and reference models the
    long tables set beside them, and for the ``own`` seed make and score the
    naturalness-matched variants; everything lands in the store and the score cache."""
    n = rep.config.n
    for path in (rep.base, rep.reference):
        rep.scores(path, n)
        rep.calibration_scores(path)
    for stage in read_stages(rep, own):
        rep.scores(stage.path, n, black=black_stage(rep, stage))
        rep.calibration_scores(stage.path, black_stage(rep, stage, calibration=True))
    if own:  # plain and naturalness-matched variants, gray-box, as the report reads them
        tag = ex.naturalness_tag(rep)
        matched = cached_variants(
            rep.config, rep.samples, rep.cache_dir, False, n, ex.naturalness(rep), tag
        )
        plain = [Variants(v[:n]) for v in rep.variants]
        for sets in (plain, matched):
            for path in (rep.base, rep.runs[rep.main].checkpoints[-1]):
                rep.scores(path, n, variants=sets)


def _task(opened: dict, seed: int) -> int:
    """One seed on a worker: open the testbed as the chapter did, train and score the seed."""
    tb = shared(**opened)
    score_replicate(replicate(tb, seed), own=seed == tb.config.seed)
    return seed


def prepare(
    tb: Testbed,
    seeds: Iterable[int] | None = None,
    workers: int = 1,
    scheduler=None,
    progress: bool = True,
) -> dict[int, Testbed]:
    """Train and score each of ``seeds`` (default: the config's ``replicates``) — in this
    process with ``workers`` = 1, else one task per seed on a local Dask cluster of
    ``workers`` single-threaded processes, or on the cluster ``scheduler`` (an address or a
    ``distributed.Client``; its workers must reach ``tb.cache_dir``) — and return seed →
    replicate, every table read from the store (the own seed: ``tb`` itself), so the
    digests list exactly what the reports read. ``tb`` and the replicates are then opened
    for reading (``Testbed.reading``): a report that asks for anything not made here says
    what is missing (``NotBuilt``) instead of computing it."""
    seeds = list(tb.config.replicates if seeds is None else seeds)
    bar = tqdm(total=len(seeds), desc="seeds trained and scored", disable=not progress)
    work = dataclasses.replace(tb, reading=False, memo={}, failures={})  # tb stays untouched
    _score_shared(work)
    if scheduler is None and (workers <= 1 or len(seeds) <= 1):
        for seed in seeds:
            rep = dataclasses.replace(replicate(work, seed), memo={}, failures={})
            score_replicate(rep, own=seed == tb.config.seed)
            bar.update()
    else:
        _on_cluster(tb, seeds, workers, scheduler, bar)
    bar.close()
    tb.reading = True  # from here on the reports read: whatever is missing is said, not made
    return {seed: replicate(tb, seed) for seed in seeds}  # from the store; the own seed: tb


def _score_shared(tb: Testbed) -> None:
    """The models every seed's tables set beside their own — the reference model, and the
    base model where the seeds share one (a given checkpoint, or ``base_per_seed`` off) —
    scored here first and once, whichever way the seeds then run: a model's numbers move
    slightly with the batch a text is scored in, so the order of requests is the same
    serially and on a cluster, and no two workers score the same texts of one model."""
    c = tb.config
    shared_base = c.base_model is not None or not c.base_per_seed
    for path in (tb.reference, *([tb.base] if shared_base else [])):
        tb.scores(path, c.n)
        tb.calibration_scores(path)


def _on_cluster(tb: Testbed, seeds: list[int], workers: int, scheduler, bar) -> None:
    """Every seed as a task on a Dask cluster (a local one of ``workers`` processes unless
    ``scheduler`` names one)."""
    from distributed import Client, LocalCluster, as_completed

    if not tb.opened:
        raise ValueError("prepare on a cluster needs a testbed opened with build.shared")
    cluster = None
    if scheduler is None:
        cluster = LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
        )
    given = scheduler if hasattr(scheduler, "submit") else None
    try:
        with contextlib.nullcontext(given) if given else Client(scheduler or cluster) as client:
            futures = [client.submit(_task, tb.opened, seed, pure=False) for seed in seeds]
            for future in as_completed(futures):
                future.result()
                bar.update()
    finally:
        if cluster is not None:
            cluster.close()
