"""Secret contexts, tokens, and the exact / near / unique partition (LSH = exhaustive)."""

import json
import random

import pytest
from synthetic import code_windows

from srlib.duplication.data.contexts import Context, offset, secret_context
from srlib.duplication.dedup.neardup import (
    Fingerprint,
    exhaustive_pairs,
    is_near,
    jaccard,
    lsh_pairs,
    multiset_jaccard,
)
from srlib.duplication.dedup.partition import fingerprints, partition, partition_table
from srlib.duplication.dedup.tokens import context_tokens, generic_tokens, python_tokens


def test_secret_context_excludes_the_secret_and_clips_at_the_edges():
    text = "x" * 300 + "SECRET" + "y" * 50
    c = secret_context(text, 300, 306, window=200)
    assert c.before == "x" * 200 and c.after == "y" * 50 and "SECRET" not in c.text
    assert secret_context("abSECcd", 2, 5, window=1) == Context("b", "c")
    with pytest.raises(ValueError, match="outside"):
        secret_context("abc", 2, 9)


def test_offset_from_line_and_column():
    text = "ab\r\ncd\nef"
    assert text[offset(text, 2, 1)] == "c" and text[offset(text, 3, 2)] == "f"
    assert text[offset(text, 2, 0, one_based_column=False)] == "c"
    with pytest.raises(ValueError, match="line 9"):
        offset(text, 9, 1)


def test_python_tokens_keep_names_and_strings_not_keywords_or_numbers():
    assert python_tokens("if key == 'abc':\n    x = 42\n") == ["key", "'abc'", "x"]
    assert python_tokens('token = "unterminated') is None
    assert context_tokens('token = "unterminated', "python") == ["token", '"unterminated']


def test_generic_tokens_for_other_languages():
    js = 'const apiKey = "abc"; function load(url) { return fetch(url, 42); }'
    assert generic_tokens(js) == ["apiKey", '"abc"', "load", "url", "fetch", "url"]


def test_jaccards_by_hand_and_inclusive_thresholds():
    a, b = Fingerprint.of(list("aabbc")), Fingerprint.of(list("abbcd"))
    assert jaccard(a.t0, b.t0) == pytest.approx(3 / 4)
    assert multiset_jaccard(a.t1, b.t1) == pytest.approx(4 / 6)  # min: a1 b2 c1; max: a2 b2 c1 d1
    x = Fingerprint.of(list("abcde") + ["f"] * 1)
    y = Fingerprint.of(list("abcde") + ["g"])
    assert jaccard(x.t0, y.t0) == pytest.approx(5 / 7)
    exact_edge = Fingerprint.of(list("abcdefgh")), Fingerprint.of(list("abcdefghij"))
    assert jaccard(exact_edge[0].t0, exact_edge[1].t0) == pytest.approx(0.8)
    assert is_near(*exact_edge, t0=0.8, t1=0.8)  # inclusive at exactly 0.8


def test_partition_of_a_small_crafted_set():
    base = "password = get_secret(name, region)  # load from vault\nclient = connect(host, port)\n"
    near = base.replace("region", "zone")
    other = "def render(template, values):\n    return template.format(**values)\n"
    contexts = [base, other, base, near, base, "x"]
    parts = partition(contexts, method="exhaustive")
    # near holds a near pair with an exact group (base): it is near, not unique
    assert parts.part.tolist() == ["exact", "unique", "exact", "near", "exact", "unique"]
    assert parts.representative.tolist() == [True, False, False, False, False, False]
    contexts = [base, near, other, base]
    parts = partition(contexts + [near.replace("port", "port_no")], method="exhaustive")
    assert parts.part.tolist() == ["exact", "near", "unique", "exact", "near"]
    assert parts.dedup.tolist() == [True, True, True, False, True]
    table = partition_table(parts, labels=[True, True, False, True, False])
    assert table.loc["C_exact", "samples"] == 2 and table.loc["R_exact", "samples"] == 1
    assert table.loc["C_dedup", "samples"] == 4 and table.loc["C_dedup", "true secrets"] == 2
    assert table.loc["total", "share"] == 1.0


def test_lsh_partition_equals_the_exhaustive_one(contexts, exhaustive_partition):
    lsh = partition(contexts, method="lsh")
    assert (lsh == exhaustive_partition).all().all()
    assert set(lsh.part) == {"exact", "near", "unique"}


def test_lsh_finds_every_true_pair(contexts):
    fps = fingerprints([c for c in contexts])
    truth = exhaustive_pairs(fps, min_tokens=3)
    found, candidates = lsh_pairs(fps, min_tokens=3)
    assert truth and found == truth
    assert candidates < len(fps) * (len(fps) - 1) / 2 / 100  # far fewer than all pairs


def test_partition_does_not_depend_on_input_order(contexts):
    order = list(range(len(contexts)))
    random.Random(3).shuffle(order)
    a = partition(contexts)
    b = partition([contexts[i] for i in order])
    assert sorted(a.part) == sorted(b.part)
    assert a.part.value_counts().to_dict() == b.part.value_counts().to_dict()
    assert [a.part[i] for i in order] == b.part.tolist()


