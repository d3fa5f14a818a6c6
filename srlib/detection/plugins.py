"""Bring your own detector: a researcher's score, named by one string, registered beside the
built-in detectors through the registry's one mechanism (``registry.register``).

A detector is one function of one of three kinds, told apart by its arguments' names:

- ``"gray"``: ``(token_scores, text) -> float`` — the model's token log-probabilities of a
  text (``models.base.TokenScores``) and the text itself;
- ``"black"``: ``(model, sample) -> float`` — a ``LanguageModel`` and a benchmark sample;
- ``"rule"``: ``(model, sample, variants) -> float`` — a threshold-free rule over an original
  and its variants: its margin, leaked where it is above 0 (``True``/``False`` count as
  +1/−1), e.g. "the original's score beats the variants' by more than their spread".

A score (gray or black) registers twice: as a threshold baseline (``name``, read on the
original) and the self-referential rule on it (``SR <name>``: the original scores higher
than every variant), so a new score gets SrDetection's comparison of itself for free. A rule
registers once, as a self-referential detector. ``detect`` scores them on every sample and
variant (``detect(..., plugins=[...])``), the testbed on every checkpoint
(``Testbed.plugins``).

``load`` reads the book's ``detectors`` parameter: each entry ``"package.module:function"``
or ``"path/to/file.py:function"``, or a dict with that ``spec`` and any of ``plugin``'s
keywords; ``plugin`` checks the signature, keys the function by its source code (editing it
changes ``Plugin.source``, so a score cache keyed on it rescores only it) and registers it;
``score_all`` calls it on every input and reports, never drops, the ones it could not score
(it raised, or returned NaN or something that is not a number): those are undecided."""

from __future__ import annotations

import hashlib
import importlib
import inspect
import linecache
import math
import re
import sys
import types
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from srlib.detection import registry
from srlib.detection.registry import Detector, register
from srlib.errors import CacheError, InputError, NotBuilt

KINDS = {
    "gray": ("token_scores", "text"),
    "black": ("model", "sample"),
    "rule": ("model", "sample", "variants"),
}
"""Each kind's arguments, in order (``infer_kind`` reads a function's kind from them)."""


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
        """The ``detect`` column of the oriented scores of the original and each variant (a
        rule's: of its margin)."""
        return self.entry.score if self.kind == "rule" else f"plugin_{slug(self.entry.name)}_scores"

    @property
    def columns(self) -> list[str]:
        """Every ``detect`` column this plug-in fills."""
        return list(dict.fromkeys([self.entry.score, self.scores_column]))

    @property
    def names(self) -> list[str]:
        """The registry names it holds: its score and the SR rule on it, or its rule."""
        return [self.entry.name] + ([self.rule.name] if self.rule else [])


def slug(name: str) -> str:
    """A detector name as a column-safe word."""
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def load_function(spec: str) -> Callable:
    """The function ``spec`` names: ``"package.module:function"`` or ``"file.py:function"``.
    A relative file resolves against the working directory of the process that loads it: in a
    chapter, its kernel's, which is the book's root under ``srlib book`` and the directory
    ``papermill`` was run from otherwise (unless given ``--cwd``)."""
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
    """The module at a ``.py`` path, or importable by dotted name. A file is compiled from the
    text read now, which is also what ``inspect`` is given to read back (no cached bytecode
    or source lines of an earlier version, however quickly the file was edited)."""
    if where.endswith(".py"):
        path = Path(where)
        if not path.is_file():
            raise BadPlugin(f"no detector file {path}")
        file = str(path.resolve())
        name = "srlib_plugin_" + hashlib.sha256(file.encode()).hexdigest()[:12]
        text = path.read_text(encoding="utf-8")
        linecache.cache[file] = (len(text), None, text.splitlines(keepends=True), file)
        module = types.ModuleType(name)
        module.__file__ = file
        sys.modules[name] = module
        exec(compile(text, file, "exec"), module.__dict__)
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
    """A digest of what ``function`` computes with: its source (its bytecode where the source
    cannot be read) and, followed through the names it reads, the source of every function
    and the value of every plain constant of its own module that it uses — so editing a
    helper in the same file rescores the detectors that call it, and no other. Where it
    reads something of its file that cannot be read so (a list, dict or array, a class, a
    decorated, wrapped, closure-built or ``partial`` helper, a default argument that is not a
    plain constant), the whole file's text is the key instead: any edit of the file rescores
    it. What it imports
    from other modules is not followed (keep a detector's logic in its file)."""
    module = sys.modules.get(getattr(function, "__module__", None) or "")
    h, seen, stack = hashlib.sha256(), set(), [function]
    while stack:
        f = stack.pop()
        if id(f) in seen:
            continue
        seen.add(id(f))
        if getattr(f, "__wrapped__", None) is not None or f.__closure__:
            return _file_digest(module, function)  # a wrapper or a closure: not readable so
        try:
            h.update(inspect.getsource(f).encode())
        except (OSError, TypeError):
            h.update(f.__code__.co_code)
        defaults = (*(f.__defaults__ or ()), *(f.__kwdefaults__ or {}).values())
        if not all(_plain(v) for v in defaults):
            return _file_digest(module, function)
        for name in sorted(_names(f.__code__)):
            value = getattr(module, name, None)
            if value is None:
                continue  # not its module's: a builtin, or an attribute's name
            if inspect.isfunction(value) and value.__module__ == function.__module__:
                stack.append(value)
            elif _plain(value):
                h.update(f"{name}={value!r}".encode())
            elif not _elsewhere(value, function.__module__):
                return _file_digest(module, function)
    return h.hexdigest()[:16]


