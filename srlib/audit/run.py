"""``audit``: SrDetection over models × benchmarks, with an empirical null, as tidy tables.

Every model scores the same variants of every benchmark (made once, seeded, kept in the
output folder). Each model × benchmark's per-sample table is written as soon as it is done
and every score goes through the score cache, so an interrupted audit resumes where it
stopped. The flag rate of a sample set means little alone: a clean model already prefers
an original's own names to renamed ones. So every rate stands beside its nominal chance
level (each sample's own 1/(n_i + 1)) and, where one is given, an **empirical null** — the
reference model's rate on the same samples, or the same model's rate on control samples it
cannot have seen — and the excess over the null with its interval: paired (McNemar's exact
test, Newcombe's paired interval) against a reference model on the same samples, unpaired
(Fisher's exact test) against control samples.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pandas as pd

from srlib.audit.models import AuditInputError, AuditModel, label_of, open_model
from srlib.audit.summary import (
    CONTROL,
    DECISIONS,
    decisions_of,
    failure_table,
    summarise,
    undecided,
    without_chance,
)
from srlib.benchmarks import load_benchmark
from srlib.costs import costed
from srlib.detection import registry
from srlib.detection.decide import contrasted
from srlib.detection.detect import SETTINGS, detect
from srlib.detection.plugin_contrasts import flags as plugin_flags
from srlib.detection.plugins import load as load_plugins
from srlib.detection.plugins import rules
from srlib.execution.progress import tqdm
from srlib.models.cache import CachedModel
from srlib.samples import Sample, read_jsonl, write_jsonl
from srlib.store import Artifact, atomic_path, check_folder, claim_folder, digest
from srlib.testbed.locked import resolve
from srlib.transforms import KINDS, Variant, Variants, make_variants_many


@dataclass(frozen=True)
class AuditSpec:
    """What identifies an audit's results: the same spec in the same folder resumes."""

    models: tuple[tuple[str, str], ...]  # (label, spec) per audited model
    benchmarks: tuple[str, ...]
    n: int = 5
    setting: str = "both"
    reference: str | None = None
    control: str | None = None
    limit: int | tuple[tuple[str, int], ...] | None = None  # first N samples of every set, or
    # (benchmark spec, N) pairs: those sets cut, the others whole
    kinds: tuple[str, ...] = KINDS
    seed: int = 0
    max_new_tokens: int = 128
    variants: str = ""  # digest of given variants ("" when the audit makes its own)
    reference_label: str | None = None  # the reference's name in tables (default from spec)
    detectors: tuple[tuple, ...] = ()  # a researcher's plug-ins, each as ``_plugin_identity``
    # says: not part of the folder's claim; the parts they are scored in are keyed on them

    @property
    def ref_label(self) -> str | None:
        """The reference model's label, or None without one."""
        if not self.reference:
            return None
        return self.reference_label or label_of(self.reference)

    def limit_of(self, name: str) -> int | None:
        """How many of the sample set ``name`` (a benchmark spec) the audit reads."""
        if isinstance(self.limit, tuple):
            return dict(self.limit).get(name)
        return self.limit

    def check(self) -> None:
        """One clear error per unusable argument."""
        if not self.models:
            raise AuditInputError("name at least one model to audit (--model)")
        if not self.benchmarks:
            raise AuditInputError("name at least one benchmark (--benchmark)")
        limits = dict(self.limit) if isinstance(self.limit, tuple) else {"": self.limit}
        for name, limit in limits.items():
            if limit is not None and limit < 1:
                where = f" of {name}" if name else ""
                raise AuditInputError(f"--limit{where} must be at least 1, got {limit}")
        if isinstance(self.limit, tuple):
            named = {*self.benchmarks, *([self.control] if self.control else [])}
            stray = sorted(set(limits) - named)
            if stray:
                raise AuditInputError(f"limits given for {stray}, which the audit does not read")
        if self.n < 1:
            raise AuditInputError(f"--n must be at least 1 variant per sample, got {self.n}")
        if self.setting not in SETTINGS:
            raise AuditInputError(f"--setting must be one of {SETTINGS}, got {self.setting!r}")
        labels = [label for label, _ in self.models]
        twice = sorted({x for x in labels if labels.count(x) > 1})
        if twice:
            raise AuditInputError(f"two audited models share the name(s) {twice}")
        if self.reference and self.ref_label in labels:
            raise AuditInputError(f"the reference {self.reference!r} is also an audited model")


