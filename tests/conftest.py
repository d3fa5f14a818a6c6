"""Shared test helpers."""

from srlib.samples import Sample


def program_sample(solution: str, tests: str, entry_point: str = "f", **fields) -> Sample:
    """A small standalone sample (MBPP-shaped) for tests: a solution and assert lines."""
    base = {"id": "toy/1", "benchmark": "toy", "prompt": "", "format": "standalone"}
    return Sample(solution=solution, tests=tests, entry_point=entry_point, **{**base, **fields})
