"""srlib: data leakage in the evaluation of code models (SrDetection and duplication studies)."""

from srlib.models import numerics

numerics.pin()  # before anything imports torch: the kernels every process computes with

from srlib.benchmarks import available_benchmarks, load_benchmark  # noqa: E402
from srlib.execution.sandbox import ExecResult, run_program, run_programs  # noqa: E402
from srlib.samples import Sample, read_jsonl, write_jsonl  # noqa: E402

__version__ = "0.1.0"

__all__ = [
    "ExecResult",
    "Sample",
    "available_benchmarks",
    "load_benchmark",
    "read_jsonl",
    "run_program",
    "run_programs",
    "write_jsonl",
]
