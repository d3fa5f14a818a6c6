"""``detect``: SrDetection and the threshold baselines on a set of samples, as one table."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np
import pandas as pd

from srlib.detection.decide import self_referential
from srlib.detection.plugins import Plugin, score_all
from srlib.detection.scoring import (
    GRAY_SCORERS,
    NeedsFullDistribution,
    ngram_overlap,
    perplexity,
    prefix_suffix,
    reference_ratio,
)
from srlib.models.base import GenerationSettings, LanguageModel, TokenScores
from srlib.samples import Sample
from srlib.transforms import KINDS, Variants, make_variants_many

SETTINGS = ("gray", "black", "both")


def detect(
    model: LanguageModel,
    samples: Sequence[Sample],
    n: int = 5,
    setting: str = "both",
    variants: Sequence[Variants] | None = None,
    kinds: Sequence[str] = KINDS,
    seed: int = 0,
    reference: LanguageModel | None = None,
    ngo_n: int = 3,
    fraction: float = 0.5,
    max_new_tokens: int = 128,
    progress: bool = True,
    plugins: Sequence[Plugin] = (),
    **variant_options,
) -> pd.DataFrame:
    """One row per sample: raw and oriented baseline scores of the original, SrDetection's
    decision, rank p-value and margin per setting, and the number of variants used.
    Raw values keep their names (``ppl``, ``min_k``, ``zlib``, ...); the oriented score of
    every baseline (higher = more likely leaked) is ``score_<name>``.

    ``variants`` (one ``Variants`` per sample) skips variant generation; otherwise ``n``
    variants of ``kinds`` are made with ``seed``. Gray-box columns: ``ppl``,
    ``ppl_variants_min``, ``sr_gray``, ``sr_gray_p``, ``sr_gray_margin``, ``min_k``,
    ``min_k_pp``, ``zlib`` (and ``ref`` with a reference model). Black-box: ``ngo`` of the
    original's greedy suffix, ``ngo_variants_max``, ``sr_black``, ``sr_black_p``,
    ``sr_black_margin``; ``score_ngo`` is the NGO threshold baseline. Decisions are read
    from oriented scores and margins are in nats (see ``srlib.detection.decide``); ``sr_*`` is a
    nullable boolean, ``<NA>`` for an undecided sample (no variants, or a NaN score).
    ``gray_scores`` / ``black_scores`` list the oriented scores of the original and then of
    each variant, for decisions on subsets of the variants or against a reference model;
    ``min_k_scores``, ``min_k_pp_scores`` and ``zlib_scores`` do the same for those scores
    (the self-referential rule applies to any oriented score).

    ``plugins`` (``plugins.plugin``): each user detector's oriented score of the original,
    ``score_plugin_<slug>``, and of the original and each variant, ``plugin_<slug>_scores``
    (its SR rule's input); a sample it cannot score is NaN there, and the counts by reason
    are in ``table.attrs["plugin failures"]`` (detector → reason → calls); a rule plug-in's
    margin is ``plugin_<slug>_margin``.
    """
    if setting not in SETTINGS:
        raise ValueError(f"setting must be one of {SETTINGS}, got {setting!r}")
    if variants is None:
        variants = make_variants_many(samples, n, kinds, seed, progress=progress, **variant_options)
    if len(variants) != len(samples):
        raise ValueError(f"{len(variants)} variant sets for {len(samples)} samples")
    rows = [
        {"id": s.id, "benchmark": s.benchmark, "n_variants": len(vs)}
        for s, vs in zip(samples, variants, strict=True)
    ]
    groups = [[s, *vs] for s, vs in zip(samples, variants, strict=True)]
    unscored = [p.entry.name for p in plugins if setting not in ("both", p.entry.setting)]
    if unscored:
        raise ValueError(f"setting {setting!r} cannot score the plug-in(s) {unscored}")
    token_scores = None
    if setting in ("gray", "both"):
        token_scores = _gray(model, reference, groups, rows)
    if setting in ("black", "both"):
        _black(model, groups, rows, ngo_n, fraction, max_new_tokens)
    if plugins:
        own = score_plugins(model, samples, variants, plugins, token_scores)
        for row, extra in zip(rows, own.drop(columns="id").to_dict("records"), strict=True):
            row.update(extra)
    table = pd.DataFrame(rows)
    if plugins:
        table.attrs["plugin failures"] = own.attrs["plugin failures"]
    for column in ("sr_gray", "sr_black"):
        if column in table:
            table[column] = table[column].astype("boolean")
    return table


def _unique_texts(items: list[str]) -> tuple[list[str], dict[str, int]]:
    index = {t: i for i, t in enumerate(dict.fromkeys(items))}
    return list(index), index


def score_plugins(
    model: LanguageModel,
    samples: Sequence[Sample],
    variants: Sequence[Variants],
    plugins: Sequence[Plugin],
    token_scores: dict[str, TokenScores] | None = None,
) -> pd.DataFrame:
    """One row per sample: ``id`` and each plug-in's columns (``Plugin.columns``): a score's
    oriented value on the original and its list over the original and each variant, a
    rule's margin; NaN where it could not score, counted by reason in
    ``table.attrs["plugin failures"]`` (detector → reason → calls). ``token_scores`` (text →
    its scores) spares recomputing what ``detect`` already has."""
    groups = [[s, *vs] for s, vs in zip(samples, variants, strict=True)]
    rows = [{"id": s.id} for s in samples]
    failures = {p.entry.name: Counter() for p in plugins}
    if token_scores is None and any(p.kind == "gray" for p in plugins):
        texts, _ = _unique_texts([x.text for g in groups for x in g])
        token_scores = dict(zip(texts, model.token_logprobs(texts), strict=True))
    for p in plugins:
        if p.kind == "rule":
            values, failed = score_all(p, [(model, g[0], g[1:]) for g in groups])
            for row, value in zip(rows, values, strict=True):
                row[p.entry.score] = value
        else:
            if p.kind == "gray":
                inputs = [(token_scores[x.text], x.text) for g in groups for x in g]
            else:
                inputs = [(model, x) for g in groups for x in g]
            values, failed = score_all(p, inputs)
            start = 0
            for group, row in zip(groups, rows, strict=True):
                each = values[start : start + len(group)]
                row[p.entry.score], row[p.scores_column] = each[0], each.tolist()
                start += len(group)
        failures[p.entry.name].update(failed)
    table = pd.DataFrame(rows)
    table.attrs["plugin failures"] = {k: dict(v) for k, v in failures.items()}
    return table


def _gray(model, reference, groups, rows) -> dict[str, TokenScores]:
    """The gray-box columns into ``rows``; the token scores of every text, by text."""
    texts, index = _unique_texts([x.text for g in groups for x in g])
    scores = model.token_logprobs(texts)
    refs = reference.token_logprobs([g[0].text for g in groups]) if reference else None
    for k, (group, row) in enumerate(zip(groups, rows, strict=True)):
        ppls = [perplexity(scores[index[x.text]]) for x in group]
        verdict = self_referential(ppls[0].score, [p.score for p in ppls[1:]])
        row.update(
            ppl=ppls[0].raw,
            ppl_variants_min=min((p.raw for p in ppls[1:]), default=np.nan),
            gray_scores=[p.score for p in ppls],
            sr_gray=verdict.leaked,
            sr_gray_p=verdict.p_value,
            sr_gray_margin=verdict.margin,
        )
        for name, fn in GRAY_SCORERS.items():
            each = [_try(fn, scores[index[x.text]], x.text) for x in group]
            sc = each[0]
            if name != "ppl":
                row[name] = sc.raw if sc else np.nan
                row[f"{name}_scores"] = [x.score if x else np.nan for x in each]
            row[f"score_{name}"] = sc.score if sc else np.nan
        if refs is not None:
            sc = reference_ratio(scores[index[group[0].text]], refs[k])
            row.update(ref=sc.raw, score_ref=sc.score)
    return dict(zip(texts, scores, strict=True))


def _try(fn, token_scores, text):
    """A gray-box score, or None where the backend cannot give it (e.g. Min-K%++ without
    the full distribution); any other error is a bug and is raised."""
    try:
        return fn(token_scores, text)
    except NeedsFullDistribution:
        return None


def _black(model, groups, rows, ngo_n, fraction, max_new_tokens) -> None:
    splits = [[prefix_suffix(x, fraction) for x in g] for g in groups]
    prompts, index = _unique_texts([p for sp in splits for p, _ in sp])
    outputs = model.generate(prompts, GenerationSettings(max_new_tokens=max_new_tokens))
    for sp, row in zip(splits, rows, strict=True):
        ngo = [ngram_overlap(outputs[index[p]][0], suffix, ngo_n) for p, suffix in sp]
        verdict = self_referential(ngo[0].score, [g.score for g in ngo[1:]])
        row.update(
            ngo=ngo[0].raw,
            score_ngo=ngo[0].score,
            black_scores=[g.score for g in ngo],
            ngo_variants_max=max((g.raw for g in ngo[1:]), default=np.nan),
            sr_black=verdict.leaked,
            sr_black_p=verdict.p_value,
            sr_black_margin=verdict.margin,
        )


def variant_traces(
    model: LanguageModel, sample: Sample, variants: Sequence[Sample]
) -> dict[str, TokenScores]:
    """Token scores of an original and of each variant, labelled for
    ``plots.token_logprobs`` (the original first)."""
    texts = [sample.text] + [v.text for v in variants]
    labels = [f"{sample.id} original"] + [f"variant {i}" for i, _ in enumerate(variants)]
    return dict(zip(labels, model.token_logprobs(texts), strict=True))
