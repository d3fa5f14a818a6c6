"""The artifact store: keys follow the producing code, writes are atomic, manifests are
checked, and a user's folder holding another run is refused in one line."""

from __future__ import annotations

import json
import time

import pytest

from srlib import costs, store
from srlib.store import (
    MANIFEST,
    PRODUCERS,
    Artifact,
    FolderInUse,
    Store,
    atomic_path,
    claim_folder,
    key_of,
    producer_closure,
)


def _edited(monkeypatch, module: str) -> None:
    """Simulate an edit of ``module``'s source (a fix, a changed default)."""
    real = store.module_source
    monkeypatch.setattr(
        store, "module_source", lambda name: real(name) + (b"\n# edited" if name == module else b"")
    )


def _keys() -> dict[str, str]:
    return {kind: Artifact(kind, {"x": 1}).key for kind in PRODUCERS}


EDITS = {
    # the edited module → the artifact kinds whose own code changes (score tables import the
    # variant maker; downstream kinds also follow through their inputs, see test_testbed)
    "srlib.transforms.rename": {"variants", "tables", "plugin-scores", "audit"},
    "srlib.transforms.testcases": {"variants", "tables", "plugin-scores", "audit"},
    "srlib.transforms.lexicon": {"variants", "tables", "plugin-scores", "audit"},
    "srlib.execution.sandbox": {"variants", "tables", "plugin-scores", "audit"},
    "srlib.duplication.dedup.overlap": {"corpus"},
    "srlib.models.tiny": {"models"},
    "srlib.testbed.leak": {"runs"},
    "srlib.detection.scoring": {"tables", "plugin-scores", "audit"},
    "srlib.duplication.impact.classifiers": {"dedup-study"},
}


@pytest.mark.parametrize("module", sorted(EDITS))
def test_an_edit_changes_the_keys_of_exactly_the_kinds_it_produces(monkeypatch, module):
    before = _keys()
    _edited(monkeypatch, module)
    after = _keys()
    assert {k for k in PRODUCERS if before[k] != after[k]} == EDITS[module]


def test_producers_follow_imports_transitively():
    variants = producer_closure(PRODUCERS["variants"])
    assert {"srlib.transforms.rename", "srlib.transforms.testcases"} <= set(variants)
    assert "srlib.execution.sandbox" in variants and "srlib.models.tiny" not in variants
    assert "srlib.duplication.dedup.overlap" in producer_closure(PRODUCERS["corpus"])


def test_an_unknown_kind_names_the_known_ones():
    with pytest.raises(ValueError, match="unknown artifact kind 'modles'.*'models'"):
        Artifact("modles", {})


def test_atomic_path_leaves_the_target_complete_or_absent(tmp_path):
    target = tmp_path / "out.txt"
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        tmp.write_text("half")
        raise RuntimeError("interrupted")
    assert not target.exists() and list(tmp_path.iterdir()) == []
    with atomic_path(target) as tmp:
        tmp.write_text("whole")
    assert target.read_text() == "whole" and list(tmp_path.iterdir()) == [target]


def test_the_store_reuses_only_a_folder_whose_manifest_matches(tmp_path):
    s, art = Store(tmp_path), Artifact("corpus", {"seed": 0})
    assert s.get(art) is None
    with s.put(art) as tmp:
        (tmp / "corpus.pkl").write_bytes(b"data")
    folder = s.get(art)
    assert folder == s.path(art) and key_of(folder / "corpus.pkl") == art.key
    manifest = json.loads((folder / MANIFEST).read_text())
    assert manifest["inputs"] == {"seed": 0} and "srlib.testbed.corpus" in manifest["code"]
    (folder / MANIFEST).write_text("{damaged")
    assert s.get(art) is None and not folder.exists()  # recomputed, never trusted


