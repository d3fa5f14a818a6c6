"""Shared test helpers and the expensive fixtures, each built once per session."""

import os
from pathlib import Path

import pytest

from srlib.samples import Sample


def pytest_configure(config):
    """Keep srlib's file-digest memo out of the user's home during tests, and give this
    process one thread per pool (before torch is imported): the suite's models are tiny, a
    second thread gains them nothing, and OpenMP's spin-waiting took the core the quick book
    builds on (pytest 288 s against 340 s, measured side by side; a value the user set is kept)."""
    os.environ.setdefault("SRLIB_HOME", str(config.rootpath / ".pytest_cache" / "srlib-home"))
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(name, "1")


def pytest_sessionstart(session):
    """Start the quick book's process before collection when the run may need it (the
    arguments cover ``test_book.py``): its imports then overlap the collection's."""
    config = session.config
    book = Path(__file__).with_name("test_book.py")
    args = config.args or [str(config.rootpath / "tests")]
    paths = [(config.invocation_params.dir / a.split("::")[0]).resolve() for a in args]
    if any(p == book or p in book.parents for p in paths):
        import quickbook

        config.stash[EARLY_BOOK] = quickbook.start(config._tmp_path_factory.mktemp("quick-book"))


def pytest_collection_modifyitems(config, items):
    """Tests that read the quick book run last, and before them those that read a
    whole-benchmark check: both are computed in a process of their own (started with the
    session, see ``quickbook.py``) while the other tests run."""
    names = lambda item: getattr(item, "fixturenames", ())  # noqa: E731
    book = [item for item in items if "quick_book" in names(item)]
    jobs = [item for item in items if "background_job" in names(item) and item not in book]
    items[:] = [item for item in items if item not in book and item not in jobs] + jobs + book
    config.stash[NEEDS_BOOK] = bool(book)
    early = config.stash.get(EARLY_BOOK, None)
    if early is not None and not book:
        early.stop()


def pytest_sessionfinish(session):
    """An early-started quick book never outlives the session (``--collect-only`` runs no
    fixture that would stop it)."""
    early = session.config.stash.get(EARLY_BOOK, None)
    if early is not None:
        early.stop()


NEEDS_BOOK = pytest.StashKey[bool]()
EARLY_BOOK = pytest.StashKey[object]()


@pytest.fixture(scope="session", autouse=True)
def background_book(request, tmp_path_factory):
    """The quick book's process, started before collection (``pytest_sessionstart``) or at the
    session's first test when a collected test needs it (stopped at the end if still
    running)."""
    if not request.config.stash.get(NEEDS_BOOK, False):
        yield None
        return
    import quickbook

    job = request.config.stash.get(EARLY_BOOK, None)
    job = job or quickbook.start(tmp_path_factory.mktemp("quick-book"))
    yield job
    job.stop()


@pytest.fixture(scope="session")
def quick_book(background_book):
    """Every chapter executed quick (``--jobs 1``) and the book built: (root, executed
    notebooks, index page, and the testbed and detection chapters re-executed with
    ``--jobs 2`` beside another chapter, on a testbed they trained themselves)."""
    from pathlib import Path

    result = background_book.result()
    outputs = [Path(p) for p in result["outputs"]]
    return background_book.root, outputs, Path(result["index"]), [Path(p) for p in result["alone"]]


@pytest.fixture(scope="session")
def background_job(background_book):
    """``get(name)``: the result of the whole-benchmark check ``wholebench.<name>``, from the
    quick book's process when it runs and the check is one of its ``JOBS``, else computed
    here."""
    import wholebench

    def get(name: str):
        if background_book is None or name not in wholebench.JOBS:
            return getattr(wholebench, name)()
        return background_book.job(name)

    return get