def _plain(value) -> bool:
    """A constant whose ``repr`` is its whole value."""
    if isinstance(value, tuple | frozenset):
        return all(_plain(v) for v in value)
    return value is None or isinstance(value, int | float | str | bytes)


def _elsewhere(value, module: str) -> bool:
    """What a detector may read without it keying the detector: a module, or a function or
    class defined in another module (an import), or a name its module does not hold (a
    builtin)."""
    if value is None or inspect.ismodule(value):
        return True
    owner = getattr(value, "__module__", None)
    return (inspect.isfunction(value) or inspect.isclass(value) or inspect.isbuiltin(value)) and (
        owner != module
    )


def _file_digest(module, function: Callable) -> str:
    """The key of a detector read whole-file: its file's text and its name in it."""
    try:
        text = inspect.getsource(module)
    except (OSError, TypeError):
        text = repr(sorted(vars(module)))
    return hashlib.sha256(f"{function.__qualname__}\n{text}".encode()).hexdigest()[:16]


def _names(code) -> set[str]:
    """The global names a code object and the code nested in it (lambdas, comprehensions) read."""
    names = set(code.co_names)
    for const in code.co_consts:
        if inspect.iscode(const):
            names |= _names(const)
    return names


def infer_kind(function: Callable, spec: str = "") -> str:
    """The kind (``KINDS``) whose argument names ``function``'s first parameters carry."""
    try:
        params = list(inspect.signature(function).parameters)
    except (TypeError, ValueError) as e:
        raise BadPlugin(f"{spec or function!r}: its signature cannot be read ({e})") from e
    for kind, names in sorted(KINDS.items(), key=lambda k: -len(k[1])):
        if tuple(params[: len(names)]) == names:
            return kind
    shapes = "; ".join(f"{k}: f({', '.join(v)})" for k, v in KINDS.items())
    raise BadPlugin(f"{spec or function!r}: f({', '.join(params)}) is none of the kinds ({shapes})")