def test_a_finished_equal_artifact_of_another_process_is_kept_not_replaced(tmp_path):
    """Two chapters compute the same table side by side: the second to finish leaves the
    first one's folder in place (a reader in it never sees it vanish); a damaged one is
    still replaced."""
    s, art = Store(tmp_path), Artifact("corpus", {"seed": 0})
    with s.put(art) as mine:
        (mine / "corpus.pkl").write_bytes(b"mine")
        with s.put(art) as theirs:  # the other process, finishing first
            (theirs / "corpus.pkl").write_bytes(b"theirs")
        inode = s.path(art).stat().st_ino
    assert (s.path(art) / "corpus.pkl").read_bytes() == b"theirs"
    assert s.path(art).stat().st_ino == inode and len(list(tmp_path.rglob("*.partial-*"))) == 0
    with s.put(art) as again:
        (again / "corpus.pkl").write_bytes(b"again")
        (s.path(art) / MANIFEST).write_text("{damaged")
    assert (s.get(art) / "corpus.pkl").read_bytes() == b"again"


def test_a_folder_of_another_run_is_refused_naming_what_differs(tmp_path, monkeypatch):
    folder = tmp_path / "out"
    claim_folder(folder, Artifact("audit", {"n": 5, "limit": 10}))
    claim_folder(folder, Artifact("audit", {"n": 5, "limit": 10}))  # the same run resumes
    with pytest.raises(FolderInUse, match=rf"{folder} holds .*differs in limit\)"):
        claim_folder(folder, Artifact("audit", {"n": 5, "limit": 20}))
    with pytest.raises(FolderInUse, match="holds a 'audit' run, not 'dedup-study'"):
        claim_folder(folder, Artifact("dedup-study", {}))
    _edited(monkeypatch, "srlib.detection.decide")
    with pytest.raises(FolderInUse, match="differs in code of srlib.detection.decide"):
        claim_folder(folder, Artifact("audit", {"n": 5, "limit": 10}))
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("a user's file")
    with pytest.raises(FolderInUse, match="not empty and holds no srlib run"):
        claim_folder(tmp_path / "mine", Artifact("audit", {}))


def spin(seconds: float) -> None:
    """Use ``seconds`` of this process's CPU (a count of iterations is faster on a fast CPU)."""
    start = time.process_time()
    while time.process_time() - start < seconds:
        pass


def test_the_ledger_costs_each_artifact_from_its_miss_without_what_was_recorded_inside(tmp_path):
    box = Store(tmp_path)
    outer, inner = Artifact("runs", {"x": 1}, "outer"), Artifact("models", {"x": 2}, "inner")
    assert box.get(outer) is None  # the making begins here: the work before put counts
    spin(0.05)
    assert box.get(inner) is None
    spin(0.4)
    with box.put(inner):
        pass
    with costs.costed(tmp_path, tmp_path / "scores.sqlite", "model calls: generate", part="1"):
        spin(0.2)
    (tmp_path / "scores.sqlite").write_text("")
    with box.put(outer) as tmp:
        (tmp / "x").write_text("x")
    with pytest.raises(RuntimeError), box.put(Artifact("runs", {"x": 3}, "failed")):
        raise RuntimeError("interrupted: no line, no artifact")
    lines = {c["made"] + c["part"]: c for c in costs.read_costs(tmp_path)}
    own, nested = lines[f"runs/outer-{outer.key}"], lines[f"models/inner-{inner.key}"]
    calls = lines["scores.sqlite1"]
    assert len(lines) == 3 and calls["stage"] == "model calls: generate"
    assert own["stage"] == "runs" and nested["stage"] == "models"
    assert nested["cpu_s"] > 2 * own["cpu_s"] > 0  # the outer's own time, without the inner's
    assert calls["cpu_s"] > own["cpu_s"]  # and without the calls made inside it
    with box.put(outer):  # made again: its last line counts
        pass
    assert costs.read_costs(tmp_path)[-1]["cpu_s"] < own["cpu_s"]
    (tmp_path / costs.COSTS).open("a").write('{"made": "runs/cut')  # an interrupted write
    outside = costs.costed(tmp_path / "runs", tmp_path / "elsewhere", "runs")
    with pytest.raises(ValueError), outside:  # a thing outside the ledger's folder: refused
        raise AssertionError("never reached: refused before any work")
    store._remove(box.path(inner))
    assert sorted(c["stage"] for c in costs.read_costs(tmp_path)) == [
        "model calls: generate",
        "runs",
    ]  # only what is still there