@dataclass
class Audit:
    """An audit's results: per-sample rows, the summary, and the settings each model ran."""

    spec: AuditSpec
    out: Path
    samples: pd.DataFrame
    summary: pd.DataFrame
    settings: dict[str, list[str]] = field(default_factory=dict)
    left_out: list[str] = field(default_factory=list)  # plug-ins no model's settings ran
    failures: pd.DataFrame = field(default_factory=pd.DataFrame)  # ``summary.failure_table``


def audit(
    models: Sequence[str] | Mapping[str, str],
    benchmarks: Sequence[str],
    out: str | Path,
    *,
    n: int = 5,
    setting: str = "both",
    reference: str | None = None,
    reference_label: str | None = None,
    control: str | None = None,
    limit: int | Mapping[str, int] | None = None,
    kinds: Sequence[str] = KINDS,
    seed: int = 0,
    max_new_tokens: int = 128,
    device: str = "cpu",
    dtype: str = "float32",
    batch_size: int = 8,
    generate_batch: int | None = None,
    threads: int | None = None,
    cache: str | Path | None = None,
    variants: Mapping[str, Sequence[Variants]] | None = None,
    progress: bool = True,
    report: bool = True,
    keyed: bool = False,
    detectors: Sequence = (),
) -> Audit:
    """Audit ``models`` (specs, or label → spec) on ``benchmarks`` into the folder ``out``:
    ``samples.parquet`` / ``samples.csv`` (one row per model, benchmark and sample),
    ``summary.json`` / ``summary.csv`` and, with ``report``, ``report.html``. ``reference``
    (a model spec, named ``reference_label`` in tables) and ``control`` (a benchmark spec
    of samples the models cannot have seen) give the empirical null; ``limit``: the first N
    samples of every set, or a mapping of benchmark specs (the control's included) to N, the
    sets it does not name read whole; ``variants``
    (benchmark → one ``Variants`` per sample) replaces the variants the audit would make;
    ``cache`` is the score cache (default ``out/scores.sqlite``), shared with whoever opens
    the same model with the same ``device``, ``dtype`` and ``threads``. ``out`` is claimed for
    this audit (one holding another audit's results is refused in one line); with
    ``keyed`` the results go to ``out/<key>`` instead, so changed inputs or a changed srlib
    get a folder of their own (the book's way: a rerun recomputes, never refuses).
    ``detectors`` (``plugins.load``'s entries: ``"module:function"``, ``"file.py:function"``
    or dicts) are scored beside the built-ins; each threshold-free one (a score's SR rule, a
    rule) is one more decision in the summary and the report, flagged per sample in
    ``flag_<its name>`` (an edit of one changes the audit's key)."""
    found = load_plugins(detectors)
    pairs = (
        tuple(models.items())
        if isinstance(models, Mapping)
        else tuple((label_of(m), m) for m in models)
    )
    pairs = tuple((label, resolve(m)) for label, m in pairs)  # a locked model by its converted
    # folder, whose name holds its file's hash: another locked file is another audit
    spec = AuditSpec(
        pairs,
        tuple(benchmarks),
        n,
        setting,
        reference,
        control,
        tuple(sorted(limit.items())) if isinstance(limit, Mapping) else limit,
        tuple(kinds),
        seed,
        max_new_tokens,
        _digest(variants) if variants else "",
        reference_label,
        tuple(_plugin_identity(p) for p in found),
    )
    spec.check()
    clash = sorted({d.name for d in rules(found)} & set(DECISIONS))
    if clash:
        for name in {n for p in found for n in p.names}:
            registry.DETECTORS.pop(name, None)  # refused: leaves the registry as it was
        raise AuditInputError(
            f"detector name(s) {clash} are the audit's built-in decisions "
            f"({', '.join(DECISIONS)}); give your detector another name"
        )
    out = Path(out) / _artifact(spec).key if keyed else Path(out)
    sets = {b: load_benchmark(b)[: spec.limit_of(b)] for b in spec.benchmarks}
    if control:
        sets[CONTROL] = load_benchmark(control)[: spec.limit_of(control)]
    _claim(out, spec, write=False)  # another audit's folder: say so before loading models
    opened, batches = [], (batch_size, generate_batch)
    if reference:
        opened.append(_open(spec.ref_label, reference, spec, device, dtype, batches, threads))
    opened += [_open(label, m, spec, device, dtype, batches, threads) for label, m in pairs]
    _claim(out, spec)  # only once every input is known good
    given = dict(variants or {})
    var = {b: _variants(out, b, s, spec, given.get(b), progress) for b, s in sets.items()}
    store = Path(cache) if cache else out / "scores.sqlite"
    ran = {m.label: _settings(m, setting) for m in opened}
    jobs = [(m, b) for m in opened for b in sets]
    parts = []
    for m, b in tqdm(jobs, desc="audit (model × benchmark)", disable=not progress):
        role = "reference" if reference and m.spec == reference else "audited"
        parts.append(
            _part(out, m, role, b, sets[b], var[b], ran[m.label], store, spec, progress, found)
        )
    table = pd.concat(parts, ignore_index=True)
    if reference:
        table = _add_contrasted(table, spec.ref_label)
    said = undecided(parts, jobs, found)
    summary = summarise(table, spec.ref_label, decisions_of(found), said, without_chance(found))
    every = {x for settings in ran.values() for x in settings}
    left = [
        f"{p.entry.name} ({p.entry.setting}-box)" for p in found if p.entry.setting not in every
    ]
    result = Audit(spec, out, table, summary, ran, left, failure_table(parts, jobs))
    _write(result)
    if report:
        from srlib.audit.report import write_report

        write_report(result)
    return result


