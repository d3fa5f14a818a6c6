"""The scoring stage: train every replicate seed's models and score every checkpoint the
detection chapter's reports read (``report.main_table``, ``claim_table``,
``clean_model_rates``), serially or side by side on a Dask cluster.

On a cluster the work is split where it may be: a task trains each seed's models, then a
task per model scores it (``scoring_steps``: each model's requests in the order a serial run
makes them, since a model's numbers may move with the batch a text is scored in), the own
seed's naturalness-matched variants last; the training tasks are submitted first, so the
longest chains start at once and the models' scoring fills both workers to the end (one task
per seed left one worker idle while the last seed trained and scored). Each task opens the
testbed from the parameters it was opened with (``build.shared``, kept on ``Testbed.opened``;
once per worker process) and writes only to the store and the score cache under
``cache_dir``, both safe for several processes (atomic folders; SQLite in WAL mode); so a
worker needs srlib and that folder, nothing else. The reports then read what the tasks left
there. Every task runs with the config's thread count and the pinned kernels, and a table's
numbers depend only on its inputs, so a cluster of any size gives the serial build's digests
(``tests``: two local workers against one process)."""

from __future__ import annotations

import contextlib
import dataclasses
import uuid
from collections.abc import Callable, Iterable
from functools import partial

from srlib.execution.progress import tqdm
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


def scoring_steps(rep: Testbed, own: bool) -> list[tuple[str, list[Callable[[], object]]]]:
    """What ``score_replicate`` asks, as (model, its requests in order) per model: the base
    and reference models the long tables set beside every checkpoint, then each checkpoint a
    report reads (``read_stages``), on the evaluated problems and the calibration split; for
    the ``own`` seed a last step ("naturalness") makes the naturalness-matched variants and
    scores them and the plain ones, gray-box, on the base model and the main run's last
    checkpoint (after those models' own requests, as a serial run asks them)."""
    n, steps = rep.config.n, {}
    for path in (rep.base, rep.reference):
        steps.setdefault(str(path), []).extend(
            [partial(rep.scores, path, n), partial(rep.calibration_scores, path)]
        )
    for stage in read_stages(rep, own):
        black, cal = black_stage(rep, stage), black_stage(rep, stage, calibration=True)
        steps.setdefault(str(stage.path), []).extend(
            [partial(rep.scores, stage.path, n, black=black),
             partial(rep.calibration_scores, stage.path, cal)]
        )  # fmt: skip
    out = list(steps.items())
    return out + [("naturalness", [partial(_naturalness_scores, rep)])] if own else out


def _naturalness_scores(rep: Testbed) -> None:
    """Plain and naturalness-matched variants, gray-box, on the base model and the main run's
    last checkpoint, as the report reads them."""
    n, tag = rep.config.n, ex.naturalness_tag(rep)
    matched = cached_variants(
        rep.config, rep.samples, rep.cache_dir, False, n, ex.naturalness(rep), tag
    )
    plain = [Variants(v[:n]) for v in rep.variants]
    for sets in (plain, matched):
        for path in (rep.base, rep.runs[rep.main].checkpoints[-1]):
            rep.scores(path, n, variants=sets)


def score_replicate(rep: Testbed, own: bool) -> None:
    """Score every checkpoint of ``rep`` that a report reads (``scoring_steps``, in turn);
    everything lands in the store and the score cache."""
    for _, calls in scoring_steps(rep, own):
        for call in calls:
            call()


def _opened(opened: dict, call: str) -> Testbed:
    """The testbed a worker opens as the chapter did, once per worker and ``prepare`` call
    (opening reads the corpus, variants and splits: seconds a task; a cluster that outlives
    the call opens it anew for the next one, whose plug-ins or cache may have changed)."""
    if call not in _OPENED:
        _OPENED.clear()
        _OPENED[call] = shared(**opened)
    return _OPENED[call]


_OPENED: dict[str, Testbed] = {}


def _seed(opened: dict, call: str, seed: int) -> Testbed:
    """``seed``'s replicate on a worker (trained there if it is not in the store yet)."""
    return dataclasses.replace(replicate(_opened(opened, call), seed), memo={}, failures={})


