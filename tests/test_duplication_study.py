"""The duplication-impact study: leak-free unique folds, folds shared by every model, masked
inputs that never hold a secret, resumable runs, and the command line."""

import numpy as np
import pandas as pd
import pytest

from srlib.cli import main
from srlib.duplication.data.contexts import Context
from srlib.duplication.data.corpus import CorpusConfig, make_corpus
from srlib.duplication.dedup.partition import partition
from srlib.duplication.impact.features import entropy, shape
from srlib.duplication.impact.scenarios import (
    char_duplicated_in_train,
    duplicated_in_train,
    fold_indices,
    leakage_table,
    make_folds,
    unique_test_pool,
)
from srlib.duplication.impact.study import PROFILES, prepare, read_results, run_study, summary
from srlib.store import FolderInUse


@pytest.fixture(scope="module")
def prepared():
    """A small offline corpus, partitioned exhaustively, with its folds."""
    records = make_corpus(CorpusConfig(size=400, scanned_files=40, seed=3))
    config = PROFILES["quick"]
    return records, prepare(records, config, method="exhaustive")


def test_corpus_spans_languages_and_records_them():
    records = make_corpus(CorpusConfig(size=300, scanned_files=30, other_share=0.6, seed=1))
    languages = {r.language for r in records}
    assert "python" in languages and len(languages - {"python"}) >= 2


def test_unique_folds_never_hold_a_duplicate_of_a_test_context(prepared):
    records, p = prepared
    for fold in range(PROFILES["quick"].k):
        idx = fold_indices(p.folds, "unique", fold)
        exact, near = duplicated_in_train(
            p.contexts, idx["test"], np.concatenate([idx["train"], idx["val"]]), p.languages,
            "exhaustive",
        )  # fmt: skip
        assert not exact.any() and not near.any()
        assert set(p.parts.part[idx["test"]]) == {"unique"}
    leaks = leakage_table(p.folds, p.contexts, p.languages, "exhaustive")
    assert leaks.loc["mixed", "exact duplicate in train"] > 0.3  # the raw split leaks
    rule = ["exact duplicate in train", "near duplicate in train"]
    assert leaks.loc["unique", rule].sum() == 0  # leak-free under the rule that built it
    chars = leaks["character 8-grams ≥ 0.9 in train"]
    assert chars["mixed"] >= leaks.loc["mixed", "exact duplicate in train"] > chars["unique"]
    for scenario, row in leaks.iterrows():  # one search over all contexts = one per fold
        e = n = c = 0
        for fold in range(PROFILES["quick"].k):
            idx = fold_indices(p.folds, scenario, fold)
            test, train = idx["test"], idx["train"]
            ex, near = duplicated_in_train(p.contexts, test, train, p.languages, "exhaustive")
            e, n = e + ex.sum(), n + (near & ~ex).sum()
            c += char_duplicated_in_train(p.contexts, test, train, method="exhaustive").sum()
        tested = row["test samples"]
        assert [e / tested, n / tested, c / tested] == row.iloc[1:].tolist(), scenario


def test_the_character_ngram_check_sees_small_edits_the_token_rule_is_not_asked_about():
    from srlib.duplication.impact.scenarios import char_duplicated_in_train

    rng = np.random.default_rng(0)
    blob = "".join(rng.choice(list("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"), 400))  # one token
    texts = [f"key = '{blob}'", f"key = '{blob[:-3]}xyz'", "something else entirely " * 10]
    texts.append("def handler(request):\n    return client.get(url)\n" * 4)
    contexts = [Context(t, "") for t in texts]
    test, train = np.array([1, 2]), np.array([0, 3])
    for method in ("lsh", "exhaustive"):
        leaked = char_duplicated_in_train(contexts, test, train, method=method)
        assert leaked.tolist() == [True, False]


