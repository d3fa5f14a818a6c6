"""Digests a reader can compare between two builds: of the training corpus, every trained
model, every score table and the claim table. A chapter publishes its rows (``publish``: a
table whose output carries them, in a cell tagged ``digests``); the appendix collects them in
pipeline order and writes ``book/digests.json``; ``compare`` says where two builds part,
first difference first (``srlib book --compare OTHER``). The lock (``data/corpus/lock.json``)
records a few rows of the quick build (``locked_rows``): every test run rebuilds them and
compares, so every machine checks itself against ours (``srlib book --quick --record-digests``
records them anew); it may hold a full build's too (``srlib book --record-digests``). Every
build's appendix checks it against the record of its kind (``lock_verdict``)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd

from srlib.errors import InputError
from srlib.store import DIGEST_ORDER as ORDER
from srlib.store import atomic_path

KEY = "srlib-digests"  # the output metadata field that carries a chapter's rows


TABLES = Path("book") / "tables"  # under the build's root: the published tables' numbers


def publish(rows: list[dict]) -> pd.DataFrame:
    """Show ``rows`` as a table whose output metadata carries them for the appendix (tag the
    cell ``digests``); a row that carries its table (``store.frame_row``) keeps its numbers in
    ``TABLES`` (named by digest, the path in its ``file``) for ``srlib book --compare``.
    Returns the rows as a table."""
    from IPython.display import display

    rows = [_kept(r) for r in rows]
    shown = pd.DataFrame(rows, columns=["what", "name", "digest", "note"])
    display(shown.assign(digest=shown.digest.str[:16]), metadata={KEY: rows})
    return pd.DataFrame(rows)  # with each kept table's file


def _kept(row: dict) -> dict:
    """``row`` without its table, which is written to ``TABLES`` (once per digest)."""
    if "frame" not in row:
        return row
    row = dict(row)
    frame = row.pop("frame")
    file = TABLES / f"{row['digest']}.parquet"
    if not file.is_file():
        file.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(file) as tmp:
            frame.to_parquet(tmp)
    return row | {"file": str(file)}


def root_of(path: str | os.PathLike[str]) -> Path | None:
    """The build folder a digests path names (the folder itself, or the one holding its
    ``book/digests.json``), where the rows' ``file`` paths start; None for a lone file."""
    path = Path(path)
    if path.is_dir():
        return path
    if path.name == "digests.json" and path.parent.name == "book":
        return path.parent.parent
    if path.name == "digests.json" and path.parent.name == "html":
        return path.parent.parent.parent
    return None


def collect(executed: list[Path]) -> list[dict]:
    """Every published row of the executed chapters, each with its chapter, in pipeline order
    (``ORDER``, then chapter and publication order); a name published twice is kept once."""
    rows, seen = [], set()
    for path in executed:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        for cell in cells:
            for out in cell.get("outputs", []):
                for r in out.get("metadata", {}).get(KEY, []):
                    if (r["what"], r["name"]) not in seen:
                        seen.add((r["what"], r["name"]))
                        rows.append(r | {"chapter": path.stem})
    return sorted(rows, key=lambda r: ORDER.index(r["what"]))


def load(path: str | os.PathLike[str]) -> list[dict]:
    """A build's digests: its ``digests.json`` (or the appendix's ``digests.csv``), or a build
    folder holding ``book/digests.json``
    (or ``_build/html/digests.json``)."""
    path = Path(path)
    if path.is_dir():
        for candidate in ("book/digests.json", "_build/html/digests.json", "digests.json"):
            if (path / candidate).is_file():
                path = path / candidate
                break
        else:
            raise InputError(f"{path}: no book/digests.json (build the book there first)")
    try:
        if path.suffix == ".csv":
            return pd.read_csv(path, dtype=str, keep_default_na=False).to_dict("records")
        return json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, pd.errors.ParserError) as e:
        raise InputError(f"{path}: not a digests file ({e})") from e


def compare(mine: list[dict], other: list[dict]) -> list[str]:
    """Where two builds' digests part, in pipeline order: one line per differing or missing
    name, the first difference first; empty when they agree."""
    theirs = {(r["what"], r["name"]): r["digest"] for r in other}
    ours = {(r["what"], r["name"]): r["digest"] for r in mine}
    lines = []
    for what, name in sorted(
        ours | theirs, key=lambda k: (ORDER.index(k[0]), _position(k, mine, other))
    ):
        a, b = ours.get((what, name)), theirs.get((what, name))
        if a != b:
            lines.append(f"{what} {name}: {_short(a)} here, {_short(b)} there")
    return lines


def _position(key: tuple[str, str], *builds: list[dict]) -> int:
    """Where ``key`` first appears in either build (pipeline order within a kind)."""
    for build in builds:
        for i, r in enumerate(build):
            if (r["what"], r["name"]) == key:
                return i
    return 0


