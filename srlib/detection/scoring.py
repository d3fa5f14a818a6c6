"""Per-text leakage scores from token log-probs (gray-box) or generations (black-box).

Every scorer returns a ``Score``: the raw value (perplexity, overlap, ...) and a score
oriented so that **higher means more likely leaked**. Conventions (each scorer's docstring
cites its paper): the first token of a text is not predicted; Min-K% takes the mean of the
lowest ``ceil(k·T)`` values; black-box scores work on *code tokens* (identifiers, numbers,
single symbols; no whitespace), so they are comparable across tokenizers and backends.
"""

from __future__ import annotations

import math
import zlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from srlib.codetext import CODE_TOKEN, code_tokens
from srlib.models.base import GenerationSettings, LanguageModel, TokenScores
from srlib.samples import Sample


@dataclass(frozen=True)
class Score:
    """A raw value and its orientation: ``score`` is higher for more likely leaked."""

    raw: float
    score: float


def _lowest(values: np.ndarray, k: float) -> np.ndarray:
    if not 0 < k <= 1:
        raise ValueError(f"k must be in (0, 1], got {k}")
    if len(values) == 0:
        return np.array([np.nan])
    return np.sort(values)[: max(1, math.ceil(k * len(values)))]


def perplexity(s: TokenScores) -> Score:
    """Perplexity exp(−mean log p); oriented as mean log p (lower PPL = more familiar)."""
    mean = float(np.mean(s.logprobs)) if len(s.logprobs) else float("nan")
    return Score(math.exp(-mean), mean)


def min_k(s: TokenScores, k: float = 0.2) -> Score:
    """Min-K% Prob (Shi et al., ICLR 2024): mean of the lowest k% token log-probs."""
    value = float(np.mean(_lowest(s.logprobs, k)))
    return Score(value, value)


class NeedsFullDistribution(ValueError):
    """A score needs the whole next-token distribution, which this backend does not give."""


def min_k_plus_plus(s: TokenScores, k: float = 0.2) -> Score:
    """Min-K%++ (Zhang et al., ICLR 2025): per token (log p − μ)/σ, mean of the lowest k%."""
    if np.isnan(s.mean).any() or np.isnan(s.var).any():
        raise NeedsFullDistribution(
            "Min-K%++ needs the full next-token distribution (μ, σ²) per token"
        )
    z = (s.logprobs - s.mean) / np.sqrt(np.maximum(s.var, 1e-12))
    value = float(np.mean(_lowest(z, k)))
    return Score(value, value)


def zlib_ratio(s: TokenScores, text: str) -> Score:
    """Zlib (Carlini et al., USENIX Security 2021): mean log-likelihood over zlib-compressed
    length in bytes; equivalently −(log PPL / zlib entropy), so higher = more memorised."""
    value = float(np.mean(s.logprobs)) / len(zlib.compress(text.encode("utf-8")))
    return Score(value, value)


def reference_ratio(s: TokenScores, reference: TokenScores) -> Score:
    """Reference-model calibration (Carlini et al. 2021): mean log p(target) − mean log
    p(reference); meaningful only if the reference model never saw the data."""
    value = float(np.mean(s.logprobs) - np.mean(reference.logprobs))
    return Score(value, value)


GRAY_SCORERS: dict[str, Callable[..., Score]] = {
    "ppl": lambda s, text: perplexity(s),
    "min_k": lambda s, text: min_k(s),
    "min_k_pp": lambda s, text: min_k_plus_plus(s),
    "zlib": lambda s, text: zlib_ratio(s, text),
}
"""Gray-box scorers by name, each ``f(token_scores, text) -> Score``."""


def ngram_overlap(generated: str, reference: str, n: int = 3) -> Score:
    """N-gram overlap (NGO) of a generated suffix with the true suffix, on code tokens:
    ``raw = |multiset n-grams(generated) ∩ n-grams(reference)| / |n-grams(reference)|`` (n
    shrinks to the reference's length when it is shorter; an empty reference scores 0).
    Oriented in log units like the gray-box scores: log((hits + 1) / (n-grams + 1)), finite
    at zero overlap and 0 at a perfect one."""
    ref, gen = code_tokens(reference), code_tokens(generated)
    n = max(1, min(n, len(ref)))
    grams = lambda toks: Counter(tuple(toks[i : i + n]) for i in range(len(toks) - n + 1))  # noqa: E731
    r, g = grams(ref), grams(gen)
    total, hits = sum(r.values()), sum((r & g).values())
    return Score(hits / total if total else 0.0, math.log((hits + 1) / (total + 1)))


