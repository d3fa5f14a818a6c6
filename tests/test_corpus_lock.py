"""The pinned training corpus: archives checked by hash, documents read from them and never
from the environment, streams that do not cascade, and the lock's digest enforced."""

import dataclasses
import hashlib
import io
import sys
import sysconfig
import tarfile

import pytest

from srlib.benchmarks import load_benchmark
from srlib.testbed import sources as sources_module
from srlib.testbed.build import chosen_sources, corpus_of
from srlib.testbed.config import profile
from srlib.testbed.corpus import CorpusChanged, build_corpus, rank, verify
from srlib.testbed.sources import Source, SourceUnavailable, archive, read_lock


def make_sdist(folder, name, version, files):
    """A ``.tar.gz`` sdist of ``files`` (member → text) and its locked ``Source``."""
    path = folder / f"{name}-{version}.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        for member, text in sorted(files.items()):
            data = text.encode()
            info = tarfile.TarInfo(f"{name}-{version}/{member}")
            info.size, info.mtime = len(data), 0
            tar.addfile(info, io.BytesIO(data))
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    return Source(name, version, path.name, sha, "MIT", ("src/*.py",), ("docs/*.rst",))


def code(i, tag=""):
    return f"def function_{tag}{i}(a, b):\n    return a * {i} + b  # {tag}\n" * 12


def prose(i, tag=""):
    return f"Chapter {i} {tag}. " + "This paragraph explains a feature in plain words. " * 12


def package(n, tag=""):
    files = {f"src/pkg/m{i}.py": code(i, tag) for i in range(n)}
    files |= {f"docs/p{i}.rst": prose(i, tag) for i in range(n)}
    return files | {"setup.cfg": "[metadata]\n", "tests/data.txt": "not a document"}


@pytest.fixture
def two_sources(tmp_path):
    return [
        make_sdist(tmp_path, "alpha", "1.0", package(6, "a")),
        make_sdist(tmp_path, "beta", "2.0", package(6, "b")),
    ], tmp_path


def test_documents_come_from_the_members_the_patterns_name(two_sources):
    (alpha, _), folder = two_sources
    docs = list(sources_module.documents(alpha, archive(alpha, [folder], fetch=False)))
    assert [kind for kind, _, _ in docs] == ["text"] * 6 + ["code"] * 6  # sorted member order
    assert docs[0][1] == "alpha-1.0/docs/p0.rst" and docs[6][1] == "alpha-1.0/src/pkg/m0.py"


def test_an_archive_is_hash_checked_and_a_missing_one_says_how_to_get_it(two_sources, tmp_path):
    (alpha, _), folder = two_sources
    wrong = dataclasses.replace(alpha, sha256="0" * 64)
    with pytest.raises(ValueError, match="is not the locked 0000"):
        archive(wrong, [folder], fetch=False)
    missing = dataclasses.replace(alpha, file="gamma-1.0.tar.gz")
    with pytest.raises(SourceUnavailable, match="SRLIB_SOURCES"):
        archive(missing, [tmp_path / "empty"], fetch=False)


def test_changing_one_source_changes_only_its_documents(two_sources, tmp_path):
    sources, folder = two_sources
    samples = load_benchmark("humaneval")[:5]
    before = build_corpus(samples, sources, [folder])
    changed = {**package(6, "b"), "src/pkg/m2.py": code(2, "changed"), "src/pkg/m9.py": code(9)}
    newer = make_sdist(tmp_path, "beta", "2.1", changed)
    after = build_corpus(samples, [sources[0], newer], [folder])

    def by_source(corpus, label):
        return [row for row in corpus.listing() if row[1].startswith(label + "/")]

    assert by_source(after, "alpha-1.0") == by_source(before, "alpha-1.0")
    assert by_source(after, "beta-2.1") != [
        (k, n.replace("beta-2.0", "beta-2.1"), d) for k, n, d in by_source(before, "beta-2.0")
    ]
    assert before.digest() != after.digest()
    # in every use's stream the unchanged source's documents keep their order: what a draw
    # takes of them is a prefix of one order, before and after the change
    alpha = [n for k, n, _ in by_source(before, "alpha-1.0") if k == "code"]
    for use in ("base", "cpt"):
        order = sorted(alpha, key=lambda n, u=use: rank(u, 0, "code", n))
        for corpus in (before, after):
            drawn = corpus.mixture(1500, 1.0, use=use).documents
            taken = [n for n in order if n in drawn]
            assert taken == order[: len(taken)]