def _train(opened: dict, call: str, seed: int) -> int:
    """One seed's models trained on a worker; the number of its scoring steps."""
    own = seed == _opened(opened, call).config.seed
    return len(scoring_steps(_seed(opened, call, seed), own))


def _step(opened: dict, call: str, seed: int, index: int, *after) -> tuple[int, int]:
    """One model's requests (``scoring_steps``' ``index``-th) of ``seed``, on a worker;
    ``after``: the futures it must follow."""
    own = seed == _opened(opened, call).config.seed
    _, calls = scoring_steps(_seed(opened, call, seed), own)[index]
    for call_ in calls:
        call_()
    return seed, index


def prepare(
    tb: Testbed,
    seeds: Iterable[int] | None = None,
    workers: int = 1,
    scheduler=None,
    progress: bool = True,
) -> dict[int, Testbed]:
    """Train and score each of ``seeds`` (default: the config's ``replicates``), and the
    testbed's own seed, whose stages every report reads whether or not it is a replicate — in this
    process with ``workers`` = 1, else as tasks (each seed's training, each model's scoring)
    on a local Dask cluster of ``workers`` single-threaded processes, or on the cluster
    ``scheduler`` (an address or a ``distributed.Client``; its workers must reach
    ``tb.cache_dir``) — and return seed → replicate for ``seeds`` alone, every table read from
    the store (the own seed: ``tb`` itself), so the digests list exactly what the reports
    read. ``tb`` and
    the replicates are then opened for reading (``Testbed.reading``): a report that asks for
    anything not made here says what is missing (``NotBuilt``) instead of computing it."""
    asked = list(dict.fromkeys(tb.config.replicates if seeds is None else seeds))  # once each
    seeds = list(dict.fromkeys([tb.config.seed, *asked]))  # the own seed's stages: every report
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
    return {seed: replicate(tb, seed) for seed in asked}  # from the store; the own seed: tb


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
    """Every seed's training, then each of its models' scoring, as tasks on a Dask cluster (a
    local one of ``workers`` processes unless ``scheduler`` names one)."""
    from distributed import Client, LocalCluster, as_completed

    if not tb.opened:
        raise ValueError("prepare on a cluster needs a testbed opened with build.shared")
    cluster = None
    if scheduler is None:
        cluster = LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
        )
    given = scheduler if hasattr(scheduler, "submit") else None
    own, opened = tb.config.seed, (tb.opened, uuid.uuid4().hex)  # the call: see ``_opened``
    try:
        with contextlib.nullcontext(given) if given else Client(scheduler or cluster) as client:
            trains = {client.submit(_train, *opened, s, pure=False): s for s in seeds if s != own}
            running = as_completed(list(trains))
            left = {s: 0 for s in seeds}  # scoring steps not yet done, per seed
            if own in left:
                running.update(
                    _submit(client, opened, own, len(scoring_steps(tb, True)), True, left)
                )
            for future in running:
                done = future.result()
                if future in trains:
                    running.update(_submit(client, opened, trains[future], done, False, left))
                    continue
                left[done[0]] -= 1
                if not left[done[0]]:
                    bar.update()
    finally:
        if cluster is not None:
            cluster.close()


def _submit(client, opened: tuple, seed: int, count: int, own: bool, left: dict) -> list:
    """The ``count`` scoring steps of ``seed`` as tasks, each model's requests in a serial
    run's order: the base model's first (every checkpoint's table scores the originals on it
    too, and a batch of them alone could pad differently), then the checkpoints side by side,
    and the ``own`` seed's last ("naturalness") after all of them."""
    left[seed] = count
    base = client.submit(_step, *opened, seed, 0, pure=False)
    middle = [
        client.submit(_step, *opened, seed, i, base, pure=False) for i in range(1, count - own)
    ]
    last = [client.submit(_step, *opened, seed, count - 1, *middle, pure=False)] if own else []
    return [base, *middle, *last]
