"""The ``srlib`` command: build the book, check benchmarks, export variants, serve a model,
audit models for leakage, deduplicate and evaluate secret detectors.

A user error (a bad file, name, folder or server) ends with one line
``srlib <command>: <what is wrong>`` on stderr and exit status 1; ``--debug`` shows the
traceback instead. Anything else is a bug and keeps its traceback."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from srlib.cli.parser import parser
from srlib.errors import SrlibError, describe

USER_ERRORS = (SrlibError, OSError)
"""What the command line reports in one line: bad inputs and missing resources."""


def parse(argv: Sequence[str]) -> argparse.Namespace:
    """The parsed arguments of one ``srlib`` command line (runs nothing; a bad one exits 2)."""
    argv = list(argv)
    if argv[:2] == ["dedup", "evaluate"]:  # a sub-command of dedup, registered as one word
        argv = ["dedup evaluate", *argv[2:]]
    return parser().parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``srlib`` console script."""
    args = parse(sys.argv[1:] if argv is None else argv)
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
