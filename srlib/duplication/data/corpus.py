"""An offline corpus in SecretBench's shape, because SecretBench itself is gated.

What it is made of, all on this machine:

- **real candidates**: what a real scanner (Yelp's detect-secrets, default plugins) reports in
  real files — the Python standard library and installed packages, and (``other_share``)
  this machine's JavaScript, C/C++ headers, Perl, shell and YAML/JSON/TOML/INI files, each
  record tagged with its file's language; in such code these are false positives — hashes,
  test vectors, example keys — and are labelled so;
- **true secrets**: values generated in real formats (AWS, GitHub, Slack, Stripe, Google
  keys, private keys, passwords, database URLs, JWTs) — random, never real — inserted as one
  new line (``NAME = "value"`` in the file's own style) at a line boundary of a real file;
- **placeholder false positives** inserted the same way: ``YOUR_API_KEY``, ``changeme``, a
  UUID, a SHA-256, an environment lookup, AWS's documented example key.

Duplication then arises as on GitHub: a record is vendored or forked (copied verbatim into
another "repository": an exact duplicate of its context), or copy-pasted with a small edit
(one identifier or literal of its context changed: a near duplicate). Defaults aim at the
proportions SecretBench shows (69.3% exact, 8.7% near, 22.0% unique, 15.5% true secrets);
the partition measures what they become (near duplicates also arise among scanner
candidates of one file, hence a nominal near share below the target). It stands in for the
*structure* of SecretBench — duplication, context windows, label balance, several languages —
not for its secrets or repositories.
"""

from __future__ import annotations

import functools
import random
import re
import string
from dataclasses import dataclass

from srlib.duplication.data.secretdata import SecretRecord
from srlib.localfiles import language, python_files, read_texts, source_files


@dataclass
class CorpusConfig:
    """Sizes and proportions of the generated corpus."""

    size: int = 20_000  # records in all
    exact_share: float = 0.693  # records in exact-duplicate groups
    near_share: float = 0.055  # records made as near copies; scanner candidates from one
    #                           file add more, so the measured share lands near 8.7%
    true_share: float = 0.155  # true secrets among the distinct records
    scanned_files: int = 1500  # real files scanned for real candidates
    other_share: float = 0.4  # files drawn from other languages than Python (JavaScript,
    #                           C/C++ headers, Perl, shell, YAML/JSON/TOML/INI ...), evenly
    #                           over the languages present (``localfiles.source_files``)
    seed: int = 0


