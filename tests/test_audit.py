"""``srlib audit``: a local checkpoint (gray- and black-box) and ``srlib serve`` over loopback
(black-box) give the same report format; the memorising model's excess over the clean
reference is found; an interrupted audit resumes; each bad input is one line and exit 1."""

import json
import re
import threading

import numpy as np
import pandas as pd
import pytest
from broken_plugins import BROKEN, RETURNED
from broken_plugins import names as broken_names

from srlib.audit import audit
from srlib.audit.run import summarise
from srlib.benchmarks import load_benchmark
from srlib.cli import main
from srlib.models.hf import HFModel
from srlib.models.serve import make_server
from srlib.transforms import make_variants_many

LIMIT = 6


@pytest.fixture(scope="module")
def variants():
    """Variants of the first HumanEval samples, made once (the audit accepts given ones)."""
    samples = load_benchmark("humaneval")[:LIMIT]
    return {"humaneval": make_variants_many(samples, 2, seed=0, progress=False)}


@pytest.fixture(scope="module")
def served(tiny_model_dir):
    """``srlib serve`` of the tiny model on a free loopback port, as ``URL#tiny``."""
    srv = make_server(HFModel(str(tiny_model_dir), batch_size=1), port=0, name="tiny")
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_port}/v1"
    srv.shutdown()
    srv.server_close()


def _report_images(folder) -> list[str]:
    page = (folder / "report.html").read_text()
    return re.findall(r'<img src="data:image/png;base64,([^"]+)" alt="[^"]+"', page)


def test_checkpoints_gray_and_black_against_a_reference(
    memorised, tiny_model_dir, variants, tmp_path
):
    out = tmp_path / "audit"
    models = {"memorised": memorised.name}
    kwargs = dict(n=2, reference=str(tiny_model_dir), limit=LIMIT, max_new_tokens=8)
    result = audit(models, ["humaneval"], out, variants=variants, progress=False, **kwargs)
    assert result.settings == {
        "memorised": ["gray", "black"],
        tiny_model_dir.name: ["gray", "black"],
    }
    s = result.summary.set_index(["model", "decision"])
    row = s.loc[("memorised", "gray")]
    assert row.null == f"reference {tiny_model_dir.name}" and row.null_test == "McNemar (paired)"
    assert row.excess == pytest.approx(row.rate - row.null_rate)
    assert row.excess_low <= row.excess <= row.excess_high
    assert {"pooled_p", "gray/black agreement"} <= set(result.summary.columns)
    assert ("memorised", "gray contrasted") in s.index
    for name in ("samples.parquet", "samples.csv", "summary.json", "summary.csv", "report.html"):
        assert (out / name).stat().st_size > 0
    assert len(_report_images(out)) == 2
    doc = json.loads((out / "summary.json").read_text())
    assert doc["settings"]["memorised"] == ["gray", "black"]
    table = pd.read_parquet(out / "samples.parquet")
    assert len(table) == 2 * LIMIT and set(table.role) == {"audited", "reference"}
    # the memorised samples (HumanEval/2 and /3) are the ones the model prefers most
    own = table[table.model == "memorised"].set_index("id").sr_gray_margin
    assert (
        own.loc[["HumanEval/2", "HumanEval/3"]].min()
        > own.drop(["HumanEval/2", "HumanEval/3"]).max()
    )
    # a rerun reads every part back and recomputes the same summary
    again = audit(models, ["humaneval"], out, variants=variants, progress=False, **kwargs)
    pd.testing.assert_frame_equal(again.summary, result.summary)
    pd.testing.assert_frame_equal(summarise(again.samples, tiny_model_dir.name), result.summary)


def test_an_interrupted_audit_resumes_from_its_finished_parts(tiny_model_dir, variants, tmp_path):
    out = tmp_path / "audit"
    args = dict(n=2, limit=LIMIT, setting="gray", variants=variants, progress=False)
    first = audit([str(tiny_model_dir)], ["humaneval"], out, **args)
    part = next((out / "parts").iterdir())
    stamp = part.stat().st_mtime_ns
    (out / "summary.json").unlink()  # as if killed before the end
    second = audit([str(tiny_model_dir)], ["humaneval"], out, **args)
    assert part.stat().st_mtime_ns == stamp  # read back, not recomputed
    pd.testing.assert_frame_equal(first.summary, second.summary)


def black_box(model: str, out) -> list[str]:
    """``srlib audit`` arguments: three HumanEval samples, one variant, black-box."""
    return ["audit", "--model", model, "--benchmark", "humaneval", "--limit", "3", "--n", "1",
            "--setting", "black", "--max-new-tokens", "4", "--out", str(out)]  # fmt: skip


