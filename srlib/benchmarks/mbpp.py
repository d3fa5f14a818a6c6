"""MBPP (Austin et al. 2021, CC BY 4.0), vendored under ``data/mbpp/`` with its provenance."""

from __future__ import annotations

from srlib.benchmarks import UnknownBenchmark, register_benchmark
from srlib.benchmarks._files import data_dir
from srlib.jsonl import iter_jsonl
from srlib.samples import Sample, SampleFormatError

SPLITS: dict[str, range] = {
    "prompt": range(1, 11),
    "test": range(11, 511),
    "validation": range(511, 601),
    "train": range(601, 975),
}

PROMPT = (
    "You are an expert Python programmer, and here is your task: {text} "
    "Your code should pass these tests:\n\n{tests}\n"
)
"""The prompt of the MBPP paper (Austin et al. 2021, Fig. 1): description, then the asserts."""

KNOWN_FAILURES: dict[int, str] = {
    341: "expects set iteration order that CPython does not produce for {6, ..., 11}",
    596: "expected sys.getsizeof values depend on the Python build (written for another one)",
    642: "expected set-of-tuples layout depends on the CPython version's tuple hash",
}
"""Published MBPP problems whose reference solution fails its own tests here, and why."""


@register_benchmark("mbpp")
def load_mbpp(split: str = "all", path: str | None = None) -> list[Sample]:
    """MBPP problems of one conventional split (``all``, ``prompt``, ``test``, ``validation``,
    ``train``); the solution is the published code, the tests its three asserts."""
    if split != "all" and split not in SPLITS:
        raise UnknownBenchmark(
            f"unknown MBPP split {split!r}; choose 'all' or one of {list(SPLITS)}"
        )
    file = path or data_dir() / "mbpp" / "mbpp.jsonl"
    samples = []
    for lineno, r in iter_jsonl(file):
        try:
            task_id = int(r["task_id"])
            if split != "all" and task_id not in SPLITS[split]:
                continue
            samples.append(mbpp_sample(r, task_id, split=_split_of(task_id)))
        except (KeyError, TypeError, ValueError) as e:
            raise SampleFormatError(f"{file}:{lineno}: bad MBPP record: {e}") from e
    return samples


def _split_of(task_id: int) -> str:
    return next((name for name, ids in SPLITS.items() if task_id in ids), "unknown")


def mbpp_sample(
    r: dict, task_id: int | str, benchmark: str = "mbpp", split: str | None = None
) -> Sample:
    """A sample from a record in MBPP's format (``text``, ``code``, ``test_list``; optionally
    ``test_setup_code`` and ``challenge_test_list``): the paper's prompt, the asserts as tests.
    Another dataset in this format (``hf.load_hf``) names its own ``benchmark``; the vendored
    MBPP names each problem's conventional ``split``."""
    tests = "\n".join(r["test_list"])
    split = {"split": split} if split is not None else {}
    return Sample(
        id=f"{benchmark}/{task_id}",
        benchmark=benchmark,
        prompt=PROMPT.format(text=r["text"], tests=tests),
        solution=r["code"],
        tests=tests + "\n",
        entry_point=_entry_point(r["code"], r["test_list"]),
        format="standalone",
        setup=r.get("test_setup_code") or "",
        metadata={
            "task_id": task_id,
            **split,
            "text": r["text"],
            "test_list": list(r["test_list"]),
            "challenge_test_list": list(r.get("challenge_test_list") or []),
        },
        text_sep="\n",
    )


def _entry_point(code: str, test_list: list[str]) -> str:
    """The first function the asserts call that the solution defines (records do not name it)."""
    import ast
    import builtins
    import re

    defined = set(re.findall(r"^\s*(?:def|class)\s+(\w+)", code, re.M))
    calls = [
        node.func.id
        for test in test_list
        for node in ast.walk(ast.parse(test))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    ]
    for name in calls:
        if name in defined:
            return name
    return next((n for n in calls if not hasattr(builtins, n)), "")
