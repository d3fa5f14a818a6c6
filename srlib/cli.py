"""The ``srlib`` command: build the book, check benchmarks, serve a model, deduplicate.

A user error (a bad file, name, folder or server) ends with one line
``srlib <command>: <what is wrong>`` on stderr and exit status 1; ``--debug`` shows the
traceback instead. Anything else is a bug and keeps its traceback."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from srlib.errors import SrlibError, describe


def _book(args: argparse.Namespace) -> int:
    from srlib import book

    book.execute(quick=args.quick, only=args.only, force=args.force)
    if not args.no_build:
        print(f"[book] built {book.build()}")
    return 0


def _benchmarks(args: argparse.Namespace) -> int:
    from srlib.tables import availability

    table = availability()
    print(table.drop(columns="how to get it").to_string(index=False))
    for _, row in table[~table.available].iterrows():
        print(f"\n{row.benchmark}: {row['how to get it']}")
    return 0


def _check(args: argparse.Namespace) -> int:
    from srlib.benchmarks import load_benchmark
    from srlib.execution import check_samples
    from srlib.tables import pass_table

    samples = load_benchmark(args.benchmark)[: args.limit]
    checks = check_samples(samples, timeout=args.timeout, workers=args.workers)
    print(pass_table(checks).to_string())
    failed = checks[~checks.passed]
    if len(failed):
        print(failed[["id", "status", "reason", "error"]].to_string(index=False))
    if args.output:
        checks.to_csv(args.output, index=False)
    return 0


def _serve(args: argparse.Namespace) -> int:
    from srlib.models.hf import HFModel
    from srlib.models.serve import serve

    model = HFModel(args.model, device=args.device, dtype=args.dtype, batch_size=args.batch_size)
    serve(model, args.host, args.port, args.served_model_name)
    return 0


def _dedup(args: argparse.Namespace) -> int:
    from srlib.duplication import secretdata
    from srlib.duplication.partition import partition, partition_table

    if args.format == "secretbench":
        if not args.files_root:
            raise SrlibError("--files-root is required with --format secretbench")
        records = secretdata.load_secretbench(args.input, args.files_root)
    else:
        records = secretdata.load_records(args.input)
    contexts = [r.context(args.window) for r in records]
    languages = [r.language for r in records]
    if args.scheduler:
        from distributed import Client

        from srlib.duplication.distributed import partition_dask

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

    p = command("book", "execute the notebooks of runs.yml and build the book")
    p.add_argument("--quick", action="store_true", help="use each run's quick parameters")
    p.add_argument("--only", nargs="+", help="notebook names (stems) to execute")
    p.add_argument("--force", action="store_true", help="re-execute up-to-date notebooks too")
    p.add_argument("--no-build", action="store_true", help="execute only, skip jupyter-book")
    p.set_defaults(func=_book)

    p = command("benchmarks", "list benchmarks and whether they load here")
    p.set_defaults(func=_benchmarks)

    p = command("check", "run a benchmark's reference solutions in the sandbox")
    p.add_argument("benchmark", help="registry name or jsonl:PATH")
    p.add_argument("--limit", type=int, default=None, help="first N samples only")
    p.add_argument("--timeout", type=float, default=10.0, help="seconds per program")
    p.add_argument("--workers", type=int, default=None, help="parallel sandboxes")
    p.add_argument("--output", help="write the per-sample table to this CSV file")
    p.set_defaults(func=_check)

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

    p = command("dedup", "exact / near-duplicate / unique partition of secrets")
    p.add_argument("input", help="JSONL secret records, or a SecretBench CSV")
    p.add_argument("--format", choices=("records", "secretbench"), default="records")
    p.add_argument("--files-root", help="folder of the files a SecretBench CSV points to")
    p.add_argument("--window", type=int, default=200, help="context characters per side")
    p.add_argument("--method", choices=("lsh", "exhaustive"), default="lsh")
    p.add_argument("--scheduler", help="a Dask scheduler address: run the partition there")
    p.add_argument("--output", help="write one row per secret (no secret values) to this CSV")
    p.set_defaults(func=_dedup)

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