def test_a_context_near_an_exact_groups_member_is_near_not_unique():
    """C_unique is near no other context: a context near a member of an exact group is
    C_near (by either method, and on Dask), so the unique scenario never tests on it."""
    from srlib.duplication.dedup.distributed import partition_dask
    from srlib.duplication.dedup.partition import example_pair

    body = (
        "def handler(request):\n    token = settings.API_TOKEN\n    return client.get(url, token)"
    )
    contexts = [Context(body, "\n# a"), Context(body, "\n# a"), Context(body + " ", "\n# a")]
    contexts += [Context(f"unrelated_{k} = compute_{k}(x_{k}, y_{k})", "") for k in range(3)]
    parts = partition(contexts, method="exhaustive")
    assert list(parts.part) == ["exact", "exact", "near", "unique", "unique", "unique"]
    assert parts.near_cluster[2] >= 0 and parts.dedup.tolist() == [1, 0, 1, 1, 1, 1]
    assert partition(contexts).equals(parts) and partition_dask(contexts).equals(parts)
    assert unique_test_pool(parts).tolist() == [3, 4, 5]
    assert "context 2" not in example_pair(contexts, parts)  # a cluster of one: no pair


def test_folds_are_seeded_and_stratified(prepared):
    records, p = prepared
    k = PROFILES["quick"].k
    groups = {"file": p.files, "repository": p.repos}
    again = make_folds(
        p.data.labels, p.parts, p.contexts, p.languages, k, 0.1, 0, "exhaustive",
        groups=groups, scenarios=PROFILES["quick"].scenarios,
    )  # fmt: skip
    pd.testing.assert_frame_equal(p.folds, again)
    for scenario in PROFILES["quick"].scenarios:
        tests = [set(fold_indices(p.folds, scenario, f)["test"]) for f in range(k)]
        assert not (tests[0] & tests[1])
        idx = fold_indices(p.folds, scenario, 0)
        assert not set(idx["val"]) & set(idx["train"])


