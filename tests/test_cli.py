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
