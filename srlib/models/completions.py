"""The ``/v1/completions`` request as OpenAI-compatible servers read it: every parameter
``srlib serve`` uses is checked the way OpenAI and vLLM check it, and a bad one is an
``APIError`` that names it (HTTP 400), an unknown model HTTP 404, with OpenAI's error body
``{"error": {"message", "type", "param", "code"}}``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from numbers import Real
from typing import Any

MAX_N = 128  # completions per prompt (vLLM has no hard cap; this bounds a CPU server)
MAX_LOGPROBS = 5  # OpenAI's limit for the legacy completions endpoint
MAX_STOP = 4  # OpenAI's limit on stop sequences


class APIError(Exception):
    """A request the server refuses: HTTP ``status`` and OpenAI's error body."""

    def __init__(
        self,
        message: str,
        param: str | None = None,
        status: int = 400,
        code: str | None = None,
        kind: str = "invalid_request_error",
    ) -> None:
        super().__init__(message)
        self.message, self.param, self.status, self.code, self.kind = (
            message,
            param,
            status,
            code,
            kind,
        )

    def body(self) -> dict:
        """The JSON error body OpenAI's clients parse."""
        return {
            "error": {
                "message": self.message,
                "type": self.kind,
                "param": self.param,
                "code": self.code,
            }
        }


@dataclass(frozen=True)
class Completion:
    """A validated completions request."""

    prompts: list[str]
    max_tokens: int
    temperature: float
    top_p: float
    n: int
    logprobs: int | None
    echo: bool
    stop: list[str]
    seed: int
    truncate_prompt_tokens: int | None


def _int(req: dict, name: str, default: int | None, low: int, high: int | None = None):
    """An integer parameter in [low, high] (booleans are not integers), or ``default``."""
    value = req.get(name)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise APIError(f"{name} must be an integer, got {value!r}", name)
    if value < low or (high is not None and value > high):
        bound = f"at least {low}" if high is None else f"between {low} and {high}"
        raise APIError(f"{name} must be {bound}, got {value}", name)
    return value


def _number(req: dict, name: str, default: float, low: float, high: float, open_low=False):
    """A number in [low, high] (or (low, high] with ``open_low``), or ``default``."""
    value = req.get(name)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, Real):
        raise APIError(f"{name} must be a number, got {value!r}", name)
    if (value <= low if open_low else value < low) or value > high:
        left = "(" if open_low else "["
        raise APIError(f"{name} must be in {left}{low:g}, {high:g}], got {value}", name)
    return float(value)


def _prompts(req: dict) -> list[str]:
    """``prompt``: a string or a non-empty list of strings (token arrays are not served)."""
    prompt = req.get("prompt")
    if isinstance(prompt, str):
        return [prompt]
    if isinstance(prompt, list) and prompt and all(isinstance(p, str) for p in prompt):
        return prompt
    raise APIError("prompt must be a string or a non-empty list of strings", "prompt")


def _stop(req: dict) -> list[str]:
    """``stop``: null, a string or up to ``MAX_STOP`` non-empty strings."""
    stop = req.get("stop")
    if stop is None:
        return []
    stop = [stop] if isinstance(stop, str) else stop
    if (
        not isinstance(stop, list)
        or len(stop) > MAX_STOP
        or not all(isinstance(s, str) and s for s in stop)
    ):
        raise APIError(f"stop must be a non-empty string or a list of up to {MAX_STOP}", "stop")
    return stop


def parse(req: Any, served: str, context: int, count_tokens: Callable[[str], int]) -> Completion:
    """Validate a completions request for the model ``served`` with ``context`` tokens;
    ``count_tokens`` measures prompts. Generation must fit the context: a prompt longer than
    ``context − max_tokens`` tokens is refused unless ``truncate_prompt_tokens`` (vLLM's
    parameter) asks to keep only its last tokens. Echo scoring without generation has no
    length limit (long texts are scored with a sliding window)."""
    if not isinstance(req, dict):
        raise APIError("the request body must be a JSON object")
    model = req.get("model")
    if not isinstance(model, str):
        raise APIError("model must be the name of the served model", "model")
    if model != served:
        raise APIError(
            f"The model `{model}` does not exist; this server serves `{served}`",
            "model",
            status=404,
            code="model_not_found",
        )
    if req.get("stream"):
        raise APIError("streaming is not supported by srlib serve", "stream")
    echo = req.get("echo", False)
    if not isinstance(echo, bool):
        raise APIError(f"echo must be true or false, got {echo!r}", "echo")
    prompts = _prompts(req)
    max_tokens = _int(req, "max_tokens", 16, 0, context - 1)
    truncate = _int(req, "truncate_prompt_tokens", None, 1, context)
    if max_tokens > 0:
        room = context - max_tokens
        for prompt in prompts:
            size = count_tokens(prompt)
            if size > room and (truncate is None or truncate > room):
                raise APIError(
                    f"This model's maximum context length is {context} tokens, however you "
                    f"requested {size + max_tokens} tokens ({size} in the prompt, {max_tokens} "
                    "for the completion); shorten the prompt or set truncate_prompt_tokens",
                    "prompt",
                    code="context_length_exceeded",
                )
    return Completion(
        prompts=prompts,
        max_tokens=max_tokens,
        temperature=_number(req, "temperature", 1.0, 0.0, 2.0),
        top_p=_number(req, "top_p", 1.0, 0.0, 1.0, open_low=True),
        n=_int(req, "n", 1, 1, MAX_N),
        logprobs=_int(req, "logprobs", None, 0, MAX_LOGPROBS),
        echo=echo,
        stop=_stop(req),
        seed=_int(req, "seed", 0, -(2**63), 2**63 - 1),
        truncate_prompt_tokens=truncate,
    )


def cut_at_stop(text: str, stop: list[str]) -> tuple[str, bool]:
    """``text`` up to its earliest stop sequence (excluded), and whether one was found."""
    ends = [i for i in (text.find(s) for s in stop) if i >= 0]
    return (text[: min(ends)], True) if ends else (text, False)
