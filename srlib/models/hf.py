"""Hugging Face backend: any causal LM loadable with ``AutoModelForCausalLM``, offline only.

Texts are scored in length-sorted, padded batches under ``torch.inference_mode``; texts
longer than the context are scored with a sliding window, each token once, with as much
left context as the window allows. A text's numbers move in their last bits with the texts
that share its batch; ``batch_size=1`` scores each text alone, a function of the model and
the text only (the CPU profiles' choice: about as fast for a small model on one thread).
float32 is the CPU default (bfloat16 matmuls are two orders of magnitude slower on CPUs
without native support).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from srlib.codetext import code_tokens_settled
from srlib.errors import SrlibError
from srlib.models.base import GenerationSettings, TokenScores, quiet_progress, torch_threads
from srlib.models.digest import file_digest
from srlib.models.greedy import applies, greedy
from srlib.store import MANIFEST, code_digests, digest


class ModelNotFound(SrlibError, FileNotFoundError):
    """A model is neither a local folder nor in the Hugging Face cache."""


def model_folder(path: str) -> Path:
    """The folder holding a model's files: ``path`` itself, or its HF cache snapshot."""
    if Path(path).is_dir():
        return Path(path)
    from transformers.utils import cached_file

    return Path(cached_file(path, "config.json", local_files_only=True)).parent


def fingerprint(folder: Path, **settings: object) -> str:
    """Identity of a model for the score cache: the full content of every file in its folder
    (weights, config, tokenizer; each hashed once and remembered by size and mtime) and every
    setting that changes a score. The key starts with the folder's name, for a reader of the
    cache: the same weights under another folder name are scored again (a miss, never a
    wrong score)."""
    files = sorted(f for f in folder.iterdir() if f.is_file() and not f.name.startswith("."))
    files = [f for f in files if f.name != MANIFEST]  # the store's note, not the model
    if not files:
        raise ModelNotFound(f"model folder {folder} holds no files")
    content = {f.name: file_digest(f) for f in files}
    return f"hf:{folder.name}:{digest(settings, content, length=20)}"


def _windows(n: int, size: int, stride: int) -> list[tuple[int, int, int]]:
    """(start, end, first scored position) of windows covering ``n`` tokens, each token
    predicted exactly once; position 0 is never predicted."""
    if n <= size:
        return [(0, n, 1)]
    out, scored = [], 1
    start = 0
    while scored < n:
        end = min(start + size, n)
        out.append((start, end, scored))
        scored = end
        start = end - (size - stride)
    return out


def _settled(tokenizer, enc, k: int):
    """A stopping criterion that ends each row once its first ``k`` generated code tokens are
    final (``code_tokens_settled``), or ``None`` for ``k`` = 0. A stopped row is padded while
    the others go on, so every row's tokens are those of the full generation up to its stop."""
    if not k:
        return None
    import torch
    from transformers import StoppingCriteria, StoppingCriteriaList

    start = enc["input_ids"].shape[1]

    class Settled(StoppingCriteria):
        def __call__(self, input_ids, scores, **kwargs):
            texts = tokenizer.batch_decode(input_ids[:, start:], skip_special_tokens=True)
            done = [code_tokens_settled(t, k) for t in texts]
            return torch.tensor(done, dtype=torch.bool, device=input_ids.device)

    return StoppingCriteriaList([Settled()])