def _digest(variants: Mapping[str, Sequence[Variants]]) -> str:
    """A short hash of given variants' texts, so a changed set is another audit."""
    return digest({name: [[v.text for v in vs] for vs in variants[name]] for name in variants})


def _artifact(spec: AuditSpec) -> Artifact:
    """The audit as the store sees it: its settings and the audit code (the plug-ins key the
    parts they are scored in instead, so a changed plug-in rescores in the same folder)."""
    return Artifact("audit", {k: v for k, v in asdict(spec).items() if k != "detectors"})


def _plugin_identity(p) -> tuple:
    """Everything about a plug-in that changes a decision: its name, kind, setting,
    orientation, rule and source (its function and what it reads in its file)."""
    rule = p.rule.name if p.rule else ""
    return (p.entry.name, p.kind, p.entry.setting, p.higher_is_leaked, rule, p.source)


def _claim(out: Path, spec: AuditSpec, write: bool = True) -> None:
    """Refuse a folder that holds another audit's results (other settings or other srlib
    code) in one line naming what differs; record this audit's manifest."""
    artifact = _artifact(spec)
    if write:
        claim_folder(out, artifact)
    else:
        check_folder(out, artifact)


def _variants(out, name, samples, spec, given, progress) -> list[Variants]:
    """The benchmark's variants: given, else read from or made into ``out/variants``."""
    if given is not None:
        if len(given) != len(samples):
            raise AuditInputError(f"{len(given)} variant sets given for {len(samples)} {name}")
        for s, vs in zip(samples, given, strict=True):
            if any(v.original_id != s.id for v in vs):
                raise AuditInputError(f"the variants given for {name} are not of {s.id}")
        return [Variants(list(vs)[: spec.n]) for vs in given]
    file = out / "variants" / f"{_safe(name)}.jsonl"
    if file.is_file():
        by_id: dict[str, list] = {s.id: [] for s in samples}
        for v in read_jsonl(file, Variant):
            by_id[v.original_id].append(v)
        return [Variants(by_id[s.id]) for s in samples]
    with costed(out, file, "audit: variants"):
        made = make_variants_many(samples, spec.n, spec.kinds, spec.seed, progress=progress)
        write_jsonl([v for vs in made for v in vs], file)
    return made


def _safe(name: str) -> str:
    """A name as a file name: anything but letters, digits, '.', '-' and '_' becomes '_'."""
    return re.sub(r"[^\w.-]+", "_", name)


