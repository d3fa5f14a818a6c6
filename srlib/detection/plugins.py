"""Bring your own detector: a researcher's score, named by one string, registered beside the
built-in detectors through the registry's one mechanism (``registry.register``).

A detector is one score function of one of two kinds:

- ``"gray"``: ``(token_scores, text) -> float`` — the model's token log-probabilities of a
  text (``models.base.TokenScores``) and the text itself;
- ``"black"``: ``(model, sample) -> float`` — a ``LanguageModel`` and a benchmark sample.

Each registers twice: the score as a threshold baseline (``name``, read on the original) and
the self-referential rule on it (``SR <name>``: the original scores higher than every
variant), so a new score gets SrDetection's comparison of itself for free. ``detect``
scores both on every sample and variant (``detect(..., plugins=[...])``).

``load_function`` imports it from ``"package.module:function"`` or ``"path/to/file.py:function"``;
``plugin`` checks its signature, keys it by its source code (editing it changes
``Plugin.source``, so a score cache keyed on it rescores only it) and registers it;
``score_all`` calls it on every input and reports, never drops, the ones it could not score
(it raised, or returned NaN or something that is not a number): those are undecided."""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import math
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from srlib.detection import registry
from srlib.detection.registry import Detector, register
from srlib.errors import InputError

KINDS = {"gray": ("token_scores", "text"), "black": ("model", "sample")}
"""Each kind's arguments, in order."""


class BadPlugin(InputError):
    """A detector that cannot be loaded or called as its kind requires; names the spec."""


@dataclass(frozen=True)
class Plugin:
    """A registered user detector: its registry entries (the score and the SR rule on it),
    function, kind, orientation and source key."""

    entry: Detector
    function: Callable
    kind: str
    higher_is_leaked: bool
    source: str  # digest of the function's source code
    rule: Detector | None = None  # "SR <name>", reading ``scores_column``

    @property
    def scores_column(self) -> str:
        """The ``detect`` column of the oriented scores of the original and each variant."""
        return f"plugin_{_slug(self.entry.name)}_scores"


def _slug(name: str) -> str:
    """A detector name as a column-safe word."""
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def load_function(spec: str) -> Callable:
    """The function ``spec`` names: ``"package.module:function"`` or ``"file.py:function"``."""
    where, sep, attr = spec.rpartition(":")
    if not sep or not where or not attr:
        raise BadPlugin(f"{spec!r}: name a function as 'package.module:function' or 'file.py:f'")
    try:
        module = _module(where)
    except BadPlugin:
        raise
    except Exception as e:  # whatever importing the user's module raises
        raise BadPlugin(f"{spec!r}: importing {where!r} failed: {type(e).__name__}: {e}") from e
    function = getattr(module, attr, None)
    if not callable(function):
        raise BadPlugin(f"{spec!r}: {where!r} has no function {attr!r}")
    return function


def _module(where: str):
    """The module at a ``.py`` path, or importable by dotted name."""
    if where.endswith(".py"):
        path = Path(where)
        if not path.is_file():
            raise BadPlugin(f"no detector file {path}")
        name = "srlib_plugin_" + hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:12]
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return module
    return importlib.import_module(where)


def check_signature(function: Callable, kind: str, spec: str = "") -> None:
    """That ``function`` takes its kind's two arguments positionally (``KINDS``)."""
    if kind not in KINDS:
        raise BadPlugin(f"{spec or function!r}: unknown kind {kind!r}; choose from {list(KINDS)}")
    try:
        inspect.signature(function).bind(*KINDS[kind])
    except TypeError as e:
        wanted = ", ".join(KINDS[kind])
        raise BadPlugin(
            f"{spec or function!r}: a {kind} detector is called as f({wanted}): {e}"
        ) from e


def source_digest(function: Callable) -> str:
    """A digest of ``function``'s source (its bytecode where the source cannot be read)."""
    try:
        text = inspect.getsource(function).encode()
    except (OSError, TypeError):
        text = function.__code__.co_code
    return hashlib.sha256(text).hexdigest()[:16]


def plugin(
    spec: str,
    name: str,
    kind: str,
    family: str = "threshold baseline",
    higher_is_leaked: bool = True,
    with_rule: bool = True,
) -> Plugin:
    """Load ``spec``, check it, and register it as detector ``name`` (a threshold baseline
    unless ``family`` says otherwise) and, with ``with_rule``, the SR rule on it as
    ``SR <name>``; a name a built-in or an earlier plug-in has is an error."""
    function = load_function(spec)
    check_signature(function, kind, spec)
    slug = _slug(name)
    if not slug:
        raise BadPlugin(f"{spec!r}: the name {name!r} holds no letter or digit")
    setting = "black" if kind == "black" else "gray"
    entry = Detector(name, family, f"score_plugin_{slug}", setting, cite=spec)
    rule = None
    if with_rule:
        rule = Detector(
            f"SR {name}", "self-referential", f"plugin_{slug}_scores", setting,
            threshold_free=True, cite=spec,
        )  # fmt: skip
        if rule.name in registry.DETECTORS:  # refuse before registering either
            register(rule)
    register(entry)
    if rule is not None:
        register(rule)
    return Plugin(entry, function, kind, higher_is_leaked, source_digest(function), rule)


def score_all(found: Plugin, inputs: Iterable[tuple]) -> tuple[np.ndarray, Counter]:
    """``found``'s oriented value on each argument tuple (higher = more likely leaked), NaN
    where it could not score — and those counted by reason."""
    values, failed = [], Counter()
    for args in inputs:
        try:
            value = found.function(*args)
        except Exception as e:  # a user's score may fail on some samples: undecided, counted
            failed[f"raised {type(e).__name__}"] += 1
            values.append(math.nan)
            continue
        if isinstance(value, bool | np.bool_):
            value = float(value)
        if not isinstance(value, int | float | np.number) or not math.isfinite(value):
            failed["not a finite number"] += 1
            values.append(math.nan)
            continue
        values.append(float(value) if found.higher_is_leaked else -float(value))
    return np.asarray(values, dtype=float), failed
