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
    assert (rest.ngram_overlap < 0.05).all()  # at n = 8, ``) -> bool: """`` is a shared run


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


SPREAD = (
    "def summarise_scores(records, threshold):\n"
    "    passing = sorted(records)\n"
    "    lowest = min(passing)\n"
    "    highest = max(passing)\n"
    "    middle = len(passing) // 2\n"
    "    median_value = passing[middle]\n"
    "    spread = highest - lowest\n"
    "    return lowest, highest, median_value, spread\n"
)


def test_the_corpus_rules_see_short_solutions_prompts_and_near_copies_without_a_shared_run():
    """What a decontaminated corpus must not keep, each case missed by a rule that looked only
    inside documents sharing a 13-token run of the solution: a short solution copied verbatim
    under its signature (fewer than 13 code tokens), a prompt's signature and docstring with
    another body, and a near-duplicate function that shares no 13-token run (a ``;`` ends each
    of its short lines, a trailing comma breaks its signature: the same identifiers, no run in
    common). The solution's one line under another function is no copy; nor is a document that
    holds only a benchmark's prompt template (MBPP's, a run every MBPP sample shares)."""
    from srlib.codetext import code_tokens
    from srlib.duplication.dedup.overlap import _grams, contaminated_documents

    humaneval = {s.id: s for s in load_benchmark("humaneval")}
    short, prompted = humaneval["HumanEval/23"], humaneval["HumanEval/0"]
    assert len(code_tokens(short.solution)) < 13
    spread = program_sample(SPREAD, "", "summarise_scores", id="toy/spread")
    copy = SPREAD.replace("threshold)", "threshold,)").replace("\n    ", ";\n    ")
    copy = copy.rstrip("\n") + ";\n"
    assert not _grams(code_tokens(SPREAD), 13) & _grams(code_tokens(copy), 13)
    docs = [
        ("short.py", "import sys\n\n\ndef strlen(string: str) -> int:\n    return len(string)\n"),
        ("line.py", "def size(string):\n    return len(string)\n"),  # one common line: no copy
        ("prompt.py", prompted.prompt + "    return False\n"),
        ("near.py", "import math\n\n\n" + copy),
        ("clean.py", "def unrelated(a, b):\n    return sorted(set(a) ^ set(b))\n"),
    ]
    mbpp = load_benchmark("mbpp", split="test")[:12]
    template = mbpp[0].prompt.split(":")[0] + ": write a parser.\n"
    docs.append(("template.md", template))
    found = contaminated_documents([short, prompted, spread, *mbpp], docs).set_index("document")
    assert sorted(found.index) == ["near.py", "prompt.py", "short.py"]
    assert found.reason.to_dict() == {"short.py": "exact", "prompt.py": "exact", "near.py": "near"}
    assert found.samples["near.py"] == ["toy/spread"]
    assert found.samples["short.py"] == [short.id] and found.samples["prompt.py"] == [prompted.id]


def test_the_near_index_finds_what_comparing_every_reference_finds():
    """The fast path (MinHash LSH candidates, verified) beside the slow reference (every
    reference compared): the same near duplicates on HumanEval's functions against edited
    copies of them."""
    from srlib.duplication.dedup.neardup import Fingerprint, NearIndex
    from srlib.duplication.dedup.tokens import context_tokens

    codes = [s.code for s in load_benchmark("humaneval")[:60]]
    refs = [Fingerprint.of(context_tokens(c, "python")) for c in codes]
    edited = [c.replace("result", "out").replace("numbers", "xs") for c in codes[::2]]
    items = [Fingerprint.of(context_tokens(c, "python")) for c in edited + codes[1::7]]
    fast = NearIndex(refs, min_tokens=5).near(items)
    slow = NearIndex(refs, min_tokens=5, method="exhaustive").near(items)
    assert fast == slow and sum(map(len, slow)) >= len(items) // 2
    assert NearIndex(refs, min_tokens=10).near([]) == []
    short = Fingerprint.of(list("abcdefgh"))  # 8 distinct tokens: below min_tokens either side
    assert NearIndex([Fingerprint.of(list("abcdefghij"))], min_tokens=10).near([short]) == [set()]
    assert NearIndex([Fingerprint.of(list("abcdefghij"))], min_tokens=8).near([short]) == [{0}]
