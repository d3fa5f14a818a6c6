"""The offline training tools: a local corpus, a tokenizer, a model that learns."""

import pytest

from srlib.localfiles import LANGUAGES, entries, python_sources, source_files
from srlib.models.tiny import TinyConfig, tiny_gpt2, train_lm, train_tokenizer


def test_python_sources_are_real_code_within_budget():
    texts = python_sources(200_000, seed=1)
    assert sum(map(len, texts)) == 200_000
    assert all("def " in t or "class " in t or "import " in t for t in texts)
    small = python_sources(20_000, seed=1)
    assert sum(map(len, small)) == 20_000 and texts[0].startswith(small[0])


def test_the_walk_lists_what_rglob_lists_and_prunes_whole_trees(tmp_path):
    """The fast walk against ``sorted(rglob("*"))`` (the slow reference) on the awkward cases."""
    for path in ("a/b.py", "a/.hidden/c.py", "a/test/d.py", "a/test/deep/e.py", "a-c.py", "f.py/g"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("x = 1\n")
    (tmp_path / "linked").symlink_to(tmp_path / "a")  # a symlinked folder: listed, not entered
    (tmp_path / "link.py").symlink_to(tmp_path / "a" / "b.py")
    (tmp_path / "broken.py").symlink_to(tmp_path / "nowhere")
    assert entries(tmp_path) == sorted(tmp_path.rglob("*"))
    kept = [p for p in sorted(tmp_path.rglob("*")) if "test" not in p.relative_to(tmp_path).parts]
    assert entries(tmp_path, ["test"]) == kept
    assert tmp_path / "a" / "test" not in kept and tmp_path / "linked" in kept


def test_source_files_pick_what_path_suffix_and_is_file_pick(tmp_path):
    """The string-level filter of ``source_files`` against ``Path.suffix`` and ``is_file``
    (the slow reference) on names where they could part: trailing dots, hidden files named
    like a suffix, upper case, folders named like files, and links good and broken."""
    names = ("a.js", "x.", ".json", "B.JSON", "d.yaml/c.h", "e.tar.cfg", "f.py", "g.sh.txt")
    for name in names:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x")
    (tmp_path / "link.toml").symlink_to(tmp_path / "a.js")
    (tmp_path / "broken.ini").symlink_to(tmp_path / "nowhere")
    expected: dict[str, list] = {}
    for f in sorted(tmp_path.rglob("*")):
        lang = LANGUAGES.get(f.suffix.lower())
        if lang and lang != "python" and f.is_file():
            expected.setdefault(lang, []).append(f)
    assert source_files(roots=(str(tmp_path),), scopes=()) == dict(sorted(expected.items()))
    assert set(expected) == {"javascript", "json", "c", "ini", "toml"}


def test_training_lowers_the_loss_and_is_deterministic():
    texts = python_sources(60_000)
    tok = train_tokenizer(texts, vocab_size=300)
    config = TinyConfig(n_layer=1, n_head=2, n_embd=32, n_positions=64)
    runs = [
        train_lm(tiny_gpt2(tok, config), tok, texts, steps=30, batch_size=4, block_size=32)
        for _ in range(2)
    ]
    assert runs[0] == runs[1]
    assert sum(runs[0][-5:]) / 5 < sum(runs[0][:5]) / 5 - 0.5


def test_models_made_here_train_without_dropout_unless_asked():
    """Dropout off (the testbed's models): two forward passes in training mode agree."""
    import torch

    tok = train_tokenizer(python_sources(20_000), vocab_size=300)
    x = torch.tensor([tok.encode("def f(x):\n    return x + 1\n")])
    losses = {}
    for p in (0.0, 0.5):
        net = tiny_gpt2(tok, TinyConfig(n_layer=1, n_head=2, n_embd=32, n_positions=64, dropout=p))
        assert net.config.attn_pdrop == net.config.resid_pdrop == net.config.embd_pdrop == p
        net.train()
        losses[p] = [net(input_ids=x, labels=x).loss.item() for _ in range(2)]
    assert losses[0.0][0] == losses[0.0][1]
    assert losses[0.5][0] != losses[0.5][1]


def test_training_text_must_be_long_enough():
    tok = train_tokenizer(["a b c"] * 10, vocab_size=260)
    with pytest.raises(ValueError, match="need more than"):
        train_lm(tiny_gpt2(tok, TinyConfig(n_positions=64)), tok, ["a"], steps=1, block_size=32)


def test_bf16_training_lowers_the_loss_is_deterministic_and_other_weights_than_fp32():
    texts = python_sources(60_000)
    tok = train_tokenizer(texts, vocab_size=300)
    config = TinyConfig(n_layer=1, n_head=2, n_embd=32, n_positions=64)

    def run(dtype):
        net = tiny_gpt2(tok, config)
        losses = train_lm(net, tok, texts, steps=30, batch_size=4, block_size=32, dtype=dtype)
        return losses, next(net.parameters())

    (bf16, w16), (again, _), (fp32, w32) = run("bfloat16"), run("bfloat16"), run("float32")
    assert bf16 == again
    assert sum(bf16[-5:]) / 5 < sum(bf16[:5]) / 5 - 0.5
    assert bf16 != fp32 and str(w16.dtype) == str(w32.dtype) == "torch.float32"  # master weights


def test_training_dtype_is_checked_before_training():
    tok = train_tokenizer(["a b c"] * 10, vocab_size=260)
    with pytest.raises(ValueError, match="unknown training dtype 'bf16'"):
        train_lm(tiny_gpt2(tok, TinyConfig(n_positions=64)), tok, ["a"], steps=1, dtype="bf16")
    with pytest.raises(ValueError, match="float16 training needs a GPU"):
        train_lm(tiny_gpt2(tok, TinyConfig(n_positions=64)), tok, ["a"], steps=1, dtype="float16")


def test_bf16_units_read_from_the_cpu_flags():
    from srlib.models.cpu import bf16_units
    from srlib.models.numerics import cpu_flags

    info = "processor\t: 0\nflags\t\t: fpu sse2 avx512f avx512_bf16 amx_tile amx_bf16\n"
    assert cpu_flags(info) == {"fpu", "sse2", "avx512f", "avx512_bf16", "amx_tile", "amx_bf16"}
    assert bf16_units(cpu_flags(info)) == "AMX, AVX-512 BF16"
    assert bf16_units({"fpu", "avx2"}).startswith("none")
    assert cpu_flags("no flags here") == set()


def test_freed_memory_is_kept_where_glibc_allocates():
    import platform

    from srlib.models.cpu import keep_freed_memory

    assert keep_freed_memory() is (platform.libc_ver()[0] == "glibc")


def test_training_shows_steps_tokens_per_second_and_time_left(capsys):
    texts = python_sources(20_000)
    tok = train_tokenizer(texts, vocab_size=300)
    net = tiny_gpt2(tok, TinyConfig(n_layer=1, n_head=2, n_embd=32, n_positions=64))
    train_lm(net, tok, texts, steps=3, batch_size=2, block_size=32, progress="training x")
    err = capsys.readouterr().err
    assert "training x" in err and "3/3" in err and "tokens/s" in err and "<00:00" in err