def plugin(
    spec: str,
    name: str | None = None,
    kind: str | None = None,
    family: str | None = None,
    higher_is_leaked: bool = True,
    with_rule: bool = True,
    setting: str | None = None,
    needs_reference: bool = False,
) -> Plugin:
    """Load ``spec``, check it, and register it as detector ``name`` (default: the function's
    name) of ``kind`` (default: read from its argument names): a score as a threshold
    baseline (unless ``family`` says otherwise) and, with ``with_rule``, the SR rule on it as
    ``SR <name>``; a rule as a self-referential detector of ``setting`` ("gray" unless
    "black"). ``needs_reference``: the function reads a model of its own beside the audited
    one, so the registry files it under "needs a reference model" and never counts it
    deployable. A name (or column) another detector has is an error; the same plug-in again
    is no change."""
    function = load_function(spec)
    kind = kind or infer_kind(function, spec)
    check_signature(function, kind, spec)
    name = name or function.__name__
    word = slug(name)
    if not word:
        raise BadPlugin(f"{spec!r}: the name {name!r} holds no letter or digit")
    if setting not in (None, "gray", "black"):
        raise BadPlugin(f"{spec!r}: setting must be 'gray' or 'black', got {setting!r}")
    setting = "black" if kind == "black" else setting or "gray"
    own = "needs a reference model" if needs_reference else None
    alone = {"cite": spec, "deployable": not needs_reference}
    rule = None
    if kind == "rule":
        entry = Detector(name, family or own or "self-referential", f"plugin_{word}_margin",
                         setting, threshold_free=True, **alone)  # fmt: skip
    else:
        entry = Detector(name, family or own or "threshold baseline", f"score_plugin_{word}",
                         setting, **alone)  # fmt: skip
        if with_rule:
            rule = Detector(f"SR {name}", own or "self-referential", f"plugin_{word}_scores",
                            setting, threshold_free=True, **alone)  # fmt: skip
    for each in [d for d in (rule, entry) if d is not None]:  # refuse before registering either
        if registry.DETECTORS.get(each.name, each) != each:
            register(each)  # a name another detector has: DetectorCollision, naming it
        clash = [d.name for d in registry.DETECTORS.values()
                 if d.score == each.score and d.name != each.name]  # fmt: skip
        if clash:
            raise BadPlugin(f"{spec!r}: {name!r} would share its column with {clash[0]!r}")
    register(entry)
    if rule is not None:
        register(rule)
    return Plugin(entry, function, kind, higher_is_leaked, source_digest(function), rule)


def load(entries: Iterable[str | Mapping]) -> list[Plugin]:
    """The plug-ins a ``detectors`` parameter names: each a spec string, or a dict with
    ``spec`` and any of ``plugin``'s keywords (name, kind, family, higher_is_leaked,
    with_rule, setting, needs_reference); an unknown key is an error naming it. One spec
    or one dict alone (not in a list) is read as a list of one."""
    if isinstance(entries, str | Mapping):
        entries = [entries]
    out = []
    for entry in entries:
        if isinstance(entry, str):
            out.append(plugin(entry))
            continue
        if not isinstance(entry, Mapping) or "spec" not in entry:
            raise BadPlugin(f"{entry!r}: a detector is 'module:function' or a dict with 'spec'")
        options = dict(entry)
        unknown = set(options) - set(inspect.signature(plugin).parameters)
        if unknown:
            raise BadPlugin(f"{entry['spec']!r}: unknown key(s) {sorted(unknown)}")
        out.append(plugin(**options))
    return out


def score_all(found: Plugin, inputs: Iterable[tuple]) -> tuple[np.ndarray, Counter]:
    """``found``'s oriented value on each argument tuple (higher = more likely leaked; a
    rule's margin), NaN where it could not score — and those counted by reason."""
    values, failed = [], Counter()
    for args in inputs:
        try:
            value = found.function(*args)
        except (NotBuilt, CacheError):
            raise  # the project's own failure (a model call not made, a damaged cache)
        except Exception as e:  # a user's score may fail on some samples: undecided, counted
            failed[f"raised {type(e).__name__}"] += 1
            values.append(math.nan)
            continue
        if isinstance(value, bool | np.bool_):  # a rule's yes/no is a margin of ±1
            value = (1.0 if value else -1.0) if found.kind == "rule" else float(value)
        if not isinstance(value, int | float | np.number) or not math.isfinite(value):
            failed[_returned(value)] += 1
            values.append(math.nan)
            continue
        values.append(float(value) if found.higher_is_leaked else -float(value))
    return np.asarray(values, dtype=float), failed


def _returned(value) -> str:
    """How a value that is not a finite number is counted: what it was."""
    if value is None:
        return "returned None"
    if isinstance(value, int | float | np.number):
        return "returned NaN" if math.isnan(value) else "returned an infinity"
    return f"returned a {type(value).__name__}, not a number"


def rules(found: Sequence[Plugin]) -> list[Detector]:
    """The threshold-free registry entries of the plug-ins ``found``: what decides alone."""
    return [d for p in found for d in (p.rule, p.entry) if d is not None and d.threshold_free]


def flag_column(rule: Detector) -> str:
    """The column of a plug-in rule's per-sample flags: ``flag_<slug of its name>``."""
    return f"flag_{slug(rule.name)}"
