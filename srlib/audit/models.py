"""The models an audit names: a local checkpoint folder, a locked model's name
(``testbed.locked``: ``smollm2-135m``), an id already in the Hugging Face cache, or
``URL#model-name`` of an OpenAI-compatible server (vLLM, llama.cpp, ``srlib serve``). Each is
opened once, checked (a server must answer and serve that name), and told which settings it
can run: gray-box needs prompt log-probs, which only some servers return."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from srlib.errors import ServerUnavailable, SrlibError
from srlib.models.base import LanguageModel


class AuditInputError(SrlibError, ValueError):
    """An audit argument is unusable (a limit, a setting, an output folder); names it."""


@dataclass
class AuditModel:
    """One opened model: its label in tables, the spec it came from, its kind (``hf`` or
    ``server``), the model, and whether it can give gray-box scores."""

    label: str
    spec: str
    kind: str
    model: LanguageModel
    gray: bool


def is_server(spec: str) -> bool:
    """``URL#model-name`` of an OpenAI-compatible server."""
    return spec.startswith(("http://", "https://")) and "#" in spec


def label_of(spec: str) -> str:
    """A short name for tables: the served model name, or the folder's / id's last part."""
    if is_server(spec):
        return spec.rsplit("#", 1)[1]
    return Path(spec.rstrip("/")).name or spec


def open_model(
    spec: str,
    label: str | None = None,
    device: str = "cpu",
    dtype: str = "float32",
    batch_size: int = 8,
    need_gray: bool = False,
    threads: int | None = None,
    generate_batch: int | None = None,
) -> AuditModel:
    """Open ``spec`` (see the module docstring). A missing folder, an id not in the cache, a
    server that does not answer or does not serve the name is a one-line error; so is a
    server without prompt log-probs when ``need_gray``. ``threads``: a local model's CPU
    threads of scoring (part of its score-cache identity; None: as the process has them);
    ``generate_batch``: its prompts per generation batch (None: ``batch_size``)."""
    label = label or label_of(spec)
    if is_server(spec):
        from srlib.models.openai import OpenAIModel, UnsupportedByServer

        url, name = spec.rsplit("#", 1)
        if not name:
            raise AuditInputError(f"{spec!r}: name the served model after '#'")
        model = OpenAIModel(url, name, max_retries=1, backoff=0.2)
        _check_server(model, spec)
        gray = True
        try:
            model.token_logprobs(["def f():\n    return 1\n"])
        except UnsupportedByServer as e:
            if need_gray:
                raise UnsupportedByServer(f"{spec}: gray-box needs prompt log-probs; {e}") from e
            gray = False
        model.max_retries, model.backoff = 4, 0.5
        return AuditModel(label, spec, "server", model, gray)
    from srlib.models.hf import HFModel
    from srlib.testbed.locked import resolve

    model = HFModel(
        resolve(spec),  # audit() passes it resolved; a caller may not
        device=device,
        dtype=dtype,
        batch_size=batch_size,
        generate_batch=generate_batch,
        threads=threads,
    )
    return AuditModel(label, spec, "hf", model, True)


def _check_server(model, spec: str) -> None:
    """The server answers ``/v1/models`` and, where it lists models, lists this one."""
    import httpx

    try:
        r = model.client.get(model.base_url + "/models")
    except httpx.HTTPError as e:
        raise ServerUnavailable(
            f"{spec}: the server at {model.base_url} does not answer ({type(e).__name__}); "
            "is it running at that address?"
        ) from e
    try:
        served = [m.get("id") for m in r.json().get("data", [])] if r.status_code == 200 else []
    except (ValueError, AttributeError):
        served = []
    if served and model.model not in served:
        raise AuditInputError(
            f"{spec}: the server at {model.base_url} does not serve {model.model!r}; "
            f"it serves {served}"
        )
