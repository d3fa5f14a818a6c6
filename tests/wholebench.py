"""Whole-benchmark checks: every MBPP reference solution in the sandbox, every MBPP and
HumanEval rename variant checked byte for byte, the memorisation test's positive control on
every vendored CredData candidate; and two of the suite's longest simulations (the best of ten,
clustered coverage). Each returns a small JSON-able result that
its test asserts on. With the quick book building beside the suite (``quickbook.py``), that
process computes those in ``JOBS`` on its own core while the suite's other tests run, and
the tests read its answers; any other, or a test run alone, computes its check itself
(``conftest.background_job``)."""

from __future__ import annotations

import ast
import io
import warnings

EARLY = (
    "mbpp_rename_problems",
    "humaneval_rename_problems",
    "best_of_ten",
    "clustered_coverage",
)  # before the quick chapters
LATE = ("vendored_memoriser",)  # after them: the chapters' caches (the Dask test copies the
# testbed's) are then made by the time the suite's middle reads them
JOBS = EARLY + LATE  # the quick book's process takes these; mbpp_canonical_failures and the
# simulations at the book's design (test_pooling, test_power) run in the tests' own process, so
# that the book's process, which also re-executes every chapter with nbval, does not finish last


def mbpp_canonical_failures() -> list[int]:
    """The MBPP task ids whose reference solution fails its own tests in the sandbox."""
    from srlib.benchmarks import load_benchmark
    from srlib.benchmarks.check import check_samples

    # mbpp/123 runs about 4 s alone: a loaded machine must not turn it into a timeout
    checks = check_samples(load_benchmark("mbpp"), progress=False, timeout=30)
    return sorted(int(i.removeprefix("mbpp/")) for i in checks.id[~checks.passed])


def defined_functions(code: str) -> set[str]:
    """Names of the module-level functions ``code`` defines."""
    with warnings.catch_warnings():  # MBPP code has invalid escapes: not this check's business
        warnings.simplefilter("ignore", SyntaxWarning)
        tree = ast.parse(code)
    return {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}


def rename_problems(benchmark: str) -> dict:
    """Every sample of ``benchmark`` with n = 2 function and variable rename variants: how
    many were checked, the samples, and each variant whose bytes changed beyond its renames
    or whose record lost its entry point (id → problems)."""
    from srlib.benchmarks import load_benchmark
    from srlib.transforms import make_variants_many
    from srlib.transforms.surface import rename_problems as problems_of

    samples = load_benchmark(benchmark)
    sets = make_variants_many(
        samples, 2, kinds=("function", "variable"), validate=False, progress=False
    )
    checked, bad = 0, {}
    for sample, variants in zip(samples, sets, strict=True):
        for v in variants:
            found = [str(p) for p in problems_of(sample, v, v.renames)]
            if v.entry_point not in defined_functions(v.code):
                found.append(f"entry point {v.entry_point!r} is not defined")
            if found:
                bad[v.id] = found
            checked += 1
    return {"samples": len(samples), "checked": checked, "problems": bad}


def mbpp_rename_problems() -> dict:
    """``rename_problems`` of MBPP (974 samples)."""
    return rename_problems("mbpp")


def humaneval_rename_problems() -> dict:
    """``rename_problems`` of HumanEval (164 samples)."""
    return rename_problems("humaneval")


def memoriser_study(records: list, folder: str) -> dict:
    """The shape rule and a 1-nearest-neighbour memoriser through the study (quick folds,
    Mixed, Unique and File, the book's feature count) on ``records``, analysed: the
    memoriser's memorisation test (``drops.duplicate_gain``) and what the verdicts say."""
    from srlib.duplication.impact.analysis import analyse
    from srlib.duplication.impact.study import PROFILES, prepare, read_results, run_study

    config = PROFILES["quick"].replace(
        models=("shape rule", "nearest neighbour"),
        scenarios=("mixed", "unique", "file"),
        rf_max_tfidf=1000,  # the book's cpu profile's features
    )
    prepared = prepare(records, config)
    run_study(prepared.data, prepared.folds, config, folder, progress=False)
    found = analyse(prepared, folder, n_boot=200)
    gain = found.gain.loc["nearest neighbour"]
    rows = found.digests(read_results(folder, config))
    for row in rows:  # what the chapter publishes, kept as the appendix keeps it
        row.pop("frame").to_parquet(io.BytesIO())
    return {
        "digests": {r["name"]: r["what"] for r in rows},
        "gain": [float(gain.gain), float(gain.low), float(gain.high)],
        "family-wise": str(gain["family-wise"]),
        "family": found.family_size,
        "rule net drop": float(found.steps.loc[("shape rule", "mixed → unique"), "net drop"]),
        "said": found.sentences()["memorisation"],
    }


def vendored_memoriser() -> dict:
    """``memoriser_study`` on every vendored CredData candidate."""
    import tempfile

    from srlib.duplication.data.sources import load_source

    with tempfile.TemporaryDirectory() as folder:
        return memoriser_study(load_source("creddata", "records", None, 0, 0, 0), folder)


def best_of_ten() -> dict:
    """``test_contrasts.best_of_ten_trials``: the best of ten equal detectors."""
    from test_contrasts import best_of_ten_trials

    return best_of_ten_trials()


def clustered_coverage() -> dict:
    """``test_contrasts.clustered_coverage``: problem-clustered against per-row intervals."""
    from test_contrasts import clustered_coverage as coverage

    return coverage()