def program_sample(solution: str, tests: str, entry_point: str = "f", **fields) -> Sample:
    """A small standalone sample (MBPP-shaped) for tests: a solution and assert lines."""
    base = {"id": "toy/1", "benchmark": "toy", "prompt": "", "format": "standalone"}
    return Sample(solution=solution, tests=tests, entry_point=entry_point, **{**base, **fields})


def small_model(folder, texts, tokenizer_texts, vocab, n_embd, n_positions, **settings):
    """A two-layer GPT-2 trained on ``texts`` with the library's one training recipe."""
    from srlib.models.tiny import TinyConfig
    from srlib.testbed.train import TrainSettings, train_model

    size = TinyConfig(vocab, n_layer=2, n_head=2, n_embd=n_embd, n_positions=n_positions)
    return train_model(texts, folder, TrainSettings(model=size, **settings), tokenizer_texts).path


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory):
    """A small GPT-2 and BPE tokenizer trained here on HumanEval text (a few seconds)."""
    from srlib.benchmarks import load_benchmark

    texts = [s.text for s in load_benchmark("humaneval")]
    settings = {"steps": 20, "batch_size": 4, "block_size": 48}
    return small_model(tmp_path_factory.mktemp("tiny"), texts[:40], texts, 400, 32, 96, **settings)


@pytest.fixture(scope="session")
def memorised(tmp_path_factory):
    """A tiny model trained on HumanEval/2 and /3 until it knows them by heart."""
    from srlib.benchmarks import load_benchmark
    from srlib.models.hf import HFModel

    samples = load_benchmark("humaneval")
    leaked = [samples[2].text, samples[3].text] * 20
    settings = {"steps": 150, "block_size": 192, "lr": 5e-3}
    folder = tmp_path_factory.mktemp("memorised")
    texts = [s.text for s in samples]
    return HFModel(str(small_model(folder, leaked, texts, 500, 64, 256, **settings)))


@pytest.fixture(scope="session")
def dask_client():
    """One two-worker local Dask cluster for every test that needs one."""
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None)
    with cluster, Client(cluster) as client:
        yield client


@pytest.fixture(scope="session")
def contexts():
    """1,500 code windows with planted exact and near copies."""
    from synthetic import code_windows

    return code_windows(1500, exact=0.3, near=0.3, max_copies=3, chars=400_000)


@pytest.fixture(scope="session")
def exhaustive_partition(contexts):
    """The all-pairs partition of ``contexts``: the slow reference, computed once."""
    from srlib.duplication.dedup.partition import partition

    return partition(contexts, method="exhaustive")


@pytest.fixture(scope="session")
def quick_testbed_cache(tmp_path_factory, background_book):
    """The ``quick`` testbed built once: (testbed, cache folder), shared by the testbed
    tests; built by the quick book's process when it runs (then only opened here)."""
    from srlib.testbed.build import build
    from srlib.testbed.config import profile

    if background_book is not None:
        cache = background_book.testbed()
    else:
        cache = tmp_path_factory.mktemp("testbed-cache")
    return build(profile("quick"), cache, progress=False), cache


@pytest.fixture(scope="session")
def second_seed_cache(quick_testbed_cache, tmp_path_factory):
    """A copy of the quick testbed's cache with a second replicate seed (1) trained (its base
    model, main run and null control) and nothing of it scored: the tests of replicates and
    of the scoring stage start from copies of it, so seed 1 is trained once per session."""
    from quickbook import copy_cache

    from srlib.testbed.build import build, replicate

    tb, cache = quick_testbed_cache
    folder = tmp_path_factory.mktemp("second-seed") / "cache"
    copy_cache(cache, folder)
    replicate(build(tb.config.replace(replicates=(0, 1)), folder, False, core_only=True), 1)
    return folder


@pytest.fixture
def own_registry():
    """What a test registers in the detector registry is gone after it (the same dict:
    modules hold it by name)."""
    from srlib.detection import registry

    saved = dict(registry.DETECTORS)
    yield
    registry.DETECTORS.clear()
    registry.DETECTORS.update(saved)
