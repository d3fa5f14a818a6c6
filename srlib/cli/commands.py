"""What each ``srlib`` sub-command does, given its parsed arguments (``srlib.cli.parser``
builds the arguments; ``srlib.cli.main`` reports user errors)."""

from __future__ import annotations

import argparse

from srlib.errors import InputError, SrlibError


def _book(args: argparse.Namespace) -> int:
    import os

    from srlib.book import runner as book

    if args.compare:
        from srlib.book.digests import compare, load

        mine, other = load(args.compare_with), load(args.compare)
        parts = compare(mine, other)
        print(
            f"{len(mine)} digests compared: "
            + ("identical" if not parts else f"{len(parts)} differ")
        )
        print("\n".join(parts))
        if parts:
            from srlib.book.digests import root_of
            from srlib.book.parting import say

            print(say(mine, other, root_of(args.compare_with), root_of(args.compare)))
        return 0 if not parts else 2
    if args.allow_corpus_change:
        os.environ["SRLIB_ALLOW_CORPUS_CHANGE"] = "1"  # the kernels inherit it
    from srlib.models import numerics

    print(f"[book] {numerics.said()}")  # the kernels every chapter computes with
    book.execute(quick=args.quick, only=args.only, force=args.force, jobs=args.jobs)
    if not args.no_build:
        index = book.build()
        print(f"[book] built {index}")
        layout = index.parent.parent / book.LAYOUT_REPORT
        if layout.is_file():  # said last, where a reader of the log looks
            print(f"[book] the book is kept, with layout problems: {layout}")
    if args.record_digests:
        from srlib.book.digests import load, record_locked

        if args.no_build or args.only:
            raise InputError("--record-digests records a whole build: drop --no-build and --only")
        built = "quick" if args.quick else "full"
        lock, dropped = record_locked(load(book.ROOT), built)
        print(f"[book] {built} build's digests recorded in {lock}")
        for kind in dropped:
            print(f"[book] dropped the {built} record of {kind!r}: another corpus; record it anew")
    return 0


def _corpus(args: argparse.Namespace) -> int:
    from srlib.testbed.build import corpus_of

    for name in args.profile:
        corpus, key = corpus_of(name, args.cache_dir, record=args.record)
        print(f"[{name}] corpus {corpus.check['corpus']}: {corpus.check['status']}")
        print(f"  digest {corpus.check['digest']}")
        if corpus.check["first difference"]:
            print(f"  first difference: {corpus.check['first difference']}")
        print(corpus.sources.to_string())
    return 0


def _model(args: argparse.Namespace) -> int:
    from srlib.realmodel.describe import model_sentence
    from srlib.testbed import locked

    if args.record:
        print(f"recorded {args.name}: {locked.record(args.name)}")
    print(model_sentence(args.name))
    print(locked.folder(args.name))
    return 0


def _benchmarks(args: argparse.Namespace) -> int:
    from srlib.benchmarks.tables import availability

    table = availability()
    print(table.drop(columns="how to get it").to_string(index=False))
    for _, row in table[~table.available].iterrows():
        print(f"\n{row.benchmark}: {row['how to get it']}")
    return 0


def _check(args: argparse.Namespace) -> int:
    from srlib.benchmarks import load_benchmark
    from srlib.benchmarks.check import check_samples
    from srlib.benchmarks.tables import pass_table

    samples = load_benchmark(args.benchmark)[: args.limit]
    checks = check_samples(samples, timeout=args.timeout, workers=args.workers)
    print(pass_table(checks).to_string())
    failed = checks[~checks.passed]
    if len(failed):
        print(failed[["id", "status", "reason", "error"]].to_string(index=False))
    if args.output:
        checks.to_csv(args.output, index=False)
    return 0


def _variants(args: argparse.Namespace) -> int:
    from srlib.benchmarks import load_benchmark
    from srlib.transforms import make_variants_many
    from srlib.transforms.export import export, flatten

    samples = load_benchmark(args.benchmark)[: args.limit]
    sets = make_variants_many(samples, args.n, tuple(args.kinds), args.seed, workers=args.workers)
    path, side = export(flatten(sets), args.out, args.format)
    kept = sum(len(vs) for vs in sets)
    where = "in the same table" if side == path else side
    print(f"{kept} variants of {len(samples)} samples written to {path} (provenance: {where})")
    return 0


def _lab(args: argparse.Namespace) -> int:
    """JupyterLab from this environment, its kernels started as the book's
    (``runner.lab_environment``); the process becomes JupyterLab's."""
    import os
    import sys
    from pathlib import Path

    from srlib.book.runner import lab_environment

    extra = list(args.jupyter_args)
    extra = extra[1:] if extra[:1] == ["--"] else extra
    jupyter = str(Path(sys.executable).with_name("jupyter"))
    os.execve(jupyter, [jupyter, "lab", *extra], lab_environment())
    return 0  # not reached: the process is JupyterLab's now