def test_grouped_folds_never_share_a_group_between_fit_validation_and_test(prepared):
    records, p = prepared
    repos = [f"repo{i % 7}" for i in range(len(records))]  # seven repositories
    files = [f"{r}/file{i % 23}" for i, r in enumerate(repos)]  # 23 files across them
    scenarios = ["mixed", "near-duplicate", "unique", "file", "repository"]
    groups = {"file": files, "repository": repos}
    folds = make_folds(
        p.data.labels, p.parts, p.contexts, p.languages, 3, groups=groups, scenarios=scenarios
    )
    assert list(folds.scenario.unique()) == scenarios
    for scenario, unit in (("file", files), ("repository", repos)):
        seen = set()
        for fold in range(3):
            idx = fold_indices(folds, scenario, fold)
            fit, val, test = ({unit[i] for i in idx[r]} for r in ("train", "val", "test"))
            assert test and val and fit  # every role holds whole groups, none shared
            assert not test & (fit | val) and not val & fit
            seen |= test
        assert seen == set(unit)  # every group tests once
    with pytest.raises(ValueError, match="2 groups cannot make 3 folds"):
        make_folds(
            p.data.labels, p.parts, p.contexts, p.languages, 3,
            groups={"repository": ["a", "b"] * (len(records) // 2)}, scenarios=["repository"],
        )  # fmt: skip
    with pytest.raises(ValueError, match="file: 1 of .* samples name no file"):
        make_folds(
            p.data.labels, p.parts, p.contexts, p.languages, 3,
            groups={"file": ["", *files[1:]]}, scenarios=["file"],
        )  # fmt: skip


def test_validation_is_split_like_the_test(prepared):
    from srlib.duplication.impact.scenarios import grouped_validation

    records, p = prepared
    for fold in range(PROFILES["quick"].k):
        idx = fold_indices(p.folds, "unique", fold)  # validation from the unique pool...
        assert set(p.parts.part[idx["val"]]) == {"unique"}
        exact, near = duplicated_in_train(
            p.contexts, idx["val"], idx["train"], p.languages, "exhaustive"
        )
        assert not exact.any() and not near.any()  # ...so no duplicate of it fits
    y = np.arange(200) % 3 == 0
    groups = np.array([f"g{i // 10}" for i in range(200)], dtype=object)  # 20 groups of 10
    rows = np.arange(200)
    fit, val = grouped_validation(rows, y, groups, 0.1, seed=4)
    assert not set(groups[fit]) & set(groups[val]) and len(set(groups[val])) == 2
    assert sorted(np.r_[fit, val]) == list(rows)
    with pytest.raises(ValueError, match="none left to validate on"):
        grouped_validation(rows[:10], y, groups, 0.1)


def test_masked_inputs_never_hold_a_secret_value(prepared):
    records, p = prepared
    for r, text in zip(records, p.data.texts, strict=True):
        c = r.context(200)
        assert text == c.before + shape(r.secret) + c.after  # the value's place is masked
        if r.label:  # generated secrets are random: nowhere else in the context
            assert r.secret not in text
    assert shape("AKIA0000") == " <SECRET len=8 A0 H1> " and entropy("aaaa") == 0.0
    assert p.data.numeric.shape == (len(records), 8)


def test_holm_adjusts_a_family_step_down():
    from srlib.stats.significance import holm

    # p sorted 0.01, 0.02, 0.04 of m = 3: 0.03, max(0.04, 0.03), max(0.04, 0.04)
    np.testing.assert_allclose(holm([0.04, 0.01, 0.02]), [0.04, 0.03, 0.04])
    np.testing.assert_allclose(holm([0.5, 0.6]), [1.0, 1.0])


def test_the_shape_rule_flags_key_prefixes_and_random_looking_values_only():
    from srlib.duplication.impact.features import numeric, shape_rule

    values = {
        "AKIA0000": True,  # a provider's prefix, however short
        "ghp_" + "x" * 36: True,
        "q8Z!r2Lm9Tx4Vb7Nw": True,  # 17 characters, four classes, high entropy
        "changeme": False,  # a word
        "aaaaaaaaaaaaaaaaaaaa": False,  # long, one class, no entropy
        "1234567890123456": False,  # one class
    }
    flags = shape_rule(np.array([numeric(v) for v in values]))
    assert flags.tolist() == list(values.values())


def test_study_resumes_to_the_same_tables_and_keeps_its_folds(prepared, tmp_path):
    records, p = prepared
    config = PROFILES["quick"].replace(models=("flag everything", "LSTM"))
    first = run_study(p.data, p.folds, config, tmp_path / "a", progress=False)
    assert set(first.model) == set(config.models) and first.value.between(-1, 1).all()
    files = sorted((tmp_path / "a" / "results").glob("*.json"))
    for f in files[::2]:
        f.unlink()  # an interrupted run: half of the folds missing
    again = run_study(p.data, p.folds, config, tmp_path / "a", progress=False)
    pd.testing.assert_frame_equal(first, again)
    with pytest.raises(FolderInUse, match=r"a holds results of another run .*differs in folds"):
        run_study(p.data, p.folds[p.folds.fold < 1], config, tmp_path / "a", progress=False)
    with pytest.raises(FolderInUse, match=r"differs in settings"):
        run_study(p.data, p.folds, config.replace(seed=1), tmp_path / "a", progress=False)
    saved = pd.read_parquet(tmp_path / "a" / "folds.parquet")
    pd.testing.assert_frame_equal(saved, p.folds.reset_index(drop=True))  # one set for all
    table = summary(first)
    assert list(table.columns) == ["precision", "recall", "f1", "mcc"]
    flagged = first[(first.model == "flag everything") & (first.metric == "recall")]
    assert (flagged.value == 1).all()
    assert read_results(tmp_path / "a").equals(first)


def test_the_forest_kept_from_the_search_is_the_one_a_refit_grows_dense_or_sparse(prepared):
    from srlib.duplication.impact.classifiers import RandomForestDE

    _, p = prepared
    idx = fold_indices(p.folds, "mixed", 0)
    train, val, test = idx["train"][:200], idx["val"][:60], idx["test"][:80]
    options = dict(maxiter=1, popsize=1, max_trees=30, n_jobs=1)
    dense = RandomForestDE(**options).fit(p.data, train, val)
    assert isinstance(dense._features(p.data, test), np.ndarray)
    as_sparse = RandomForestDE(dense_cells=0, **options).fit(p.data, train, val)
    assert not isinstance(as_sparse._features(p.data, test), np.ndarray)
    refit = RandomForestDE(params=dense.params, dense_cells=0, n_jobs=1).fit(p.data, train, val)
    assert as_sparse.params == dense.params
    for other in (as_sparse, refit):
        np.testing.assert_array_equal(
            other.forest.predict_proba(other._features(p.data, test)),
            dense.forest.predict_proba(dense._features(p.data, test)),
        )


def test_forest_and_encoders_fit_and_predict(prepared, tmp_path):
    from srlib.duplication.impact.classifiers import RF_BOUNDS, RandomForestDE
    from srlib.duplication.impact.encoders import EmbeddingCache, FineTunedEncoder, FrozenEncoderMLP

    records, p = prepared
    idx = fold_indices(p.folds, "mixed", 0)
    train, val, test = idx["train"][:120], idx["val"][:30], idx["test"][:30]
    forest = RandomForestDE(maxiter=0, popsize=1).fit(p.data, train, val)
    for name, (low, high) in RF_BOUNDS.items():
        assert low <= forest.params[name] <= high
    assert forest.predict(p.data, test).dtype == bool
    cache = EmbeddingCache(tmp_path, max_length=32)
    frozen = FrozenEncoderMLP(cache, epochs=2).fit(p.data, train, val)
    assert frozen.predict(p.data, test).shape == (30,)
    stored = sorted(cache.folder.glob("*.npy"))
    assert len(stored) == len({p.data.texts[i] for i in range(len(p.data))})
    again = cache.embed(p.data.texts[:5])  # from the files, nothing recomputed
    assert sorted(cache.folder.glob("*.npy")) == stored
    np.testing.assert_array_equal(again, frozen._x(p.data, np.arange(5)).numpy())
    tuned = FineTunedEncoder(max_train=16, epochs=1, max_length=32, max_val=8)
    assert tuned.fit(p.data, train, val).predict(p.data, test).shape == (30,)


def test_cli_evaluates_without_printing_secrets(tmp_path, capsys):
    args = ["dedup", "evaluate", "offline", "--size", "300", "--scanned-files", "8"]
    args += ["--profile", "quick"]
    args += ["--models", "flag everything", "--folds", "2", "--out", str(tmp_path)]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "in sum:" in out and (tmp_path / "summary.csv").is_file()
    assert (tmp_path / "steps.csv").is_file() and (tmp_path / "mcc.csv").is_file()
    records = make_corpus(CorpusConfig(size=300, scanned_files=8))
    # a "secret" that is a word of the command (the offline corpus scans installed files, and
    # one may hold a candidate such as "everything") is printed as the model's name, not leaked
    said = " ".join(args)
    assert not any(r.secret in out for r in records if len(r.secret) >= 8 and r.secret not in said)
    assert main(["dedup", "evaluate", "offline", "--out", str(tmp_path), "--profile", "x"]) == 1
    capsys.readouterr()
    again = args[:-4] + ["--folds", "3", "--out", str(tmp_path)]  # other settings, same folder
    assert main(again) == 1
    err = capsys.readouterr().err  # progress bars, then the one line
    last = err.strip().splitlines()[-1].split("\r")[-1]
    assert "Traceback" not in err and last.startswith("srlib dedup evaluate: ")
    assert str(tmp_path) in last and "settings" in last
    other = ["dedup", "evaluate", "offline", "--size", "200", "--scanned-files", "6"]
    assert main(other + args[7:]) == 1  # other data, same folder: one line, no traceback
    err = capsys.readouterr().err
    assert "Traceback" not in err and "texts" in err.strip().splitlines()[-1]


def test_scanner_findings_are_taken_in_a_fixed_order(monkeypatch):
    import detect_secrets.core.scan as scan

    from srlib.duplication.data import corpus

    class Found:
        def __init__(self, value, kind):
            self.secret_value, self.type = value, kind

    line = 'a = "0123456789abcdef" ; b = "fedcba9876543210"\n'
    findings = [Found("0123456789abcdef", "Hex"), Found("fedcba9876543210", "Hex")]
    runs = []
    for order in (findings, findings[::-1]):  # the scanner returns a set: any order
        monkeypatch.setattr(scan, "scan_line", lambda text, order=order: iter(order))
        corpus._line_findings.cache_clear()  # scanned afresh, in the new order
        runs.append([(r.start, r.end) for r in corpus._scan([("x.py", line)])])
    corpus._line_findings.cache_clear()  # no stand-in findings left for later tests
    assert runs[0] == runs[1] and len(runs[0]) == 2


def test_the_lstm_reads_the_candidate_at_its_own_position():
    from srlib.duplication.impact.classifiers import LSTMDetector
    from srlib.duplication.impact.features import Dataset

    rng = np.random.default_rng(0)
    filler = [f"w{k}" for k in range(30)]
    texts, labels = [], []
    for i in range(240):
        secret = i % 2 == 0
        before = " ".join(rng.choice(filler, 40)) + (" token = " if secret else " sample = ")
        after = " " + " ".join(rng.choice(filler, 150))  # the context's end says nothing
        texts.append(before + "<SECRET len=20>" + after)
        labels.append(secret)
    data = Dataset(texts, np.zeros((240, 1)), np.array(labels))
    lstm = LSTMDetector(units=8, embedding=8, epochs=12, max_tokens=64, batch_size=16, lr=1e-2)
    lstm.fit(data, np.arange(160), np.arange(160, 200))
    ids, at = lstm._encode(data, np.arange(3))
    assert ids.shape == (3, 64) and (at == 32).all()  # cropped around the candidate
    shape_id = lstm.vocab["<SECRET len=20>"]
    assert (ids[np.arange(3), at] == shape_id).all()
    test = np.arange(200, 240)
    assert (lstm.predict(data, test) == data.labels[test]).mean() >= 0.9


def test_the_context_only_reference_reads_the_context_and_never_the_shape():
    from srlib.duplication.impact.features import Dataset
    from srlib.duplication.impact.references import ContextOnly

    y = np.arange(200) % 2 == 0
    by_shape = [f'key = "<SECRET len={40 if t else 8} classes=3>"' for t in y]  # shape only
    blind = ContextOnly(max_tfidf=200).fit(Dataset(by_shape, np.zeros((200, 1)), y), *_halves())
    assert len(set(blind.predict(Dataset(by_shape, np.zeros((200, 1)), y), np.arange(200)))) == 1
    by_context = [("api_token = " if t else "sample_text = ") + "<SECRET len=9>" for t in y]
    data = Dataset(by_context, np.zeros((200, 1)), y)
    seeing = ContextOnly(max_tfidf=200).fit(data, *_halves())
    assert (seeing.predict(data, np.arange(100, 200)) == y[100:]).all()


def _halves():
    return np.arange(100), np.arange(0)


def test_every_scenario_trains_the_same_steps_and_the_budget_is_stated():
    import torch

    from srlib.duplication.impact.budget import budget_table, equal_steps
    from srlib.duplication.impact.classifiers import LSTMDetector, fit_balanced

    net = torch.nn.Linear(1, 1)
    calls = {"steps": 0, "scores": 0}
    optimiser = torch.optim.SGD(net.parameters(), lr=0.1)
    real = optimiser.step
    optimiser.step = lambda: (calls.__setitem__("steps", calls["steps"] + 1), real())[1]

    def score():
        calls["scores"] += 1
        return float(calls["scores"])

    x, y = torch.ones(10, 1), np.arange(10) % 2 == 0
    fit_balanced([net], optimiser, lambda b: net(x[b]).squeeze(-1), y, 2, 4, 0, score, steps=7)
    assert calls == {"steps": 7, "scores": 3}  # passes of 3, 3 and 1 steps, each scored
    with pytest.raises(ValueError, match="no training rows"):
        fit_balanced([net], optimiser, lambda b: net(x[b]), y[:0], 2, 4, 0, score)
    lstm = LSTMDetector(epochs=3, batch_size=64)
    assert equal_steps(lstm, 1000) == 3 * 16
    tuned = PROFILES["quick"]
    from srlib.duplication.impact.study import make_detector

    finetuned = make_detector("Encoder (fine-tuned)", tuned, None)
    assert equal_steps(finetuned, 1000) == tuned.finetune_epochs * 1  # 16 samples, batch 16
    table = budget_table(
        {"LSTM": lstm, "shape rule": make_detector("shape rule", tuned, None)}, 1000
    )
    assert table.loc["LSTM", "training"].startswith("48 steps of 64")
    assert table.loc["shape rule", "training"] == "none (no training)"


def test_the_cli_says_the_repository_verdict_when_only_mixed_and_repository_ran(tmp_path, capsys):
    args = ["dedup", "evaluate", "offline", "--size", "300", "--scanned-files", "8"]
    args += ["--profile", "quick", "--models", "Random Forest", "flag everything"]
    args += ["--scenarios", "mixed", "repository", "--folds", "2", "--out", str(tmp_path)]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "Duplication study: a random split" in out and "Random Forest" in out
    assert "Against unseen repositories" in out and "nothing is said of memorisation" in out
    lines = out.splitlines()
    headers = [i for i, line in enumerate(lines) if line.endswith(":") and not line[:1].isspace()]
    assert all(i + 1 < len(lines) and lines[i + 1].startswith("  ") for i in headers)  # no empty


def test_the_learning_curves_whole_set_is_the_repository_scenarios_own_fold(prepared, tmp_path):
    from srlib.duplication.impact.curve import learning_curve, run_curve, tuned_params
    from srlib.duplication.impact.drops import fold_predictions
    from srlib.duplication.impact.study import make_detector

    _, p = prepared
    models = ("shape rule", "context only", "Random Forest")
    config = PROFILES["quick"].replace(models=models, scenarios=("repository",))
    run_study(p.data, p.folds, config, tmp_path / "run", progress=False)
    table = learning_curve(p, config, tmp_path / "run", [2, 4], n_boot=50)
    assert list(dict.fromkeys(table.index.get_level_values("model"))) == list(models)
    rule = table.loc["shape rule"]
    assert (rule.mcc == rule.mcc.iloc[0]).all() and (rule.step.dropna() == 0).all()  # fixed
    assert len(tuned_params(tmp_path / "run")) == config.k  # the forest's, per fold
    again = run_curve(
        p.data, p.folds, p.repos, [None], ["Random Forest"],
        lambda name: make_detector(name, config, tmp_path), tmp_path / "refit",
        tuned=tuned_params(tmp_path / "run"), progress=False,
    )  # fmt: skip
    ran = fold_predictions(tmp_path / "run")
    ran = ran[(ran.model == "Random Forest") & (ran.scenario == "repository")]
    pd.testing.assert_series_equal(
        again.sort_values("sample").predicted.reset_index(drop=True),
        ran.sort_values("sample").predicted.reset_index(drop=True),
    )  # refitted on the same rows with the parameters its search found: the same predictions
