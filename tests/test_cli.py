from srlib.cli import main


def test_benchmarks_command_lists_availability(capsys):
    assert main(["benchmarks"]) == 0
    out = capsys.readouterr().out
    assert "humaneval" in out and "mbpp" in out and "APPS is not on this machine" in out


def test_check_command_runs_the_sandbox(tmp_path, capsys):
    csv = tmp_path / "checks.csv"
    assert main(["check", "humaneval", "--limit", "3", "--output", str(csv)]) == 0
    assert "pass rate" in capsys.readouterr().out
    assert len(csv.read_text().splitlines()) == 4


def test_dedup_command_prints_the_partition_and_writes_no_secrets(tmp_path, capsys):
    import json

    code = 'db = connect(host="db.internal", user="admin", password="{}")\nrun(db)\n'
    rows = []
    for i, secret in enumerate(["hunter2hunter2", "hunter2hunter2", "s3cr3t-v4lue-99"]):
        text = code.format(secret)
        start = text.index(secret)
        rows.append(
            {
                "id": str(i),
                "text": text,
                "start": start,
                "end": start + len(secret),
                "label": "Y" if i < 2 else "N",
            }
        )
    path = tmp_path / "secrets.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "parts.csv"
    assert main(["dedup", str(path), "--output", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "C_exact" in printed and "true secrets" in printed
    written = out.read_text()
    assert "hunter2" not in written and "s3cr3t" not in written and "hunter2" not in printed
    assert written.splitlines()[0].startswith("id,exact_group")


def one_line_error(capsys, argv, command, *expected):
    """Run ``srlib argv``: exit 1 and one stderr line ``srlib <command>: ...`` naming
    ``expected``, with no traceback."""
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"srlib {command}: "), err
    assert "Traceback" not in err
    for text in expected:
        assert text in err, (text, err)
    return err


def test_unknown_names_are_one_line_errors(capsys):
    one_line_error(capsys, ["check", "humaneva1"], "check", "humaneva1", "humaneval")
    one_line_error(capsys, ["book", "--only", "99-nope"], "book", "99-nope", "00-benchmarks")


def test_missing_and_unreadable_files_are_one_line_errors(tmp_path, capsys):
    missing = tmp_path / "missing.jsonl"
    one_line_error(capsys, ["check", f"jsonl:{missing}"], "check", str(missing))
    one_line_error(capsys, ["dedup", str(missing)], "dedup", str(missing))
    one_line_error(capsys, ["dedup", str(tmp_path)], "dedup", str(tmp_path))  # a folder


def test_malformed_jsonl_names_file_and_line(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"id": "1", "text": "x", "start": 0, "end": 0, "label": "N"}\n{"id": 2\n')
    one_line_error(capsys, ["dedup", str(bad)], "dedup", f"{bad}:2", "not JSON")
    bad.write_bytes(b'{"id": "1", "text": "caf\xe9"}\n')
    one_line_error(capsys, ["dedup", str(bad)], "dedup", f"{bad}:1", "not UTF-8")
    one_line_error(capsys, ["check", f"jsonl:{bad}"], "check", f"{bad}:1", "not UTF-8")
    bad.write_text('{"id": "1", "text": "x", "start": 5, "end": 9, "label": "Y"}\n')
    one_line_error(capsys, ["dedup", str(bad)], "dedup", f"{bad}:1", "outside the text")
    bad.write_text('{"id": "a"}\n')
    one_line_error(capsys, ["check", f"jsonl:{bad}"], "check", f"{bad}:1", "missing field")


def test_wrong_csv_schema_is_a_one_line_error(tmp_path, capsys):
    csv = tmp_path / "secrets.csv"
    csv.write_text("id,secret,label\n1,[x],Y\n")
    one_line_error(
        capsys,
        ["dedup", str(csv), "--format", "secretbench", "--files-root", str(tmp_path)],
        "dedup",
        str(csv),
        "not the SecretBench schema",
    )
    one_line_error(capsys, ["dedup", str(csv), "--format", "secretbench"], "dedup", "--files-root")


def test_missing_model_folder_is_a_one_line_error(tmp_path, capsys):
    one_line_error(capsys, ["serve", "--model", str(tmp_path / "none")], "serve", "no such model")
    one_line_error(capsys, ["serve", "--model", str(tmp_path)], "serve", "no config.json")


def test_debug_shows_the_traceback(capsys):
    import pytest

    from srlib.benchmarks import UnknownBenchmark

    with pytest.raises(UnknownBenchmark):
        main(["check", "humaneva1", "--debug"])


def test_a_corrupt_score_cache_names_its_file(tmp_path):
    import pytest

    from srlib.errors import CacheError
    from srlib.models.cache import DiskCache

    path = tmp_path / "scores.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(CacheError, match="scores.sqlite: not a readable score cache"):
        DiskCache(path)


def test_help_shows_every_default_the_parser_holds():
    """`srlib CMD --help` is where a default is read (the docs point there): every option with
    a default shows it, from the parser, or its help says how the default is chosen."""
    import argparse

    from srlib.cli.parser import parser

    top = parser()
    sub = next(a for a in top._actions if isinstance(a, argparse._SubParsersAction))
    for name, command in sub.choices.items():
        text = " ".join(command.format_help().split())
        for action in command._actions:
            default = action.default
            if default is None or default is False or default is argparse.SUPPRESS:
                continue
            if isinstance(action, argparse._HelpAction):
                continue
            help_text = " ".join((action.help or "").split())
            assert help_text, f"srlib {name} {action.option_strings}: no help text"
            shown = "default" in help_text or f"(default: {default})" in text
            assert shown, f"srlib {name} {action.option_strings}: default {default!r} not shown"
