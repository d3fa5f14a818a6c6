"""The LLM rewriter's plumbing, driven by a scripted model: good rewrites kept, bad rejected."""

from srlib.samples import Sample
from srlib.transforms.llm import LLMRewriter, extract_code

CODE = (
    "def total_price(items, tax):\n"
    "    subtotal = sum(items)  # before tax\n"
    "    return subtotal * (1 + tax)\n"
)
TESTS = "assert total_price([1, 2], 0.5) == 4.5\nassert total_price([], 0.1) == 0.0\n"
SAMPLE = Sample(
    id="toy/llm",
    benchmark="toy",
    prompt=f"Compute a price. Your code should pass these tests:\n\n{TESTS}",
    solution=CODE,
    tests=TESTS,
    entry_point="total_price",
    format="standalone",
)


def scripted(answers):
    """A 'model' that answers prompts with a fixed script, in order."""
    calls = []

    def generate(prompts):
        calls.append(prompts)
        return [answers[i % len(answers)] for i in range(len(prompts))]

    generate.calls = calls
    return generate


def fenced(code):
    return f"Here you go:\n```python\n{code}```\nDone."


def test_extract_code_takes_the_fenced_block():
    assert extract_code(fenced("x = 1\n")) == "x = 1\n"
    assert extract_code("x = 2\n") == "x = 2\n"


def test_valid_function_rename_is_applied_to_the_tests_too():
    good = fenced(CODE.replace("total_price", "compute_price"))
    rewriter = LLMRewriter(scripted([good]), attempts=1)
    (v,) = rewriter.variants(SAMPLE, 1, kind="function")
    assert v.solution == CODE.replace("total_price", "compute_price")
    assert "assert compute_price([1, 2], 0.5)" in v.tests
    assert v.renames == [
        {"kind": "function", "scope": "<module>", "old": "total_price", "new": "compute_price"}
    ]
    assert v.entry_point == "compute_price"  # the record names the renamed function


def test_invalid_rewrites_are_rejected_with_reasons():
    bad = [
        fenced(CODE.replace("subtotal * (1 + tax)", "subtotal*(1 + tax)")),  # reformatted
        fenced(CODE.replace("(1 + tax)", "(1 - tax)")),  # changed behaviour
        fenced(CODE.replace("subtotal", "items")),  # collides with a parameter
        fenced(CODE.replace("sum(", "total(")),  # renames a builtin
        fenced(CODE.replace("subtotal = sum", "amount = sum")),  # renames one occurrence only
        fenced(CODE),  # no change
    ]
    rewriter = LLMRewriter(scripted(bad), attempts=1)
    out = rewriter.variants(SAMPLE, 6, kind="variable")
    assert len(out) == 0 and out.reasons
    reasons = [d["reason"] for d in out.dropped]
    assert len(reasons) == 6
    assert "not aligned" in reasons[0]
    assert "consistent rename" in reasons[1] or "not aligned" in reasons[1]
    assert "collide" in reasons[2] or "not safe" in reasons[2]
    assert "not safe" in reasons[3]
    assert "only some occurrences" in reasons[4] or "not safe" in reasons[4]
    assert "changed nothing" in reasons[5]


def test_test_rewrites_must_keep_layout_and_pass():
    right = "assert total_price([2, 2], 0.5) == 6.0\nassert total_price([], 0.2) == 0.0\n"
    wrong = "assert total_price([2, 2], 0.5) == 7.0\nassert total_price([], 0.2) == 0.0\n"
    moved = "assert total_price([2, 2], 0.5)==6.0\nassert total_price([], 0.2) == 0.0\n"
    rewriter = LLMRewriter(scripted([fenced(right), fenced(wrong), fenced(moved)]), attempts=3)
    out = rewriter.variants(SAMPLE, 1, kind="test")
    assert len(out) == 1 and out[0].tests == right and out[0].kinds == ("test",)
    assert right in out[0].prompt
    stages = sorted(d["stage"] for d in out.dropped)
    assert stages == ["check", "validation"]