def _short(value: str | None) -> str:
    return value[:16] if value else "absent"


def locked_rows(rows: list[dict]) -> list[dict]:
    """The rows a lock records of a build: its numerics, the corpus, the base model, the last
    checkpoint of the first run published (the main run, first seed), that checkpoint's first
    score table and the claim table."""
    runs = [r["name"] for r in rows if r["what"] == "model" and " epoch " in r["name"]]
    main = runs[0].rpartition(" epoch ")[0] if runs else None
    last = [name for name in runs if name.rpartition(" epoch ")[0] == main][-1:] or [None]
    picked, scored = [], False
    for r in rows:
        keep = r["what"] == "numerics" or r["what"] == "corpus"
        keep |= r["what"] == "model" and r["name"] in ("base", last[0])
        keep |= r["what"] == "claims" and r["name"] == "claim table"
        if r["what"] == "scores" and not scored and r["name"].startswith(f"{last[0]} n="):
            keep = scored = True
        if keep:
            picked.append({k: r[k] for k in ("what", "name", "digest")})
    return picked


LockPath = str | os.PathLike[str] | None


def _corpus_of(record: list[dict]) -> str | None:
    return next((r["digest"] for r in record if r["what"] == "corpus"), None)


def check_locked(rows: list[dict], build: str = "quick", path: LockPath = None) -> list[str]:
    """Where ``rows`` (a build's digests) part from the lock's record of ``build`` on machines
    of the same numerics class (their ``numerics`` row: mode, kernels, vendor), first
    difference first; ``[NOT_RECORDED, class]`` where the lock holds none for that class."""
    from srlib.testbed.sources import read_lock

    mine = locked_rows(rows)
    kind = next((r["digest"] for r in mine if r["what"] == "numerics"), "unknown")
    recorded = read_lock(path)["doc"].get("builds", {}).get(build, {}).get(kind)
    if not recorded:
        return [NOT_RECORDED, kind]
    return compare(mine, recorded)


NOT_RECORDED = "not recorded"  # check_locked's first line where the lock has no such class
WHOLE = ["numerics", "corpus", "model", "model", "scores", "claims"]  # a whole build's record


def lock_verdict(rows: list[dict], build: str | None, path: LockPath = None) -> str:
    """One sentence for the appendix: ``rows`` (this build's digests) against the lock's record
    of a ``build`` ("quick" or "full"; None: chapters of both kinds) on machines of their
    numerics class."""
    if build is None:
        return "Not compared with the lock's records: these chapters ran in quick and full builds."
    mine = locked_rows(rows)
    if [r["what"] for r in mine] != WHOLE:
        return "Not compared with the lock's records: this build lacks its rows of record."
    parted = check_locked(rows, build, path)
    if parted[:1] == [NOT_RECORDED]:
        return (
            f"The lock holds no {build} build of this numerics class (`{parted[1]}`): nothing "
            "here to check this build against (`srlib book --compare` takes another build)."
        )
    kind = mine[0]["digest"]
    if not parted:
        return (
            f"This build's rows of record (numerics, corpus, base model, the main run's last "
            f"checkpoint, its score table, the claim table) match the lock's record of a {build} "
            f"build on a machine of this class (`{kind}`)."
        )
    return (
        f"This build parts from the lock's record of a {build} build on a machine of this class "
        f"(`{kind}`), first at {parted[0]} ({len(parted)} difference"
        f"{'s' if len(parted) > 1 else ''} in all): expected where `runs.yml` or the numbers code "
        "changed since the record, a finding otherwise."
    )


def record_locked(
    rows: list[dict], build: str = "quick", path: LockPath = None
) -> tuple[Path, list[str]]:
    """Write ``locked_rows(rows)`` into the lock as the record of ``build`` for their numerics
    class; the lock's path. Refused unless all six rows are there (a partial build). The
    corpus does not depend on the kernels, so another class's record of ``build`` whose corpus
    row differs describes a corpus no longer built: it is dropped (to be recorded again on a
    machine of that class), never left for that class to fail against. Returns the lock's
    path and the classes whose records were dropped, for the caller to say."""
    from srlib.testbed.sources import read_lock

    picked = locked_rows(rows)
    if [r["what"] for r in picked] != WHOLE:
        names = ", ".join(f"{r['what']} {r['name']}" for r in picked) or "nothing"
        raise InputError(f"a whole build's rows of record are needed; this build has {names}")
    lock = read_lock(path)
    doc = lock["doc"]
    records = doc.setdefault("builds", {}).setdefault(build, {})
    corpus = next(r["digest"] for r in picked if r["what"] == "corpus")
    dropped = [
        k for k, v in records.items() if k != picked[0]["digest"] and _corpus_of(v) != corpus
    ]
    for kind in dropped:
        del records[kind]
    records[picked[0]["digest"]] = picked
    with atomic_path(lock["path"]) as tmp:
        tmp.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    return lock["path"], dropped
