"""Where two CPUs part, operation by operation: a digest of each kernel the testbed's training
step runs, at the ``cpu`` profile's shapes, on fixed inputs, one thread, under the numerics in
force (``srlib.models.numerics``; ``SRLIB_NUMERICS=native`` for the machine's own). Run it on
two machines and compare the lines: the first operation whose digest differs is the kernel
that makes their weights differ (``../shared/numerics/probe.py`` digests the whole step).

Usage: ``.venv/bin/python bench/numerics.py`` (seconds). Digests measured here are in
``docs/measured-builds.md``."""

from __future__ import annotations

import hashlib

import srlib  # noqa: F401  (the pin, before torch's first operation)
from srlib.models.numerics import said, state


def _digest(*tensors) -> str:
    h = hashlib.sha256()
    for t in tensors:
        h.update(t.detach().float().contiguous().numpy().tobytes())
    return h.hexdigest()[:16]


def operations() -> dict[str, str]:
    """Operation → digest of its output (and input gradients where it trains)."""
    import torch

    torch.set_num_threads(1)
    g = torch.Generator().manual_seed(0)
    tokens, width, vocab, heads, block = 4096, 96, 2048, 4, 256

    def rand(*shape):
        return torch.randn(*shape, generator=g)

    x, w, v = rand(tokens, width), rand(width, 4 * width), rand(width, vocab)
    out = {
        "sgemm NN (MLP up)": _digest(x @ w),
        "sgemm NT (weight gradient)": _digest(x.t() @ rand(tokens, 4 * width)),
        "sgemm (LM head)": _digest(x @ v),
        "addmm (Conv1D)": _digest(torch.addmm(rand(4 * width), x, w)),
    }
    q, k = rand(16 * heads, block, width // heads), rand(16 * heads, block, width // heads)
    out["bmm (attention scores)"] = _digest(torch.bmm(q, k.transpose(1, 2)))
    logits = rand(tokens, vocab).requires_grad_()
    labels = torch.randint(0, vocab, (tokens,), generator=g)
    loss = torch.nn.functional.cross_entropy(logits, labels)
    loss.backward()
    out["cross entropy (log_softmax) + backward"] = _digest(loss, logits.grad)
    scores = rand(16 * heads, block, block).requires_grad_()
    soft = torch.softmax(scores, -1)
    soft.sum().backward()
    out["softmax + backward"] = _digest(soft, scores.grad)
    h = rand(tokens, width).requires_grad_()
    norm = torch.nn.functional.layer_norm(h, (width,), rand(width), rand(width))
    (norm * rand(tokens, width)).sum().backward()
    out["layer_norm + backward"] = _digest(norm, h.grad)
    a = rand(tokens, 4 * width).requires_grad_()
    gelu = torch.nn.functional.gelu(a, approximate="tanh")
    (gelu * rand(tokens, 4 * width)).sum().backward()
    out["gelu tanh + backward"] = _digest(gelu, a.grad)
    p = torch.nn.Parameter(rand(width, 4 * width))
    opt = torch.optim.AdamW([p], lr=3e-3, weight_decay=0.01)
    for _ in range(3):
        p.grad = rand(width, 4 * width)
        torch.nn.utils.clip_grad_norm_([p], 1.0)
        opt.step()
    out["clip + AdamW (3 steps)"] = _digest(p)
    init = torch.empty(vocab, width)
    torch.manual_seed(0)
    init.normal_(0.0, 0.02)
    out["normal_ (initialisation)"] = _digest(init)
    return out


if __name__ == "__main__":
    import torch

    info = state()
    print(f"{said(info)}; torch {torch.__version__}; cpu features: {info['cpu features']}")
    for name, value in operations().items():
        print(f"{name:40s} {value}")
