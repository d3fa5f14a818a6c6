import json

import pytest

from srlib.samples import Sample, SampleFormatError, read_jsonl, write_jsonl


def make(**kw):
    base = dict(
        id="t/1",
        benchmark="toy",
        prompt="def add(a, b):\n    ",
        solution="return a + b\n",
        tests="assert add(1, 2) == 3\n",
        entry_point="add",
    )
    return Sample(**{**base, **kw})


def test_completion_program_joins_prompt_solution_setup_tests():
    s = make(setup="X = 1\n")
    assert s.code == "def add(a, b):\n    return a + b\n"
    assert s.program() == "def add(a, b):\n    return a + b\nX = 1\nassert add(1, 2) == 3\n"


def test_standalone_program_ignores_prose_prompt():
    s = make(
        format="standalone", prompt="Add two numbers.", solution="def add(a, b):\r\n  return a+b"
    )
    assert s.code == "def add(a, b):\r\n  return a+b"
    assert s.program() == "def add(a, b):\r\n  return a+b\nassert add(1, 2) == 3\n"


def test_stdio_program_embeds_solution_and_cases():
    s = make(format="stdio", solution="print(int(input()) * 2)", tests=json.dumps([["3\n", "6\n"]]))
    program = s.program()
    assert "print(int(input()) * 2)" in program
    assert '"3\\\\n"' in program or "3\\n" in program


def test_text_is_settable():
    s = make()
    assert s.text == s.prompt + s.solution
    code_only = s.with_text_fields("solution")
    assert code_only.text == "return a + b\n"
    assert make(text_fields=("prompt", "tests"), text_sep="|").text == s.prompt + "|" + s.tests


@pytest.mark.parametrize(
    "kw, msg",
    [
        ({"format": "notebook"}, "format"),
        ({"text_fields": ("prompt", "answer")}, "text_fields"),
        ({"text_fields": ()}, "text_fields"),
        ({"prompt": None}, "prompt"),
        ({"metadata": []}, "metadata"),
    ],
)
def test_invalid_samples_name_the_field(kw, msg):
    with pytest.raises(SampleFormatError, match=msg):
        make(**kw)


def test_jsonl_round_trip(tmp_path):
    samples = [make(), make(id="t/2", metadata={"k": [1, 2]}, text_fields=("solution",))]
    path = write_jsonl(samples, tmp_path / "sub" / "s.jsonl")
    assert read_jsonl(path) == samples
    assert not list(tmp_path.rglob("*.tmp"))


@pytest.mark.parametrize(
    "line, msg",
    [
        ("{not json", "Expecting property name"),
        ('{"id": "x"}', "missing field"),
        (
            '{"id": "x", "benchmark": "b", "prompt": "", "solution": "", "tests": "", "oops": 1}',
            "unknown field",
        ),
        ("[1, 2]", "JSON object"),
    ],
)
def test_malformed_line_names_file_and_line(tmp_path, line, msg):
    path = tmp_path / "bad.jsonl"
    good = json.dumps(make().to_dict())
    path.write_text(good + "\n\n" + line + "\n", encoding="utf-8")
    with pytest.raises(SampleFormatError, match=rf"bad\.jsonl:3: .*{msg}"):
        read_jsonl(path)


def test_missing_file_is_clear(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.jsonl"):
        read_jsonl(tmp_path / "nope.jsonl")