class HFModel:
    """A causal LM from a local path (or an id already in the HF cache); never downloads."""

    lean = True  # greedy continuations by ``greedy``; False: ``generate``, the reference

    def __init__(
        self,
        path: str,
        device: str = "cpu",
        dtype: str = "float32",
        batch_size: int = 8,
        generate_batch: int | None = None,
        max_length: int | None = None,
        stride: int | None = None,
        threads: int | None = None,
    ) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        local = Path(path).expanduser()
        if local.is_dir() and not (local / "config.json").is_file():
            raise ModelNotFound(f"{path}: a folder, but not a model (no config.json)")
        if not local.is_dir() and (local.is_absolute() or str(path).startswith((".", "~"))):
            raise ModelNotFound(f"{path}: no such model folder")
        try:
            with quiet_progress():
                self.tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
                self.model = AutoModelForCausalLM.from_pretrained(
                    path, local_files_only=True, dtype=getattr(torch, dtype)
                )
        except (OSError, ValueError) as e:
            raise ModelNotFound(
                f"model {path!r} is not a local folder nor in the Hugging Face cache ({e}). "
                "Download it where you have network access (e.g. `hf download NAME`) or pass "
                "the folder that holds config.json and the weights."
            ) from e
        self.model.to(device).eval()
        self.device, self.batch_size = device, batch_size
        self.generate_batch = generate_batch or batch_size  # prompts per ``generate`` batch
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token or self.tokenizer.unk_token
        config = self.model.config
        ctx = getattr(config, "max_position_embeddings", None) or getattr(
            config, "n_positions", 1024
        )
        self.max_length = max_length or ctx
        self.stride = stride or self.max_length // 2
        self.name = str(path)
        self.fingerprint = fingerprint(
            model_folder(str(path)),
            dtype=dtype,
            max_length=self.max_length,
            stride=self.stride,
            threads=threads,
            batch_size=batch_size,  # a batch's padding moves the numbers slightly
            generate_batch=self.generate_batch,
            code=digest(code_digests([__name__])),  # fixed code (greedy included) rescores
        )
        self.threads = threads  # CPU threads of scoring (None: as set); scores depend on it
        self._pieces: dict[int, str] = {}

    def _piece(self, token: int) -> str:
        """One token's text, decoded once per model (a tenth of scoring went to decoding the
        same few thousand ids again and again)."""
        piece = self._pieces.get(token)
        if piece is None:
            piece = self._pieces[token] = self.tokenizer.decode([token])
        return piece

    def first_token(self, text: str) -> str:
        """The text of the first (never predicted) token of ``text``."""
        ids = self.encode(text)
        return self.tokenizer.decode(ids[:1]) if ids else ""

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` as the model is scored on it (special tokens included)."""
        return self.tokenizer(text)["input_ids"]

    def token_logprobs(self, texts: list[str]) -> list[TokenScores]:
        """Scores of each text's predicted tokens, batched by length."""
        with torch_threads(self.threads):
            return self._token_logprobs(texts)

    def _token_logprobs(self, texts: list[str]) -> list[TokenScores]:
        import torch

        ids = [self.encode(t) for t in texts]
        jobs = []  # (text index, window start, window ids, first scored offset in the window)
        for i, seq in enumerate(ids):
            for start, end, scored in _windows(len(seq), self.max_length, self.stride):
                jobs.append((i, start, seq[start:end], scored - start))
        parts: dict[int, list[tuple]] = {i: [] for i in range(len(texts))}
        order = sorted(range(len(jobs)), key=lambda j: -len(jobs[j][2]))
        with torch.inference_mode():
            for b in range(0, len(order), self.batch_size):
                batch = [jobs[j] for j in order[b : b + self.batch_size]]
                for (i, start, _, _), arrays in zip(batch, self._score_batch(batch), strict=True):
                    parts[i].append((start, *arrays))
        out = []
        for i, seq in enumerate(ids):
            windows = sorted(parts[i], key=lambda a: a[0])
            lp, mu, var = (
                np.concatenate([w[k] for w in windows]) if windows else np.zeros(0)
                for k in (1, 2, 3)
            )
            tokens = [self._piece(t) for t in seq[1:]]
            out.append(TokenScores(tokens, lp, mu, var))
        return out

    def _score_batch(self, batch):
        """(log p of each token, μ, σ²) for the scored part of each window in the batch."""
        import torch

        width = max(len(w) for _, _, w, _ in batch)
        pad = self.tokenizer.pad_token_id
        input_ids = torch.tensor([w + [pad] * (width - len(w)) for _, _, w, _ in batch])
        mask = torch.tensor([[1] * len(w) + [0] * (width - len(w)) for _, _, w, _ in batch])
        logits = self.model(
            input_ids=input_ids.to(self.device), attention_mask=mask.to(self.device)
        ).logits.float()
        results = []
        for row, (_, _, window, first) in enumerate(batch):
            n = len(window)
            logp = torch.log_softmax(logits[row, : n - 1], dim=-1)
            target = input_ids[row, 1:n].to(logp.device)
            actual = logp.gather(-1, target[:, None])[:, 0]
            p_logp = logp.exp().mul_(logp)  # p·log p once: the products of p * logp * logp
            mu = p_logp.sum(-1)
            var = ((p_logp * logp).sum(-1) - mu * mu).clamp_min(0)
            keep = slice(first - 1, None)
            results.append(tuple(t[keep].cpu().numpy() for t in (actual, mu, var)))
        return results

    def generate(self, prompts: list[str], settings: GenerationSettings) -> list[list[str]]:
        """Continuations of each prompt (greedy unless ``settings.temperature`` > 0). Sampling
        is seeded by ``settings.seed`` in a forked RNG, and the tokenizer's padding is
        restored afterwards, so the caller's random state and tokenizer are left as they were."""
        with torch_threads(self.threads):
            return self._generate_restoring(prompts, settings)

    def _generate_restoring(self, prompts: list[str], settings: GenerationSettings):
        import torch

        tok = self.tokenizer
        sides = tok.padding_side, tok.truncation_side
        tok.padding_side, tok.truncation_side = "left", "left"  # keep the prompt's end
        try:
            with torch.random.fork_rng():
                return self._generate(prompts, settings)
        finally:
            tok.padding_side, tok.truncation_side = sides

    def _generate(self, prompts: list[str], settings: GenerationSettings) -> list[list[str]]:
        import torch

        tok = self.tokenizer
        room = max(1, self.max_length - settings.max_new_tokens)
        out: dict[int, list[str]] = {}
        sample = settings.temperature > 0
        lengths = tok(prompts, truncation=True, max_length=room)["input_ids"] if prompts else []
        order = sorted(  # little padding; the batches are the same in any request order
            range(len(prompts)), key=lambda i: (-len(lengths[i]), prompts[i])
        )
        for b in range(0, len(order), self.generate_batch):
            rows = order[b : b + self.generate_batch]
            chunk = [prompts[i] for i in rows]
            enc = tok(chunk, return_tensors="pt", padding=True, truncation=True, max_length=room)
            enc = enc.to(self.device)
            torch.manual_seed(settings.seed)  # inside fork_rng: the caller's state is restored
            if (
                self.lean
                and not sample
                and settings.num_samples == 1
                and applies(self.model, enc, settings.settled_code_tokens)
            ):
                with torch.inference_mode():
                    new = greedy(
                        self.model, tok, enc, settings.max_new_tokens, settings.settled_code_tokens
                    )
                texts = tok.batch_decode(new, skip_special_tokens=True)
                out.update((i, [t]) for i, t in zip(rows, texts, strict=True))
                continue
            with torch.inference_mode():
                gen = self.model.generate(
                    **enc,
                    max_new_tokens=settings.max_new_tokens,
                    do_sample=sample,
                    temperature=settings.temperature if sample else None,
                    top_p=settings.top_p if sample else None,
                    num_return_sequences=settings.num_samples,
                    pad_token_id=tok.pad_token_id,
                    stopping_criteria=_settled(tok, enc, settings.settled_code_tokens),
                )
            new = gen[:, enc["input_ids"].shape[1] :]
            texts = tok.batch_decode(new, skip_special_tokens=True)
            k = settings.num_samples
            out.update((i, texts[j * k : (j + 1) * k]) for j, i in enumerate(rows))
        return [out[i] for i in range(len(prompts))]