def _open(label, model_spec, spec: AuditSpec, device, dtype, batches, threads) -> AuditModel:
    gray = spec.setting == "gray"
    return open_model(model_spec, label, device, dtype, batches[0], gray, threads, batches[1])


def _settings(m: AuditModel, setting: str) -> list[str]:
    """The settings this model runs: gray-box only where it gives prompt log-probs."""
    out = []
    if setting in ("gray", "both") and m.gray:
        out.append("gray")
    if setting in ("black", "both"):
        out.append("black")
    return out


def _part(out, m, role, name, samples: list[Sample], variants, ran, store, spec, progress, found):
    """One model × sample set (a table), read back if an earlier run finished it; the
    plug-ins its settings can score (``found``) beside the built-ins, their rules' flags in
    ``flag_<column>``."""
    mine = [p for p in found if p.entry.setting in ran]
    key = f"--{digest([_plugin_identity(p) for p in mine], length=12)}" if mine else ""
    file = out / "parts" / f"{_safe(m.label)}--{_safe(name)}{key}.parquet"
    if file.is_file():
        return _read(file)
    with costed(out, file, "audit: scores"):
        lm = CachedModel(m.model, store, progress=progress)
        setting = "both" if len(ran) == 2 else ran[0]
        table = detect(
            lm,
            samples,
            variants=variants,
            setting=setting,
            max_new_tokens=spec.max_new_tokens,
            progress=False,
            plugins=mine,
        )
        failed = table.attrs.get("plugin failures", {})
        table = table.assign(**plugin_flags(table, found))
        table.insert(0, "model", m.label)
        table.insert(1, "role", role)
        table.insert(2, "set", CONTROL if name == CONTROL else "benchmark")
        table["benchmark"] = name if name != CONTROL else table["benchmark"]
        with atomic_path(file.with_suffix(".failures.json")) as tmp:
            tmp.write_text(json.dumps(failed))
        with atomic_path(file) as tmp:
            table.to_parquet(tmp)
    return _read(file)


def _read(file: Path) -> pd.DataFrame:
    """A part as written, its flags as nullable booleans and the calls each plug-in could
    not score (``attrs["plugin failures"]``: detector → reason → calls)."""
    table = pd.read_parquet(file)
    for column in table.columns:
        if column.endswith("_scores"):
            table[column] = table[column].map(lambda v: list(v) if v is not None else None)
    for column in table.columns:
        if column in ("sr_gray", "sr_black") or column.startswith("flag_"):
            table[column] = table[column].astype("boolean")
    failures = file.with_suffix(".failures.json")
    table.attrs["plugin failures"] = json.loads(failures.read_text()) if failures.is_file() else {}
    return table


def _add_contrasted(table: pd.DataFrame, ref: str) -> pd.DataFrame:
    """``sr_gray_contrasted``: the audited model prefers the original beyond what the
    reference does, against every variant (``decide.contrasted``), per sample."""
    if "gray_scores" not in table:
        return table
    refs = table[table.model == ref].set_index(["set", "benchmark", "id"]).gray_scores
    flags = []
    for row in table.itertuples():
        r = refs.get((row.set, row.benchmark, row.id))
        ok = row.model != ref and isinstance(r, list) and isinstance(row.gray_scores, list)
        flags.append(contrasted(row.gray_scores, r).leaked if ok else None)
    return table.assign(sr_gray_contrasted=pd.array(flags, dtype="boolean"))


def _write(result: Audit) -> None:
    """The tables and the summary JSON (with the settings each model ran)."""
    out = result.out
    result.samples.to_parquet(out / "samples.parquet")
    flat = result.samples.copy()
    for column in flat.columns:
        if column.endswith("_scores"):
            flat[column] = flat[column].map(lambda v: json.dumps(v) if v is not None else "")
    flat.to_csv(out / "samples.csv", index=False)
    result.summary.to_csv(out / "summary.csv", index=False)
    result.failures.to_csv(out / "plugin_failures.csv", index=False)
    doc = {
        "spec": asdict(result.spec),
        "settings": result.settings,
        "summary": json.loads(result.summary.to_json(orient="records")),
    }
    (out / "summary.json").write_text(json.dumps(doc, indent=1))