def test_generic_records_and_masking(tmp_path):
    from srlib.duplication.data.secretdata import load_records, mask

    text = 'API_KEY = "sk_live_0123456789abcdef"\nprint(API_KEY)\n'
    start = text.index("sk_live")
    path = tmp_path / "records.jsonl"
    rows = [
        {
            "id": "a",
            "text": text,
            "start": start,
            "end": start + 24,
            "label": "Y",
            "language": "python",
        },
        {"id": "b", "text": text, "start": 0, "end": 7, "label": False},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    a, b = load_records(path)
    assert a.secret == "sk_live_0123456789abcdef" and a.label and not b.label
    assert "sk_live" not in repr(a) and mask(a.secret) in repr(a)
    assert "sk_live" not in a.context().text and a.context().before == 'API_KEY = "'
    path.write_text('{"id": "c", "text": "abc", "start": 2, "end": 9, "label": "Y"}\n')
    with pytest.raises(ValueError, match="records.jsonl:1"):
        load_records(path)


def test_secretbench_schema_with_files(tmp_path):
    import csv

    from srlib.duplication.data.secretdata import SECRETBENCH_COLUMNS, load_secretbench

    code = 'import os\ntoken = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"\n'
    (tmp_path / "files").mkdir()
    (tmp_path / "files" / "f1").write_text(code)
    row = dict.fromkeys(SECRETBENCH_COLUMNS, "")
    row.update(
        id="1",
        secret="[ghp_abcdefghijklmnopqrstuvwxyz0123456789]",
        repo_name="o/r",
        file_path="src/app.py",
        file_type="py",
        start_line="2",
        end_line="2",
        start_column="10",
        end_column="50",
        label="Y",
        file_identifier="f1",
        category="Authentication Key and Token",
    )
    missing = {**row, "id": "2", "file_identifier": "nope", "label": "N"}
    moved = {**row, "id": "3", "start_column": "12"}  # the secret is not where the row says
    (tmp_path / "files" / "f4").write_text('const key = "0123456789abcdef";\n')
    js = {**row, "id": "4", "file_identifier": "f4", "file_type": "js", "start_line": "1"}
    js.update(secret="0123456789abcdef", start_column="14", end_column="30", file_path="a.js")
    with (tmp_path / "sb.csv").open("w", newline="") as fh:
        w = csv.DictWriter(fh, SECRETBENCH_COLUMNS)
        w.writeheader()
        past_line = {**row, "id": "5", "start_line": "40", "end_line": "40"}  # another version
        past_column = {**row, "id": "6", "start_column": "900"}
        w.writerows([row, missing, moved, js, past_line, past_column])
    reasons = ("1 file not under", "1 secret not at its line and column")
    every = "".join(rf"(?=.*\b{r})" for r in (*reasons, "2 line or column past the end"))
    with pytest.warns(UserWarning, match=every):  # every unfound row counted, none fatal
        rec, other = load_secretbench(tmp_path / "sb.csv", tmp_path / "files")
    assert rec.file == "src/app.py" and rec.repo == "o/r"
    assert rec.secret == "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
    assert rec.label and rec.language == "python" and rec.context().after == '"\n'
    assert other.secret == "0123456789abcdef" and other.language == "javascript"
    (tmp_path / "bad.csv").write_text("id,secret\n1,x\n")
    with pytest.raises(ValueError, match="not the SecretBench schema"):
        load_secretbench(tmp_path / "bad.csv", tmp_path)


def test_dask_partition_equals_the_single_process_one(contexts, dask_client):
    from srlib.duplication.dedup.distributed import partition_dask

    subset = contexts[:1200]
    on_dask = partition_dask(subset, client=dask_client, npartitions=4)
    local = partition(subset, method="lsh")
    assert (on_dask == local).all().all()
    assert (partition_dask(subset[:300], npartitions=3) == partition(subset[:300])).all().all()


def test_offline_corpus_has_the_shape_it_is_asked_for():
    from srlib.duplication.data.corpus import CorpusConfig, make_corpus

    config = CorpusConfig(size=800, scanned_files=10, seed=3)
    records = make_corpus(config)
    assert len(records) == 800 and len({r.id for r in records}) == 800
    assert [r.text for r in make_corpus(config)][:50] == [r.text for r in records][:50]
    share_true = sum(r.label for r in records) / len(records)
    assert 0.08 < share_true < 0.25
    assert all(r.text[r.start : r.end] == r.secret and r.secret for r in records)
    parts = partition([r.context() for r in records], [r.language for r in records])
    shares = parts.part.value_counts(normalize=True)
    assert 0.6 < shares["exact"] < 0.78 and shares["near"] > 0.02 and shares["unique"] > 0.1
    true_kinds = {r.category for r in records if r.label}
    assert true_kinds <= {
        "AWS access key",
        "AWS secret key",
        "GitHub token",
        "Slack token",
        "Stripe key",
        "Google API key",
        "Password",
        "Database URL",
        "JWT",
        "Private key",
    }


def test_example_pair_masks_the_secret_and_marks_the_difference():
    from srlib.duplication.dedup.partition import example_pair

    head = "import vault\nsession = vault.open(region, profile, timeout)\n"
    a = Context(head + "client = connect(host, port, user)\npassword = '", "'\nclient.login()\n")
    b = Context(head + "client = connect(host, port, user_2)\npassword = '", "'\nclient.login()\n")
    view = example_pair(
        [a, b, Context("x", "y")], partition([a, b, Context("x", "y")], min_tokens=2)
    )
    assert "[SECRET]" in view and "<mark>user_2</mark>" in view


def test_code_windows_make_exact_and_near_copies():
    windows = code_windows(300, seed=2, exact=0.5, near=0.5, chars=200_000)
    assert len(windows) == 300 and all(len(w) in (400, 401) for w in windows)  # +1: near
    assert len(set(windows)) < 300  # exact copies
    assert code_windows(300, seed=2, exact=0.5, near=0.5, chars=200_000) == windows