def _rand(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


UP, LOW, DIG = string.ascii_uppercase, string.ascii_lowercase, string.digits
ALNUM = UP + LOW + DIG
GENERATORS = {
    "AWS access key": lambda r: "AKIA" + _rand(r, UP + DIG, 16),
    "AWS secret key": lambda r: _rand(r, ALNUM + "/+", 40),
    "GitHub token": lambda r: "ghp_" + _rand(r, ALNUM, 36),
    "Slack token": lambda r: f"xoxb-{_rand(r, DIG, 12)}-{_rand(r, DIG, 12)}-{_rand(r, ALNUM, 24)}",
    "Stripe key": lambda r: "sk_live_" + _rand(r, ALNUM, 24),
    "Google API key": lambda r: "AIza" + _rand(r, ALNUM + "_-", 35),
    "Password": lambda r: _rand(r, ALNUM + "!@#$%^&*", r.randint(12, 20)),
    "Database URL": lambda r: (
        f"postgres://{_rand(r, LOW, 6)}:{_rand(r, ALNUM, 16)}@db{r.randint(1, 9)}.internal:5432/app"
    ),
    "JWT": lambda r: ".".join(_rand(r, ALNUM + "_-", k) for k in (36, 60, 43)),
    "Private key": lambda r: "-----BEGIN RSA PRIVATE KEY-----\\n" + _rand(r, ALNUM + "+/", 64),
}
PLACEHOLDERS = {
    "Placeholder": lambda r: r.choice(
        [
            "YOUR_API_KEY_HERE",
            "changeme",
            "xxxxxxxxxxxxxxxx",
            "<token>",
            "REPLACE_ME",
            "dummy-secret",
        ]
    ),
    "UUID": lambda r: "-".join(_rand(r, "0123456789abcdef", k) for k in (8, 4, 4, 4, 12)),
    "Hash": lambda r: _rand(r, "0123456789abcdef", 64),
    "Example key": lambda r: "AKIAIOSFODNN7EXAMPLE",
}
NAMES = [
    "API_KEY",
    "SECRET_KEY",
    "ACCESS_TOKEN",
    "AUTH_TOKEN",
    "DB_PASSWORD",
    "PASSWORD",
    "CLIENT_SECRET",
    "PRIVATE_KEY",
    "DATABASE_URL",
    "SLACK_TOKEN",
    "aws_secret",
    "token",
]


STYLES = {
    ".json": '{}"{}": "{}",\n',
    ".yml": "{}{}: {}\n",
    ".yaml": "{}{}: {}\n",
    ".toml": '{}{} = "{}"\n',
    ".ini": "{}{} = {}\n",
    ".cfg": "{}{} = {}\n",
    ".sh": "{}export {}={}\n",
    ".js": '{}const {} = "{}";\n',
    ".mjs": '{}const {} = "{}";\n',
    ".php": '{}${} = "{}";\n',
    ".pl": '{}my ${} = "{}";\n',
    ".pm": '{}my ${} = "{}";\n',
    ".c": '{}#define {} "{}"\n',
    ".h": '{}#define {} "{}"\n',
    ".cpp": '{}const char* {} = "{}";\n',
    ".hpp": '{}const char* {} = "{}";\n',
    ".cc": '{}const char* {} = "{}";\n',
    ".java": '{}String {} = "{}";\n',
    ".cs": '{}string {} = "{}";\n',
    ".go": '{}{} := "{}"\n',
    ".rb": '{}{} = "{}"\n',
}
"""How an assignment of a string looks in each file type (default: Python's)."""


def _insert(text: str, name: str, value: str, suffix: str, rng: random.Random):
    """Put ``NAME = "value"`` on a new line of ``text`` in the file's style; returns the new
    text and the value's span."""
    lines = text.splitlines(keepends=True)
    at = rng.randrange(len(lines) + 1)
    indent = re.match(r"[ \t]*", lines[at - 1]).group() if 0 < at <= len(lines) else ""
    style = STYLES.get(suffix, '{}{} = "{}"\n')
    line = style.format(indent, name, value)
    before = "".join(lines[:at])
    if before and not before.endswith(("\n", "\r")):
        line = "\n" + line  # the file's last line had no newline
    start = len(before) + line.index(value)
    return before + line + "".join(lines[at:]), start, start + len(value)


def _sample_files(rng: random.Random, k: int, other_share: float) -> list[tuple[str, str]]:
    """``k`` random readable files of this machine (200 B to 200 kB): Python sources, and a
    share ``other_share`` of other languages, each language equally likely."""
    python = python_files()
    rng.shuffle(python)
    others = source_files()
    for files in others.values():
        rng.shuffle(files)
    n_other = round(k * other_share) if others else 0
    picks = [rng.choice(sorted(others)) for _ in range(n_other)]
    wanted = {lang: picks.count(lang) for lang in others}
    out = _readable(python, k - n_other)
    for lang, files in others.items():
        out += _readable(files, wanted[lang])
    rng.shuffle(out)
    return out


def _readable(paths: list, k: int) -> list[tuple[str, str]]:
    """The first ``k`` of ``paths`` that read as UTF-8 text of 200 B to 200 kB."""
    out = []
    if k <= 0:
        return out
    for path, text in read_texts(paths):
        if 200 < len(text) < 200_000:
            out.append((str(path), text))
            if len(out) == k:
                break
    return out


@functools.lru_cache(maxsize=1 << 18)
def _line_findings(line: str) -> tuple[tuple[str, str], ...]:
    """detect-secrets' findings on one line as sorted (value, type) pairs (the scanner
    returns a set), memoised: every corpus config re-scans the same files. Called only
    inside ``default_settings()``, the one configuration ``_scan`` uses."""
    from detect_secrets.core import scan

    return tuple(sorted((f.secret_value or "", f.type) for f in scan.scan_line(line)))


def _scan(files: list[tuple[str, str]]) -> list[SecretRecord]:
    """Real candidates from detect-secrets over real files (labelled false positives)."""
    from detect_secrets.settings import default_settings

    out = []
    with default_settings():
        for name, text in files:
            pos = 0
            for line in text.splitlines(keepends=True):
                for value, kind in _line_findings(line.rstrip("\n")):
                    col = line.find(value) if value else -1
                    if col >= 0 and len(value) >= 8:
                        out.append(
                            SecretRecord(
                                f"scan:{len(out)}",
                                text,
                                pos + col,
                                pos + col + len(value),
                                False,
                                language(name),
                                kind,
                                repo=name,
                            )
                        )
                pos += len(line)
    return out


def _near_copy(rec: SecretRecord, rng: random.Random, window: int = 200) -> SecretRecord | None:
    """A copy-paste with one small edit in the secret's context (the secret kept)."""
    lo, hi = max(0, rec.start - window), min(len(rec.text), rec.end + window)
    spans = [
        m
        for m in re.finditer(r"[A-Za-z_]\w{2,}|\d+", rec.text[lo:hi])
        if not (lo + m.start() < rec.end and lo + m.end() > rec.start)
    ]
    if not spans:
        return None
    m = rng.choice(spans)
    a, b = lo + m.start(), lo + m.end()
    new = m.group() + "_2" if not m.group().isdigit() else str(int(m.group()) + rng.randint(1, 9))
    shift = len(new) - (b - a)
    start, end = (rec.start + shift, rec.end + shift) if a < rec.start else (rec.start, rec.end)
    return SecretRecord(
        "",
        rec.text[:a] + new + rec.text[b:],
        start,
        end,
        rec.label,
        rec.language,
        rec.category,
        rec.repo,
    )


def make_corpus(config: CorpusConfig | None = None) -> list[SecretRecord]:
    """Generate the corpus (deterministic for a given config)."""
    cfg = config or CorpusConfig()
    rng = random.Random(cfg.seed)
    hosts = min(2000, cfg.size)  # files the inserted candidates are put into
    files = _sample_files(rng, cfg.scanned_files + hosts, cfg.other_share)
    scanned = _scan(files[: cfg.scanned_files])
    n_exact = round(cfg.size * cfg.exact_share)
    n_groups = max(1, round(n_exact / 9.9))  # SecretBench: 67,523 in 6,837 groups
    n_near = round(cfg.size * cfg.near_share)
    n_distinct = cfg.size - n_exact - n_near + n_groups
    n_true = round(n_distinct * cfg.true_share)
    rng.shuffle(scanned)
    base: list[SecretRecord] = []
    for k in range(n_distinct):
        if k < n_true or not scanned or rng.random() < 0.3:
            pool = GENERATORS if k < n_true else PLACEHOLDERS
            kind = rng.choice(sorted(pool))
            name, text = rng.choice(files)
            suffix = "." + name.rsplit(".", 1)[-1]
            text, start, end = _insert(text, rng.choice(NAMES), pool[kind](rng), suffix, rng)
            base.append(SecretRecord("", text, start, end, k < n_true, language(name), kind, name))
        else:
            base.append(scanned.pop())
    rng.shuffle(base)
    sizes = [2] * n_groups  # the record and at least one copy
    for _ in range(max(0, n_exact - 2 * n_groups)):
        sizes[rng.randrange(n_groups)] += 1
    records = list(base)
    for rec, size in zip(base, sizes, strict=False):
        records += [rec] * (size - 1)
    sources = base[n_groups:]
    for _ in range(20 * cfg.size):
        if len(records) >= cfg.size or not sources:
            break
        copy = _near_copy(rng.choice(sources), rng)
        if copy is not None:
            records.append(copy)
    records = records[: cfg.size]
    rng.shuffle(records)
    return [
        SecretRecord(
            f"rec{i}", r.text, r.start, r.end, r.label, r.language, r.category, r.repo, r.repo
        )  # a generated record's "repository" is the one file it sits in
        for i, r in enumerate(records)
    ]
