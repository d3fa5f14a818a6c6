"""The overlap audit finds planted copies of benchmark solutions, and nothing else."""

import json

from conftest import program_sample

from srlib.benchmarks import load_benchmark
from srlib.duplication.dedup.overlap import local_corpus, overlap_audit, shard_corpus


def test_planted_exact_and_near_copies_are_found(tmp_path):
    samples = load_benchmark("humaneval")[:4]
    exact = samples[0].code  # prompt + solution, verbatim
    renamed = samples[1].code.replace("paren_string", "text").replace("result", "output")
    docs = [
        ("lib/a.py", "import os\n\n" + exact + "\n\ndef other():\n    return 1\n"),
        ("lib/b.py", "# vendored\n" + renamed),
        ("lib/c.py", "def unrelated(x):\n    return [y * 2 for y in x if y]\n"),
    ]
    table = overlap_audit(samples, docs, n=8).set_index("id")
    first, second, rest = table.loc[samples[0].id], table.loc[samples[1].id], table.iloc[2:]
    assert first.exact and first.exact_in == "lib/a.py" and first.ngram_overlap == 1.0
    assert not second.exact and 0 < second.ngram_overlap < 1
    assert not rest.exact.any() and not rest.near.any()
    assert (rest.ngram_overlap.fillna(0) == 0).all()  # NaN: a solution shorter than n tokens


def test_near_duplicate_function_is_found_without_being_exact(tmp_path):
    sample = program_sample(
        "def moving_average(values, window):\n"
        "    totals = [sum(values[i:i + window]) for i in range(len(values) - window + 1)]\n"
        "    return [t / window for t in totals]\n",
        "assert moving_average([1, 2, 3], 2) == [1.5, 2.5]\n",
        "moving_average",
    )
    edited = sample.solution.replace("totals", "sums")  # T0 Jaccard 0.8, multiset 0.79
    table = overlap_audit([sample], [("x.py", "import math\n" + edited)], n=5, min_tokens=5)
    assert table.near.iloc[0] and not table.exact.iloc[0]


def test_corpora_from_this_machine_and_from_shards(tmp_path):
    docs = list(local_corpus(max_files=5))
    assert len(docs) == 5 and all(name.endswith(".py") for name, _ in docs)
    shard = tmp_path / "shard.jsonl"
    shard.write_text(json.dumps({"content": "def f():\n    return 1\n"}) + "\n")
    assert list(shard_corpus([shard])) == [("shard.jsonl:1", "def f():\n    return 1\n")]


def test_dask_audit_equals_the_local_one(dask_client):
    samples = load_benchmark("humaneval")[:3]
    docs = [(f"d{i}", s.code) for i, s in enumerate(samples[:2])] + [("e", "x = 1\n")]
    remote = overlap_audit(samples, docs, n=8, client=dask_client, npartitions=2)
    local = overlap_audit(samples, docs, n=8)
    assert remote.equals(local) and local.exact.tolist() == [True, True, False]


def test_calibration_twins_of_evaluated_samples_are_found_verbatim_or_near():
    from srlib.duplication.dedup.overlap import near_twins

    solution = (
        "def moving_average(values, window):\n"
        "    totals = [sum(values[i:i + window]) for i in range(len(values) - window + 1)]\n"
        "    return [t / window for t in totals]\n"
    )
    evaluated = [program_sample(solution, "", id="bench/1")]
    pool = [
        program_sample(solution.replace("    ", "\t"), "", id="cal/exact"),
        program_sample(solution.replace("totals", "sums"), "", id="cal/near"),
        program_sample("def f(x):\n    return [y * 2 for y in x if y]\n", "", id="cal/other"),
    ]
    twins = near_twins(pool, evaluated, min_tokens=5)
    assert twins.values.tolist() == [
        ["cal/exact", "bench/1", "exact"],
        ["cal/near", "bench/1", "near"],
    ]
    assert near_twins(pool[2:], evaluated, min_tokens=5).empty


def test_the_books_calibration_holds_no_twin_of_an_evaluated_sample():
    from srlib.codetext import code_tokens
    from srlib.duplication.dedup.neardup import Fingerprint, exhaustive_pairs
    from srlib.testbed.build import clean_calibration, load_samples
    from srlib.testbed.config import profile

    config = profile("cpu")
    samples, pool = load_samples(config.benchmarks), load_samples(config.calibration)
    kept, twins = clean_calibration(pool, samples)
    assert set(twins.id) == {s.id for s in pool} - {s.id for s in kept}
    assert 0 < len(pool) - len(kept) < len(pool) / 5  # the MBPP twins, and only they, left out
    items = kept + samples  # the slow reference: every pair compared
    pairs = exhaustive_pairs(
        [Fingerprint.of(code_tokens(s.solution)) for s in items], min_tokens=10
    )
    assert not [p for p in pairs if min(p) < len(kept) <= max(p)]
