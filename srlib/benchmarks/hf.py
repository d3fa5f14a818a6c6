"""Any Hugging Face dataset as a benchmark, read with ``datasets``, never downloaded.

``load_benchmark("hf:SOURCE", split=..., columns=...)`` takes SOURCE as

- a local folder of parquet, JSON(L), CSV or Arrow files (``datasets`` infers the splits from
  the file names, e.g. ``test.parquet``), or a folder written by ``save_to_disk``;
- one such file;
- a dataset id (``openai/openai_humaneval``) already in the Hugging Face cache: its snapshot is
  found with ``huggingface_hub`` offline (``local_files_only``), so a machine without the hub
  reads what another step downloaded.

Rows become samples by their columns' names: HumanEval's (``HUMANEVAL``, through
``humaneval.humaneval_samples``) or MBPP's (``MBPP``, through ``mbpp.mbpp_sample``).
``columns`` maps a field of those schemas to the dataset's own column of it
(``{"prompt": "question"}``, an option of ``load_benchmark`` in Python; the command line takes
the columns as they are); a dataset that fits neither is an error naming what is missing.
APPS and BigCodeBench read their cached copies through ``snapshot`` and ``rows`` as well.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from srlib.benchmarks._files import BenchmarkNotFound
from srlib.benchmarks.humaneval import humaneval_samples
from srlib.benchmarks.mbpp import mbpp_sample
from srlib.errors import InputError
from srlib.samples import Sample

HUMANEVAL = ("task_id", "prompt", "canonical_solution", "test", "entry_point")
"""The columns of a dataset in HumanEval's published format."""
MBPP = ("task_id", "text", "code", "test_list")
"""The columns MBPP's format needs (``test_setup_code`` and ``challenge_test_list`` optional)."""
BUILDERS = {
    ".parquet": "parquet",
    ".json": "json",
    ".jsonl": "json",
    ".csv": "csv",
    ".arrow": "arrow",
}
"""``datasets``' builder for a single file, by its suffix (before a ``.gz``)."""
PREFERRED_SPLIT = "test"
"""The split read when a dataset has several and none is asked for."""


class NoSuchSplit(InputError):
    """A dataset has no split of the asked name, or several and none was asked for."""


def snapshot(repo_id: str, how_to_get: str, revision: str | None = None) -> Path:
    """The local snapshot folder of dataset ``repo_id`` (its ``revision``: a branch, tag or
    commit; default the main branch) in the Hugging Face cache, found offline by
    ``huggingface_hub``; ``BenchmarkNotFound`` (with ``how_to_get``) when it is not there."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    try:
        found = snapshot_download(
            repo_id, repo_type="dataset", revision=revision, local_files_only=True
        )
    except LocalEntryNotFoundError as missing:
        raise BenchmarkNotFound(
            f"{how_to_get} (looked for revision {revision or 'main'})"
        ) from missing
    return Path(found)


def open_dataset(
    source: str | Path,
    split: str | None = None,
    config: str | None = None,
    revision: str | None = None,
) -> Any:
    """One split of ``source`` (a folder, a file, or a cached dataset id: see the module) as a
    ``datasets.Dataset``; ``config`` is the dataset's configuration (``datasets``' ``name``),
    ``revision`` a cached id's branch, tag or commit. Without ``split``: the only split, else
    ``PREFERRED_SPLIT``. A single file is one split, called as asked."""
    import datasets

    path = Path(source).expanduser()
    if path.is_dir() and any((path / f).is_file() for f in ("dataset_dict.json", "state.json")):
        found = datasets.load_from_disk(str(path))
    elif path.is_file():
        builder = BUILDERS.get(_suffix(path))
        if builder is None:
            raise InputError(f"{path}: not a dataset file (one of {sorted(BUILDERS)}, or .gz)")
        found = datasets.load_dataset(builder, data_files={split or PREFERRED_SPLIT: str(path)})
    elif path.is_dir():
        found = datasets.load_dataset(str(path), name=config)
    elif path.is_absolute() or str(source).startswith((".", "~")) or str(source).count("/") > 1:
        raise BenchmarkNotFound(f"{source} does not exist")
    else:
        how = (
            f"{source} is neither a local folder or file nor a dataset in the Hugging Face "
            f"cache. Download it where you have network access (`huggingface-cli download "
            f"{source} --repo-type dataset`, which fills the cache) or pass its local folder"
        )
        found = datasets.load_dataset(str(snapshot(str(source), how, revision)), name=config)
    return _one_split(found, split, str(source))


def _suffix(path: Path) -> str:
    """A file's format suffix, a compression's ``.gz`` aside (``test.jsonl.gz``: ``.jsonl``)."""
    suffixes = [s for s in path.suffixes if s != ".gz"]
    return suffixes[-1] if suffixes else ""


def _one_split(found: Any, split: str | None, source: str) -> Any:
    """The asked split of a ``DatasetDict`` (or the dataset itself, when it is one)."""
    splits = list(getattr(found, "keys", lambda: [])())
    if not splits:
        if split not in (None, getattr(found, "split", None)):
            raise NoSuchSplit(f"{source} is one split ({found.split}), not {split!r}")
        return found
    if split is None:
        if len(splits) == 1:
            return found[splits[0]]
        if PREFERRED_SPLIT in splits:
            return found[PREFERRED_SPLIT]
        raise NoSuchSplit(f"{source} has splits {splits}: name one (split=...)")
    if split not in splits:
        raise NoSuchSplit(f"{source} has no split {split!r}; its splits: {splits}")
    return found[split]


def rows(source: str | Path, split: str | None = None) -> list[dict]:
    """The records of one split of ``source`` (``open_dataset``), as dictionaries."""
    return open_dataset(source, split).to_list()


def load_hf(
    source: str,
    split: str | None = None,
    columns: dict[str, str] | None = None,
    benchmark: str | None = None,
    config: str | None = None,
    revision: str | None = None,
) -> list[Sample]:
    """The samples of one split of a Hugging Face dataset (``open_dataset``), mapped by their
    columns' names (HumanEval's or MBPP's schema, after renaming ``columns``: field → the
    dataset's column). ``benchmark`` names the samples' benchmark (default: the source's last
    part, a file's without its suffixes)."""
    data = open_dataset(source, split, config, revision)
    columns = dict(columns or {})
    absent = sorted(theirs for theirs in columns.values() if theirs not in data.column_names)
    if absent:
        raise InputError(f"{source}: no column(s) {absent}; its columns: {data.column_names}")
    data = data.rename_columns({theirs: ours for ours, theirs in columns.items() if ours != theirs})
    have = set(data.column_names)
    last = Path(str(source).rstrip("/"))
    benchmark = benchmark or (last.name.split(".")[0] if last.is_file() else last.name) or source
    if set(HUMANEVAL) <= have:
        return humaneval_samples(data.to_list(), benchmark)
    if set(MBPP) <= have:
        return [mbpp_sample(r, r["task_id"], benchmark) for r in data.to_list()]
    raise InputError(
        f"{source}: its columns {sorted(have)} fit no known schema. HumanEval's lacks "
        f"{[c for c in HUMANEVAL if c not in have]}, MBPP's lacks "
        f"{[c for c in MBPP if c not in have]}; map yours with columns={{field: column}} "
        "(in Python: load_benchmark's option)"
    )