def _serve(args: argparse.Namespace) -> int:
    from srlib.models.hf import HFModel
    from srlib.models.serve import serve

    model = HFModel(args.model, device=args.device, dtype=args.dtype, batch_size=args.batch_size)
    serve(model, args.host, args.port, args.served_model_name)
    return 0


def _records(args: argparse.Namespace) -> list:
    """The secret records ``input`` names (``sources.load_source``)."""
    from srlib.duplication.data.sources import load_source

    return load_source(
        args.input, args.format, args.files_root, args.size, args.scanned_files, args.seed
    )


def _dedup(args: argparse.Namespace) -> int:
    from srlib.duplication.dedup.partition import partition, partition_table

    records = _records(args)
    contexts = [r.context(args.window) for r in records]
    languages = [r.language for r in records]
    if args.scheduler:
        from distributed import Client

        from srlib.duplication.dedup.distributed import partition_dask

        with Client(args.scheduler) as client:
            parts = partition_dask(contexts, languages, client=client)
    else:
        parts = partition(contexts, languages, method=args.method, progress=True)
    print(partition_table(parts, [r.label for r in records]).to_string())
    if args.output:
        parts.insert(0, "id", [r.id for r in records])
        parts["label"] = [r.label for r in records]
        parts.to_csv(args.output, index=False)
    return 0


def _dedup_evaluate(args: argparse.Namespace) -> int:
    from pathlib import Path

    from srlib.duplication.impact import analysis, study, verdicts
    from srlib.duplication.impact.scenarios import leakage_table

    if args.profile not in study.PROFILES:
        raise SrlibError(f"unknown profile {args.profile!r}; choose from {sorted(study.PROFILES)}")
    changes = {"seed": args.seed}
    if args.models:
        changes["models"] = tuple(args.models)
    if args.scenarios:
        changes["scenarios"] = tuple(args.scenarios)
    if args.folds:
        changes["k"] = args.folds
    if args.encoder:
        changes["encoder"] = args.encoder
    config = study.PROFILES[args.profile].replace(**changes)
    unknown = set(config.models) - set(study.KNOWN)
    if unknown:
        raise SrlibError(f"unknown model(s) {sorted(unknown)}; choose from {study.KNOWN}")
    records = _records(args)
    try:
        prepared = study.prepare(records, config, args.window, args.method, progress=True)
    except ValueError as e:
        raise SrlibError(f"{args.input}: {e}") from e
    print(leakage_table(prepared.folds, prepared.contexts, prepared.languages).to_string())
    results = study.run_study(prepared.data, prepared.folds, config, args.out)
    found = analysis.analyse(prepared, args.out, args.boot, args.seed, args.resample)
    study.summary(results).to_csv(Path(args.out) / "summary.csv")
    found.write(args.out)
    print(f"\n{analysis.first_table(found).to_string()}\n")
    if "mixed → repository" in set(found.steps.index.get_level_values(-1)):
        print(f"{verdicts.headline(found.steps)}\n")
    for topic, sentences in found.sentences().items():
        if sentences:  # a topic whose scenarios did not run says nothing
            print(f"{topic}:")
            for sentence in sentences:
                print(f"  {sentence}")
    print(f"\ntables in {args.out}")
    return 0


def _audit(args: argparse.Namespace) -> int:
    from srlib.audit import audit

    result = audit(
        args.model,
        args.benchmark,
        args.out,
        n=args.n,
        setting=args.setting,
        reference=args.reference,
        control=args.control,
        limit=args.limit,
        kinds=args.kinds,
        seed=args.seed,
        max_new_tokens=args.max_new_tokens,
        device=args.device,
        dtype=args.dtype,
        batch_size=args.batch_size,
        detectors=args.detector or (),
    )
    columns = [
        c
        for c in (
            "model",
            "benchmark",
            "decision",
            "rate",
            "chance",
            "null_rate",
            "excess",
            "excess_low",
            "excess_high",
            "p_vs_null",
            "pooled_p",
        )
        if c in result.summary
    ]
    print(result.summary[columns].to_string(index=False, float_format=lambda x: f"{x:.3g}"))
    for label, ran in result.settings.items():
        print(f"{label}: ran {', '.join(ran)}")
    summary = result.summary
    for row in result.failures.itertuples():
        print(f"{row.detector} on {row.model} / {row.benchmark}: {row.calls} calls {row.reason}")
    if result.left_out:
        print(f"left out by --setting {args.setting}: {', '.join(result.left_out)}")
    print(f"report: {result.out / 'report.html'}")
    return 0 if "decided" in summary and (summary.decided > 0).any() else 1
