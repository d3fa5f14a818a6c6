"""The ``srlib`` command: build the book, check benchmarks, export variants, serve a model,
audit models for leakage, deduplicate and evaluate secret detectors.

A user error (a bad file, name, folder or server) ends with one line
``srlib <command>: <what is wrong>`` on stderr and exit status 1; ``--debug`` shows the
traceback instead. Anything else is a bug and keeps its traceback."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from srlib.errors import InputError, SrlibError, describe


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
        print(f"[book] built {book.build()}")
    if args.record_digests:
        from srlib.book.digests import load, record_locked

        if args.no_build or args.only:
            raise InputError("--record-digests records a whole build: drop --no-build and --only")
        built = "quick" if args.quick else "full"
        lock = record_locked(load(book.ROOT), built)
        print(f"[book] {built} build's digests recorded in {lock}")
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
    print(f"{kept} variants of {len(samples)} samples written to {path} (provenance: {side})")
    return 0


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

    from srlib.duplication.impact import analysis, study
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
    unknown = set(config.models) - set(study.MODELS)
    if unknown:
        raise SrlibError(f"unknown model(s) {sorted(unknown)}; choose from {study.MODELS}")
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
    for topic, sentences in found.sentences().items():
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
    print(f"report: {result.out / 'report.html'}")
    return 0


USER_ERRORS = (SrlibError, OSError)
"""What the command line reports in one line: bad inputs and missing resources."""


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``srlib`` console script."""
    debug = argparse.ArgumentParser(add_help=False)
    debug.add_argument(
        "--debug",
        action="store_true",
        default=argparse.SUPPRESS,
        help="show the Python traceback of an error",
    )
    parser = argparse.ArgumentParser(prog="srlib", description=__doc__, parents=[debug])
    sub = parser.add_subparsers(dest="command", required=True)

    def command(name: str, help: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=help, parents=[debug])

    def variant_options(p: argparse.ArgumentParser) -> None:
        p.add_argument("--n", type=int, default=5, help="variants per sample")
        kinds = ["function", "variable", "test"]
        p.add_argument("--kinds", nargs="+", default=kinds, choices=kinds)
        p.add_argument("--seed", type=int, default=0, help="same seed, same variants")

    p = command("book", "execute the notebooks of runs.yml and build the book")
    p.add_argument("--quick", action="store_true", help="use each run's quick parameters")
    p.add_argument("--only", nargs="+", help="notebook names (stems) to execute")
    p.add_argument("--force", action="store_true", help="re-execute up-to-date notebooks too")
    p.add_argument(
        "--jobs", type=int, default=1, help="chapters executed side by side (one kernel each)"
    )
    p.add_argument("--no-build", action="store_true", help="execute only, skip jupyter-book")
    p.add_argument(
        "--allow-corpus-change",
        action="store_true",
        help="go on when the training corpus differs from the lock's (the appendix says so)",
    )
    p.add_argument(
        "--compare",
        metavar="OTHER_BUILD",
        help="compare this build's digests with another's (its folder or digests.json/.csv)",
    )
    p.add_argument("--compare-with", default=".", help="this build's folder (default: here)")
    p.add_argument(
        "--record-digests",
        action="store_true",
        help="record this build's digests of record in the lock (with --quick: what tests check)",
    )
    p.set_defaults(func=_book)

    p = command("corpus", "build the testbed's training corpus from the locked sources, check it")
    p.add_argument("--profile", nargs="+", default=["cpu", "quick"], help="testbed profiles")
    p.add_argument("--cache-dir", default=".srlib-cache/testbed", help="the testbed's cache")
    p.add_argument(
        "--record", action="store_true", help="record these corpora's digests in the lock"
    )
    p.set_defaults(func=_corpus)

    p = command("benchmarks", "list benchmarks and whether they load here")
    p.set_defaults(func=_benchmarks)

    p = command("check", "run a benchmark's reference solutions in the sandbox")
    p.add_argument("benchmark", help="registry name or jsonl:PATH")
    p.add_argument("--limit", type=int, default=None, help="first N samples only")
    p.add_argument("--timeout", type=float, default=10.0, help="seconds per program")
    p.add_argument("--workers", type=int, default=None, help="parallel sandboxes")
    p.add_argument("--output", help="write the per-sample table to this CSV file")
    p.set_defaults(func=_check)

    p = command("variants", "write a benchmark's validated variants in its published format")
    p.add_argument("benchmark", help="registry name (humaneval, mbpp, ...) or jsonl:PATH")
    variant_options(p)
    p.add_argument("--limit", type=int, default=None, help="first N samples only")
    p.add_argument("--workers", type=int, default=None, help="parallel sandboxes")
    p.add_argument("--format", choices=("native", "srlib"), default="native")
    p.add_argument("--out", required=True, help="the JSONL file to write")
    p.set_defaults(func=_variants)

    p = command("serve", "an OpenAI-compatible completions server for a local model")
    p.add_argument("--model", required=True, help="folder of a causal LM (or a cached HF id)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--device", default="cpu")
    p.add_argument("--dtype", default="float32")
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument(
        "--served-model-name",
        help="the name clients request (vLLM's flag); default: the model folder's name",
    )
    p.set_defaults(func=_serve)

    def secrets_input(p: argparse.ArgumentParser) -> None:
        from srlib.duplication.data.sources import FORMATS

        p.add_argument(
            "input",
            help="JSONL secret records, a SecretBench CSV, a CredData checkout, "
            "'creddata' (real, vendored) "
            "or 'offline' (generated)",
        )
        p.add_argument(
            "--format",
            choices=FORMATS,
            default="records",
            help="a path's layout: JSONL records, a SecretBench CSV, or a CredData checkout",
        )
        p.add_argument("--files-root", help="folder of the files a SecretBench CSV points to")
        p.add_argument("--size", type=int, default=20_000, help="records of the offline corpus")
        p.add_argument(
            "--scanned-files", type=int, default=1500, help="files the offline corpus scans"
        )
        p.add_argument("--seed", type=int, default=0)
        p.add_argument("--window", type=int, default=200, help="context characters per side")
        p.add_argument("--method", choices=("lsh", "exhaustive"), default="lsh")

    p = command("dedup", "exact / near-duplicate / unique partition of secrets")
    secrets_input(p)
    p.add_argument("--scheduler", help="a Dask scheduler address: run the partition there")
    p.add_argument("--output", help="write one row per secret (no secret values) to this CSV")
    p.set_defaults(func=_dedup)

    p = command(
        "dedup evaluate",
        "secret detectors under the mixed / near-duplicate / unique / file / repository "
        "scenarios (k folds)",
    )
    secrets_input(p)
    p.add_argument("--out", required=True, help="folder for folds, per-fold results, tables")
    p.add_argument("--profile", default="cpu", help="cpu (default), quick or gpu")
    p.add_argument("--models", nargs="+", help="a subset of the detector families")
    p.add_argument(
        "--scenarios",
        nargs="+",
        help="a subset of mixed, near-duplicate, unique, file, repository (default: all)",
    )
    p.add_argument(
        "--resample",
        default="repository",
        choices=("repository", "file", "candidate"),
        help="the intervals' unit (default: repositories, then files within them)",
    )
    p.add_argument("--boot", type=int, default=1000, help="bootstrap resamples")
    p.add_argument("--folds", type=int, help="folds per scenario (profile default: 5)")
    p.add_argument("--encoder", help="HF encoder folder or cached id (default all-MiniLM-L6-v2)")
    p.set_defaults(func=_dedup_evaluate)

    p = command("audit", "leakage audit of models × benchmarks against an empirical null")
    p.add_argument(
        "--model",
        action="append",
        required=True,
        help="a checkpoint folder, an HF id in the local cache, or URL#name of an "
        "OpenAI-compatible server (repeat for several)",
    )
    p.add_argument(
        "--benchmark", action="append", required=True, help="registry name or jsonl:PATH (repeat)"
    )
    variant_options(p)
    p.add_argument("--setting", choices=("gray", "black", "both"), default="both")
    p.add_argument("--reference", help="a model that never saw the benchmarks: the null")
    p.add_argument("--control", help="samples the models cannot have seen (benchmark spec)")
    p.add_argument("--limit", type=int, help="first N samples of each benchmark")
    p.add_argument("--max-new-tokens", type=int, default=128, help="black-box continuation")
    p.add_argument("--device", default="cpu")
    p.add_argument("--dtype", default="float32", help="bfloat16 on GPUs")
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--out", required=True, help="folder for the tables and report.html")
    p.add_argument(
        "--detector",
        action="append",
        help="your own detector, 'package.module:function' or 'file.py:function' (repeat); "
        "its kind is read from its arguments (see srlib.detection.plugins)",
    )
    p.set_defaults(func=_audit)

    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:2] == ["dedup", "evaluate"]:  # a sub-command of dedup, registered as one word
        argv = ["dedup evaluate", *argv[2:]]
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except USER_ERRORS as e:
        if getattr(args, "debug", False):
            raise
        print(f"srlib {args.command}: {describe(e)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"srlib {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