def test_the_corpus_does_not_read_the_environment(tmp_path, monkeypatch):
    """The quick profile's corpus, built with an extra package installed and srlib's README
    changed, has the digest the lock recorded in another environment (and a difference
    would stop the build): the text comes from the locked archives only."""
    site = tmp_path / "site-packages"
    extra = site / "extra_package"
    extra.mkdir(parents=True)
    (extra / "__init__.py").write_text("def extra():\n    return 'installed later'\n" * 20)
    meta = site / "srlib-0.1.0.dist-info"
    meta.mkdir()
    (meta / "METADATA").write_text("Name: srlib\n\n# A changed README\n" + "new words " * 200)
    paths = sysconfig.get_paths() | {"purelib": str(site), "platlib": str(site)}
    monkeypatch.setattr(sysconfig, "get_paths", lambda *a, **k: paths)
    monkeypatch.setattr(sys, "path", [str(site), *sys.path])
    corpus, _ = corpus_of("quick", tmp_path / "cache", progress=False)
    assert corpus.check["status"] == "matches"
    assert corpus.digest() == read_lock()["corpora"][corpus.check["corpus"]]["digest"]
    assert not any("extra_package" in n or "dist-info" in n for _, n, _ in corpus.listing())


def test_a_corpus_that_differs_from_the_lock_stops_naming_the_first_difference(
    two_sources, tmp_path
):
    sources, folder = two_sources
    samples = load_benchmark("humaneval")[:3]
    corpus = build_corpus(samples, sources, [folder])
    lock = tmp_path / "lock" / "lock.json"
    lock.parent.mkdir()
    lock.write_text(
        '{"sources": [{"name": "x", "version": "1", "file": "x.tar.gz", '
        '"sha256": "0", "license": "MIT", "code": [], "text": []}]}'
    )
    assert verify(corpus, "k", lock=lock)["status"] == "not recorded"
    sources_module.record("k", {"digest": corpus.digest()}, corpus.listing(), lock)
    assert verify(corpus, "k", lock=lock)["status"] == "matches"
    corpus.code[2] = (corpus.code[2][0], corpus.code[2][1] + "\n# edited\n")
    with pytest.raises(CorpusChanged, match=r"code document 2 alpha-1.0/src/pkg/m2.py has other"):
        verify(corpus, "k", allow=False, lock=lock)
    allowed = verify(corpus, "k", allow=True, lock=lock)
    assert allowed["status"] == "differs (allowed)" and "m2.py" in allowed["first difference"]


def test_the_lock_lists_licensed_sources_with_enough_text_for_the_book():
    lock = read_lock()
    assert all(s.license.startswith("BSD") and len(s.sha256) == 64 for s in lock["sources"])
    profiles = {entry["profile"] for entry in lock["corpora"].values()}
    assert {"cpu", "quick"} <= profiles


def test_a_profile_reads_the_sources_it_names_and_an_unknown_one_is_refused():
    quick = chosen_sources(profile("quick"))
    assert [s.name for s in quick] == ["flask", "werkzeug", "jinja2"]
    assert len(chosen_sources(profile("cpu"))) == len(read_lock()["sources"])
    with pytest.raises(ValueError, match="no source \\['nope'\\] in the corpus lock"):
        chosen_sources(profile("quick", sources=("nope",)))
