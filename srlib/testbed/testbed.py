"""The testbed one configuration builds (``build.build``): its samples, split, variants,
corpus, models and runs, and the scores of any of its checkpoints — each through the
artifact store, remembered on the object, so every chapter asks ``tb.scores(path, n,
black)`` and nothing is scored twice."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from srlib.detection.detect import detect, score_plugins
from srlib.detection.plugins import Plugin
from srlib.detection.scoring import ngram_accuracy_many
from srlib.errors import NotBuilt
from srlib.models.cache import CachedModel
from srlib.models.hf import HFModel
from srlib.samples import Sample, read_jsonl
from srlib.store import Artifact, Store, digest, key_of
from srlib.testbed.config import TestbedConfig
from srlib.testbed.runs import LeakRun, run_name
from srlib.transforms import Variant, Variants

if TYPE_CHECKING:  # the type only: the reading room never imports the corpus builder
    from srlib.testbed.corpus import Corpus


def _missing(value) -> bool:
    """Whether a stored value is absent (``None`` or NaN)."""
    return value is None or (isinstance(value, float) and np.isnan(value))


def _floats(values) -> list[float]:
    """A stored list of scores as floats, an absent one as NaN."""
    if values is None:
        return []
    return list(np.asarray([np.nan if _missing(v) else v for v in values], dtype=float))


def variants_artifact(
    config: TestbedConfig,
    samples: list[Sample],
    n: int | None = None,
    tag: str = "",
    avoid: list | None = None,
) -> Artifact:
    """What ``cached_variants`` is keyed on: the samples, ``n`` (``None``: ``n_max``), the
    kinds, the seed, ``tag``, the names to ``avoid`` (if any) and the variant code."""
    n = config.n_max if n is None else n
    inputs = {"samples": digest([s.to_dict() for s in samples]), "n": n, "kinds": config.kinds}
    if avoid is not None:
        inputs["avoid"] = digest([sorted(names) for names in avoid])
    return Artifact("variants", inputs | {"seed": config.seed, "tag": tag})


def read_variants(folder: Path, samples: list[Sample]) -> list[Variants]:
    """The variants a ``cached_variants`` artifact holds, one set per sample, in order."""
    flat = read_jsonl(folder / "variants.jsonl", Variant)
    meta = json.loads((folder / "reasons.json").read_text())
    by_id: dict[str, list] = {s.id: [] for s in samples}
    for v in flat:
        by_id[v.original_id].append(v)
    return [Variants(by_id[s.id], reasons=meta[s.id]) for s in samples]


@dataclass
class Testbed:
    """What one configuration builds; ``runs`` maps run names to their checkpoints."""

    config: TestbedConfig
    cache_dir: Path
    samples: list[Sample]
    calibration: list[Sample]
    split: pd.DataFrame
    variants: list[Variants]
    calibration_variants: list[Variants]  # ``n`` for the first K calibration samples, else none
    corpus: Corpus
    base: Path
    base_losses: list[float]
    base_key: str  # the base model's store key (a given checkpoint: its content fingerprint)
    reference: Path
    runs: dict[str, LeakRun]
    memo: dict = field(default_factory=dict, repr=False)  # score tables already computed
    paraphrase_variants: dict = field(default_factory=dict, repr=False)  # id → its paraphrase
    calibration_twins: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)  # the
    # calibration problems left out as twins of evaluated samples (id, twin, reason)
    plugins: tuple[Plugin, ...] = ()  # a researcher's detectors, scored beside the built-ins
    failures: dict = field(default_factory=dict, repr=False)  # (plug-in, checkpoint, texts)
    # → the calls it could not score, by reason (``"calibration"`` for the clean split's texts)
    opened: dict = field(default_factory=dict, repr=False)  # ``build.shared``'s arguments, so
    # a worker of ``prepare`` opens the same testbed
    reading: bool = False  # opened for reading (``prepare`` made everything): a score, run or
    # model call not in the cache is ``NotBuilt``, never computed

    @property
    def store(self) -> Store:
        """The artifact store under the testbed's cache folder."""
        return Store(self.cache_dir)

    @property
    def main(self) -> str:
        """The name of the main leaked run (the configured code-to-text ratio)."""
        return run_name(self.config.code_to_text)

    def leaked_texts(self) -> dict[str, str]:
        """Sample id → the text that was leaked (the scored text)."""
        leaked = set(self.split.id[self.split.leaked])
        return {s.id: s.text for s in self.samples if s.id in leaked}

    def exposure_groups(self) -> dict[str, int]:
        """The exposure sweep: leaked sample id → copies seen (one of ``exposure_sweep``),
        groups of equal size by seed, stratified by benchmark."""
        sweep = self.config.exposure_sweep
        rng = random.Random(f"{self.config.seed}:exposure")
        out = {}
        for _, ids in self.split[self.split.leaked].groupby("benchmark", sort=False).id:
            ids = list(ids)
            rng.shuffle(ids)
            out |= {i: sweep[k % len(sweep)] for k, i in enumerate(ids)}
        return out

    def paraphrases(self) -> dict[str, str]:
        """The paraphrase leak: leaked sample id → the text of a variant the scoring never
        uses, whose new names are none of the scored variants' (``build.paraphrase_variants``;
        empty unless the configuration asks for the paraphrase run); samples without one are
        not leaked in that run and are left out of its evaluation."""
        return {i: v.text for i, v in self.paraphrase_variants.items()}

    def model(self, path: Path, progress: bool = False, namespace: str = "") -> CachedModel:
        """A checkpoint behind the testbed's score cache (``namespace``: ``CachedModel``'s)."""
        c = self.config
        hf = HFModel(
            str(path),
            device=c.device,
            dtype=c.dtype,
            batch_size=c.score_batch,
            generate_batch=c.generate_batch,
            threads=c.threads,
        )
        cache = self.cache_dir / "scores.sqlite"
        return CachedModel(
            hf, cache, progress=progress, namespace=namespace, read_only=self.reading
        )

    def scores(
        self,
        path: Path,
        n: int | None = None,
        black: bool = False,
        variants: list[Variants] | None = None,
        progress: bool = False,
        apart: bool = False,
    ) -> pd.DataFrame:
        """``detect`` on the testbed's samples with their first ``n`` variants (``None``: the
        config's ``n``; 0: the originals only) or the given ``variants``, gray-box and, with
        ``black``, black-box with n-gram accuracy; the base model as reference; labels joined.
        One row per sample, through the store (keyed on the model, the texts, the settings
        and the scoring code) and remembered on the testbed. Each of ``plugins`` adds its
        columns from an artifact of its own, keyed on its source (``_with_plugins``). With
        ``apart``, the model calls are shared with no table of another ``n`` (``CachedModel``'s
        namespace): for a request that overlaps the chapters' own in part (``n_max`` beside
        ``n``) and may run beside them."""
        n = self.config.n if n is None else n
        namespace = f"n={n}" if apart else ""
        remembered = ("scores", str(path), f"{n} apart" if apart else n, black, self._plugin_key())
        if variants is None and remembered in self.memo:
            return self.memo[remembered]
        lm = self.model(path, progress, namespace)
        given = variants is not None
        variants = variants if given else [Variants(v[:n]) for v in self.variants]
        base = self.model(self.base, namespace=namespace) if Path(path) != Path(self.base) else None
        texts = [
            [s.text] + [v.text for v in vs] for s, vs in zip(self.samples, variants, strict=True)
        ]
        inputs = {
            "model": [lm.fingerprint, key_of(path)] + ([namespace] if apart else []),  # content,
            # the artifact it came from (and the calls' namespace)
            "reference": [base.fingerprint, key_of(self.base)] if base else "",
            "texts": digest(texts),
            "labels": digest(self.split[["id", "leaked"]].to_dict("records")),
            "black": black,
            "max_new_tokens": self.config.max_new_tokens,
        }
        artifact = Artifact("tables", inputs)
        folder = self.store.get(artifact)
        if folder is None:
            setting = "gray- and black-box" if black else "gray-box"
            self._unbuilt(f"the {setting} scores of {path} with {n} variant(s)")
            table = self._detect(lm, base, self.samples, variants, black, progress)
            table = table.merge(self.split[["id", "leaked"]], on="id")
            with self.store.put(artifact) as tmp:
                table.to_parquet(tmp / "table.parquet")
            folder = self.store.path(artifact)
        table = self._read_table(folder / "table.parquet")
        table = self._with_plugins(table, path, lm, variants, inputs, black)
        if not given:
            self.memo[remembered] = table
        return table

    def _plugin_key(self) -> tuple:
        """What the plug-ins add to a remembered table's key: each one's name and source."""
        return tuple((p.entry.name, p.source, p.higher_is_leaked) for p in self.plugins)

    def _with_plugins(
        self, table: pd.DataFrame, path, lm, variants: list[Variants], inputs: dict, black: bool
    ) -> pd.DataFrame:
        """``table`` with each plug-in's columns (black-box ones where ``black``), each from an
        artifact keyed on the model, the texts and the plug-in's source: editing one plug-in
        rescores only it. Its failure counts go to ``failures``."""
        for p in self.plugins:
            if p.entry.setting == "black" and not black:
                continue
            keyed = {k: inputs[k] for k in ("model", "texts")}
            keyed["plugin"] = [p.entry.name, p.kind, p.higher_is_leaked, p.source]
            if p.entry.setting == "black":
                keyed["max_new_tokens"] = self.config.max_new_tokens
            artifact = Artifact("plugin-scores", keyed, name=p.entry.score)
            folder = self.store.get(artifact)
            if folder is None:
                self._unbuilt(f"the scores of {p.entry.name} on {path}")
                own = score_plugins(lm, self.samples, variants, [p])
                with self.store.put(artifact) as tmp:
                    own.to_parquet(tmp / "table.parquet")
                    (tmp / "failures.json").write_text(json.dumps(own.attrs["plugin failures"]))
                folder = self.store.path(artifact)
            failed = json.loads((folder / "failures.json").read_text())[p.entry.name]
            self.failures[p.entry.name, str(path), inputs["texts"]] = failed
            own = self._read_table(folder / "table.parquet")
            table = table.drop(columns=p.columns, errors="ignore").merge(own, on="id")
        return table

    def _unbuilt(self, what: str) -> None:
        """Refuse to compute ``what`` on a testbed opened for reading."""
        if self.reading:
            raise NotBuilt(
                f"{what} were never computed (seed {self.config.seed}): the scoring stage, "
                "testbed.prepare.prepare(tb), scores what the reports read"
            )

    @staticmethod
    def _read_table(file: Path) -> pd.DataFrame:
        """A cached score table, its per-variant score columns as lists of floats again: an
        undecided value reads back as NaN whatever parquet made of the column (one that held
        only NaN comes back as ``None``s)."""
        table = pd.read_parquet(file)
        for column in table.columns:
            if column.endswith("_scores"):
                table[column] = table[column].map(_floats)
            elif table[column].dtype == object and table[column].map(_missing).all():
                table[column] = np.nan  # a score column with no value at all
        return table

    def calibration_scores(self, path: Path, black: bool = False) -> pd.DataFrame:
        """Scores of the known-clean calibration samples under one checkpoint: gray-box with the
        variants the first ``calibration_variants`` of them have (so self-referential margins
        can be calibrated too), and black-box likewise where ``black`` (SR black's own clean
        flag rate, at which the baselines are matched to it); the model calls go through the
        score cache and the table is remembered on the testbed."""
        remembered = ("calibration", str(path), black, self._plugin_key())
        if remembered not in self.memo:
            self.memo[remembered] = self._calibration_scores(path, black)
        return self.memo[remembered]

    def _calibration_scores(self, path: Path, black: bool) -> pd.DataFrame:
        lm = self.model(path)
        base = self.model(self.base) if Path(path) != Path(self.base) else None
        table = self._detect(lm, base, self.calibration, self.calibration_variants, False, False)
        if black:  # with the same variants: SR black's clean flag rate is what it is matched at
            variants = self.calibration_variants
            black_table = self._detect(lm, base, self.calibration, variants, True, False)
            extra = [c for c in black_table.columns if c not in table.columns]
            table = table.join(black_table[extra])
        plugins = [p for p in self.plugins if black or p.entry.setting == "gray"]
        if plugins:  # the model's calls are cached; a plug-in's own work is all it repeats
            own = score_plugins(lm, self.calibration, self.calibration_variants, plugins)
            for name, failed in own.attrs["plugin failures"].items():
                self.failures[name, str(path), "calibration"] = failed
            table = table.merge(own, on="id")
        return table.assign(leaked=False)

    def _detect(self, lm, base, samples, variants, black: bool, progress: bool) -> pd.DataFrame:
        """``detect`` with the testbed's settings, plus n-gram accuracy when ``black``."""
        table = detect(
            lm,
            samples,
            variants=variants,
            setting="both" if black else "gray",
            reference=base,
            max_new_tokens=self.config.max_new_tokens,
            progress=progress,
        )
        if black:
            acc = ngram_accuracy_many(lm, [s.text for s in samples])
            table["score_ngram_acc"] = [a.score for a in acc]
        return table
