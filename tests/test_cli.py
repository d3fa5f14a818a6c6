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