def prefix_suffix(sample: Sample, fraction: float = 0.5) -> tuple[str, str]:
    """The black-box split, applied identically to an original and its variants: the prefix
    is the prompt (and ``text_sep``) plus the first ``floor(fraction · L)`` of the solution's
    L lines; the suffix is the rest of the solution (never empty). Whitespace at the end of
    the prefix moves to the suffix, so the prompt does not end inside what the tokenizer
    would have merged into one token (a newline with the next line's indent)."""
    lines = sample.solution.splitlines(keepends=True)
    k = min(int(fraction * len(lines)), max(0, len(lines) - 1))
    head = sample.prompt + sample.text_sep if "prompt" in sample.text_fields else ""
    prefix, suffix = head + "".join(lines[:k]), "".join(lines[k:])
    cut = len(prefix.rstrip())
    return prefix[:cut], prefix[cut:] + suffix


def ngram_accuracy(model: LanguageModel, text: str, n: int = 5, starts: int = 5) -> Score:
    """n-gram accuracy (Xu et al. 2024, BenBench): from ``starts`` evenly spaced prefixes
    (``linspace(2, len − n, starts)`` on code tokens), greedily generate and count a hit when
    the next ``n`` code tokens match exactly; score = hits / starts."""
    return ngram_accuracy_many(model, [text], n, starts)[0]


def ngram_accuracy_many(
    model: LanguageModel, texts: list[str], n: int = 5, starts: int = 5
) -> list[Score]:
    """``ngram_accuracy`` of many texts with one batched generation call (NaN for a text
    shorter than ``n + 3`` code tokens)."""
    plans, prompts = [], []
    for text in texts:
        toks = list(CODE_TOKEN.finditer(text))
        if len(toks) < n + 3:
            plans.append(None)
            continue
        positions = np.linspace(2, len(toks) - n, starts).astype(int)
        plans.append(
            [
                (len(prompts) + i, [t.group() for t in toks[p : p + n]])
                for i, p in enumerate(positions)
            ]
        )
        prompts += [text[: toks[p].start()] for p in positions]
    gens = (
        model.generate(prompts, GenerationSettings(max_new_tokens=8 * n, settled_code_tokens=n))
        if prompts
        else []
    )
    out = []
    for plan in plans:
        if plan is None:
            out.append(Score(float("nan"), float("nan")))
            continue
        hits = sum(code_tokens(gens[i][0])[:n] == truth for i, truth in plan) / starts
        out.append(Score(hits, hits))
    return out


def cdd_peak(
    model: LanguageModel,
    prompt: str,
    samples: int = 50,
    temperature: float = 0.8,
    max_tokens: int = 100,
    alpha: float = 0.05,
    seed: int = 0,
) -> Score:
    """CDD (Dong et al. 2024): sample outputs at ``temperature``, truncate to ``max_tokens``
    code tokens, and measure the token edit distance of each to the greedy output; the peak
    is the share within ``alpha · l`` (l: the longest output). A peaked output distribution
    (score above ξ = 0.01 in the paper) suggests contamination."""
    from rapidfuzz.distance import Levenshtein

    budget = 4 * max_tokens
    greedy = model.generate([prompt], GenerationSettings(max_new_tokens=budget))[0][0]
    sampled = model.generate(
        [prompt],
        GenerationSettings(
            max_new_tokens=budget, temperature=temperature, num_samples=samples, seed=seed
        ),
    )[0]
    ref = code_tokens(greedy)[:max_tokens]
    outs = [code_tokens(s)[:max_tokens] for s in sampled]
    longest = max([len(ref)] + [len(o) for o in outs]) or 1
    peak = float(np.mean([Levenshtein.distance(ref, o) <= alpha * longest for o in outs]))
    return Score(peak, peak)