def test_cli_against_srlib_serve_black_box_same_format(served, tiny_model_dir, tmp_path, capsys):
    out = tmp_path / "served"
    code = main(black_box(f"{served}#tiny", out))
    assert code == 0
    printed = capsys.readouterr().out
    assert "tiny: ran black" in printed and "report:" in printed
    summary = pd.read_csv(out / "summary.csv")
    assert list(summary.decision) == ["black"] and summary.samples.iloc[0] == 3
    assert len(_report_images(out)) == 2
    from srlib.book.browsercheck import check_in_browser, find_browser

    if find_browser():  # the report as a reader opens it: no script error, every figure shown
        assert check_in_browser(out, tmp_path / "shots") == []
    local = tmp_path / "local"
    assert main(black_box(str(tiny_model_dir), local)) == 0
    theirs = pd.read_csv(local / "summary.csv")
    assert list(theirs.columns) == list(summary.columns)
    # the same model over HTTP and in-process: the same black-box flags
    a, b = pd.read_parquet(out / "samples.parquet"), pd.read_parquet(local / "samples.parquet")
    assert list(a.sr_black) == list(b.sr_black)


def _one_line(capsys, argv, expected):
    assert main(["audit", *argv]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("srlib audit: ")
    assert expected in err, err
    return err


def test_bad_inputs_are_one_line_each(tiny_model_dir, tmp_path, capsys):
    model = str(tiny_model_dir)
    base = ["--benchmark", "humaneval", "--out", str(tmp_path / "x")]
    _one_line(
        capsys,
        ["--model", model, "--benchmark", "humaneva1", "--out", str(tmp_path / "y")],
        "humaneva1",
    )
    _one_line(capsys, ["--model", str(tmp_path / "none"), *base], "no such model")
    _one_line(capsys, ["--model", "http://127.0.0.1:9/v1#m", *base], "does not answer")
    _one_line(capsys, ["--model", model, "--limit", "0", *base], "--limit must be at least 1")
    first = ["--model", model, "--limit", "2", "--n", "1", "--setting", "gray"]
    assert main(["audit", *first, *base]) == 0
    capsys.readouterr()
    err = _one_line(capsys, ["--model", model, "--limit", "3", *base], "results of another run")
    assert "differs in limit" in err


def test_a_server_without_prompt_logprobs_cannot_run_gray_box(tmp_path, capsys, monkeypatch):
    from srlib.models.openai import OpenAIModel, UnsupportedByServer

    def no_echo(self, texts):
        raise UnsupportedByServer(f"{self.url} returned no echo log-probs")

    monkeypatch.setattr(OpenAIModel, "token_logprobs", no_echo)
    monkeypatch.setattr("srlib.audit.models._check_server", lambda model, spec: None)
    argv = [
        "--model",
        "http://127.0.0.1:9/v1#m",
        "--benchmark",
        "humaneval",
        "--setting",
        "gray",
        "--out",
        str(tmp_path / "g"),
    ]
    _one_line(capsys, argv, "gray-box needs prompt log-probs")


def test_the_zoo_is_read_per_half_and_the_halves_are_compared(tmp_path):
    from srlib.audit.run import Audit, AuditSpec
    from srlib.audit.zoo import halves, memorisation

    ids = [f"HumanEval/{i}" for i in range(40)]
    split = pd.DataFrame({"id": ids, "leaked": [i < 20 for i in range(40)]})
    planted = [i < 20 or i % 4 == 0 for i in range(40)]  # all the leaked half, some others
    null = [i % 4 == 0 for i in range(40)]
    rows = [
        {"model": m, "set": "benchmark", "benchmark": "humaneval", "id": i, "n_variants": 5,
         "sr_gray": f}
        for m, flags in (("humaneval ×4", planted), ("null control", null))
        for i, f in zip(ids, flags, strict=True)
    ]  # fmt: skip
    spec = AuditSpec((("humaneval ×4", "x"),), ("humaneval",), reference="y",
                     reference_label="null control")  # fmt: skip
    result = Audit(spec, tmp_path, pd.DataFrame(rows), pd.DataFrame())
    s = halves(result, split).set_index(["model", "benchmark"])
    leaked, held = (
        s.loc[("humaneval ×4", "humaneval · leaked half")],
        s.loc[("humaneval ×4", "humaneval · held-out half")],
    )
    assert leaked.rate == 1.0 and leaked.null_rate == 0.25 and leaked.excess_low > 0
    assert held.rate == held.null_rate == 0.25 and held.excess == 0  # the same flags
    assert leaked.null_test == "McNemar (paired)"
    (row,) = memorisation(result, split).to_dict("records")
    assert row["leaked half"] == 1.0 and row["held-out half"] == 0.25 and row["low"] > 0
    assert row["verdict"].startswith("humaneval ×4: leaked − held-out half = +75% of samples")
    assert row["verdict"].endswith("memorisation beyond the benchmark's style.")


def test_the_testbed_audit_opens_models_as_the_testbed_does(monkeypatch, tmp_path, tiny_model_dir):
    """The same device, dtype, threads and batch sizes: the audit reads the testbed's cached
    scores (a model opened with other threads or batches is another model to the cache)."""
    from types import SimpleNamespace

    from srlib.audit import zoo as audit_zoo
    from srlib.audit.models import open_model
    from srlib.testbed.config import profile
    from srlib.testbed.testbed import Testbed

    seen = {}
    monkeypatch.setattr(audit_zoo, "audit", lambda *args, **kwargs: seen.update(kwargs))
    config = profile("quick", threads=3, dtype="bfloat16")
    tb = SimpleNamespace(config=config, cache_dir=tmp_path, base=tmp_path / "base")
    audit_zoo.audit_testbed(tb, tmp_path / "out", {"m": "m"}, ["humaneval"], limit=5)
    assert (seen["threads"], seen["dtype"], seen["device"]) == (3, "bfloat16", "cpu")
    assert (seen["batch_size"], seen["generate_batch"]) == (
        config.score_batch,
        config.generate_batch,
    )
    assert seen["cache"] == tmp_path / "scores.sqlite"
    kept = profile("cpu")
    seen.clear()
    tb = SimpleNamespace(config=kept, cache_dir=tmp_path, base=tmp_path / "base", reading=False)
    audit_zoo.audit_testbed(tb, tmp_path / "out", {"m": "m"}, ["humaneval"], limit=5)
    args = [seen[k] for k in ("device", "dtype", "batch_size")]
    audited = open_model(
        str(tiny_model_dir), "m", *args, False, seen["threads"], seen["generate_batch"]
    )
    assert audited.model.fingerprint == Testbed.model(tb, tiny_model_dir).fingerprint


def test_an_audit_model_has_the_score_cache_identity_of_the_same_model_opened_directly(
    tiny_model_dir,
):
    from srlib.audit.models import open_model

    opened = open_model(str(tiny_model_dir), threads=1).model
    assert opened.fingerprint == HFModel(str(tiny_model_dir), threads=1).fingerprint
    assert opened.fingerprint != HFModel(str(tiny_model_dir)).fingerprint


def test_a_researchers_detector_is_one_more_decision_of_the_audit(tiny_model_dir, tmp_path, capsys):
    from srlib.detection import registry

    saved = dict(registry.DETECTORS)
    mine = tmp_path / "mine.py"
    mine.write_text(
        "def longest(token_scores, text):\n    return float(len(token_scores.logprobs))\n"
    )
    out = tmp_path / "audit"
    args = ["audit", "--model", str(tiny_model_dir), "--benchmark", "humaneval", "--limit", "3",
            "--n", "2", "--setting", "gray", "--out", str(out),
            "--detector", f"{mine}:longest"]  # fmt: skip
    try:
        assert main(args) == 0
    finally:
        registry.DETECTORS.clear()
        registry.DETECTORS.update(saved)
    summary = pd.read_csv(out / "summary.csv").set_index("decision")
    assert {"gray", "SR longest"} <= set(summary.index)
    table = pd.read_parquet(out / "samples.parquet")
    lengths = table.plugin_longest_scores.map(list)
    expected = [s[0] > max(s[1:]) for s in lengths]  # the SR rule on the new score
    assert table.flag_sr_longest.astype(bool).tolist() == expected
    assert summary.loc["SR longest", "rate"] == pytest.approx(sum(expected) / 3)
    assert "SR longest" in (out / "report.html").read_text()
    doc = json.loads((out / "summary.json").read_text())
    assert doc["spec"]["detectors"][0][0] == "longest"  # its source keys the audit
    capsys.readouterr()


@pytest.fixture
def own_registry():
    """What a test registers is gone after it (the same dict: modules hold it by name)."""
    from srlib.detection import registry

    saved = dict(registry.DETECTORS)
    yield
    registry.DETECTORS.clear()
    registry.DETECTORS.update(saved)


def test_a_detector_that_fails_at_run_time_is_reported_in_every_output(
    tiny_model_dir, tmp_path, capsys, own_registry
):
    mine = tmp_path / "failing.py"
    mine.write_text(BROKEN)
    out = tmp_path / "audit"
    args = ["audit", "--model", str(tiny_model_dir), "--benchmark", "humaneval", "--limit", "2",
            "--n", "2", "--out", str(out), "--max-new-tokens", "8"]  # fmt: skip
    for name in broken_names():
        args += ["--detector", f"{mine}:{name}"]
    assert main(args) == 0  # the built-in decisions ran
    printed = capsys.readouterr().out
    summary = pd.read_csv(out / "summary.csv").set_index("decision")
    report = (out / "report.html").read_text()
    for name in broken_names():
        decision = name if name.startswith("rule_") else f"SR {name}"
        row = summary.loc[decision]
        assert row.decided == 0 and row.undecided == 2 and np.isnan(row.rate)
        assert RETURNED[name.split("_", 1)[1]] in row["why undecided"]
        assert f"{name} on " in printed and f"<code>{name}</code> on " in report
    assert "could not score every sample" in report
    failures = pd.read_csv(out / "plugin_failures.csv", keep_default_na=False)
    assert set(failures.detector) == set(broken_names()) and (failures.calls > 0).all()


def test_an_audit_refuses_a_detector_named_like_a_built_in_decision(
    tiny_model_dir, tmp_path, own_registry
):
    from srlib.audit.models import AuditInputError
    from srlib.detection import registry

    before = set(registry.DETECTORS)
    mine = tmp_path / "mine.py"
    mine.write_text("def beats(model, sample, variants):\n    return 1.0\n")
    with pytest.raises(AuditInputError, match="'gray'"):
        audit([str(tiny_model_dir)], ["humaneval"], tmp_path / "a", limit=1, n=1,
              setting="gray", progress=False,
              detectors=[{"spec": f"{mine}:beats", "name": "gray"}])  # fmt: skip
    assert set(registry.DETECTORS) == before  # refused: nothing left registered


def test_a_changed_plug_in_option_rescores_in_the_same_folder(
    tiny_model_dir, tmp_path, own_registry
):
    from srlib.audit import audit

    mine = tmp_path / "mine.py"
    mine.write_text("def size(token_scores, text):\n    return float(len(text))\n")
    out = tmp_path / "audit"
    kw = {"limit": 2, "n": 2, "setting": "gray", "progress": False}
    first = audit([str(tiny_model_dir)], ["humaneval"], out, **kw,
                  detectors=[{"spec": f"{mine}:size", "name": "Size"}])  # fmt: skip
    second = audit([str(tiny_model_dir)], ["humaneval"], out, **kw,
                   detectors=[{"spec": f"{mine}:size", "name": "Size",
                               "higher_is_leaked": False}])  # fmt: skip
    a = first.samples.plugin_size_scores.map(list)
    b = second.samples.plugin_size_scores.map(list)
    assert [[-x for x in v] for v in a] == list(b)  # rescored the other way round
    assert len(list((out / "parts").glob("*.parquet"))) == 2


def test_a_plug_in_left_out_by_the_setting_is_named_and_an_own_rule_has_no_chance_level(
    tiny_model_dir, tmp_path, capsys, own_registry
):
    mine = tmp_path / "mine.py"
    mine.write_text(
        "def shorter(model, sample):\n    return -float(len(sample.text))\n\n\n"
        "def always(model, sample, variants):\n    return 1.0\n"
    )
    out = tmp_path / "audit"
    args = ["audit", "--model", str(tiny_model_dir), "--benchmark", "humaneval", "--limit", "2",
            "--n", "2", "--setting", "gray", "--out", str(out),
            "--detector", f"{mine}:shorter"]  # fmt: skip
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "left out by --setting gray: shorter (black-box)" in printed
    report = (out / "report.html").read_text()
    assert "Left out by the setting (gray): shorter (black-box)" in report
    ruled = args[:-2] + ["--detector", f"{mine}:always"]  # a rule: gray-box
    ruled[ruled.index("--out") + 1] = str(tmp_path / "ruled")
    assert main(ruled) == 0
    summary = pd.read_csv(tmp_path / "ruled" / "summary.csv").set_index("decision")
    assert summary.loc["always", "rate"] == 1.0 and np.isnan(summary.loc["always", "chance"])
    assert summary.loc["gray", "chance"] > 0  # SR's rank among variants keeps its own
