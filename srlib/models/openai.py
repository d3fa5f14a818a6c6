"""OpenAI-compatible backend (vLLM, llama.cpp server, TGI, hosted APIs, ``srlib serve``).

Generation uses ``/v1/completions``. Gray-box scores use ``echo`` with ``logprobs`` and
``max_tokens = 0`` (the prompt's own token log-probs; vLLM refuses 0, so there one new token
is asked for and cut off by ``usage.prompt_tokens``), which only some servers support; a
server that does not is a clear ``UnsupportedByServer`` error, not a wrong number. Min-K%++
needs μ and σ² over the whole vocabulary, which the API does not carry: they are NaN unless
the server adds them (``srlib serve`` does, under ``logprobs.srlib``). Requests time out, are
retried with exponential backoff on connection errors, 429 and 5xx, and run with bounded
concurrency; results keep the input order. A refused request (an unknown model, a bad
parameter) is one ``RequestRejected`` naming the model or the parameter. Where the server
reports the context length (``max_model_len``), generation prompts are cut to their last
tokens that fit (vLLM's ``truncate_prompt_tokens``), as the HF backend does.
"""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from srlib.errors import ServerUnavailable, SrlibError
from srlib.models.base import GenerationSettings, TokenScores
from srlib.store import code_digests, digest


class UnsupportedByServer(SrlibError, RuntimeError):
    """The server cannot provide what a detector needs (e.g. echo log-probs)."""


class RequestRejected(SrlibError, ValueError):
    """The server refused a request (HTTP 4xx): an unknown model or a bad parameter, named."""


def _rejection(url: str, model: str, status: int, text: str) -> RequestRejected:
    """One clear error from an OpenAI-style error body: the model or the parameter named."""
    try:
        error = json.loads(text).get("error") or {}
    except (ValueError, AttributeError):
        error = {}
    error = error if isinstance(error, dict) else {"message": str(error)}
    message = error.get("message") or text[:300]
    if status == 404 and (error.get("code") == "model_not_found" or error.get("param") == "model"):
        return RequestRejected(f"{url} does not serve model {model!r}: {message}")
    if error.get("param"):
        return RequestRejected(f"{url} rejected parameter {error['param']!r}: {message}")
    return RequestRejected(f"{url} refused the request (HTTP {status}): {message}")


class OpenAIModel:
    """A model behind an OpenAI-compatible ``/v1/completions`` endpoint. Its ``fingerprint``
    (what a score cache keys it by) is the server's URL, the served name and a digest of this
    client's code: the weights behind a URL are not seen, so a server that swaps them under the
    same name needs another name or cache."""

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 4,
        backoff: float = 0.5,
        concurrency: int = 4,
    ) -> None:
        import httpx

        self.base_url = base_url.rstrip("/")
        self.url = self.base_url + "/completions"
        self.model, self.max_retries, self.backoff = model, max_retries, backoff
        self.concurrency = concurrency
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.client = httpx.Client(timeout=timeout, headers=headers)
        code = digest(code_digests([__name__]), length=12)  # fixed client code rescores
        self.fingerprint = f"openai:{base_url.rstrip('/')}:{model}:{code}"
        self._needs_new_token = False  # the server refuses echo with max_tokens = 0 (vLLM)

    def _post(self, payload: dict) -> dict:
        import httpx

        for attempt in range(self.max_retries + 1):
            try:
                r = self.client.post(self.url, json={"model": self.model, **payload})
            except httpx.TransportError as e:
                error = f"{type(e).__name__}: {e}"
            else:
                if r.status_code == 200:
                    return r.json()
                error = f"HTTP {r.status_code}: {r.text[:300]}"
                if r.status_code not in (408, 429) and r.status_code < 500:
                    raise _rejection(self.url, self.model, r.status_code, r.text)
            if attempt < self.max_retries:
                time.sleep(self.backoff * 2**attempt)
        raise ServerUnavailable(
            f"{self.url}: no answer after {self.max_retries + 1} tries ({error}); is the "
            "server running at that address?"
        )

    def context_length(self) -> int | None:
        """The model's context length as the server's ``/v1/models`` reports it
        (``max_model_len``: vLLM, ``srlib serve``), or None where it does not say."""
        if not hasattr(self, "_context"):
            import httpx

            self._context = None
            try:
                r = self.client.get(self.base_url + "/models")
                entries = r.json().get("data", []) if r.status_code == 200 else []
            except (httpx.HTTPError, ValueError, AttributeError):
                entries = []
            for entry in entries:
                if isinstance(entry, dict) and entry.get("id") == self.model:
                    self._context = entry.get("max_model_len")
        return self._context

    def _map(self, fn, items: list) -> list:
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            return list(pool.map(fn, items))

    def token_logprobs(self, texts: list[str]) -> list[TokenScores]:
        """Echo log-probs of each text (first token dropped: it is not predicted)."""
        return self._map(self._score_one, texts)

    def _score_one(self, text: str) -> TokenScores:
        body, prompt_tokens = self._echo(text)
        lp = (body.get("choices") or [{}])[0].get("logprobs")
        if not lp or not lp.get("token_logprobs"):
            raise UnsupportedByServer(
                f"{self.url} returned no echo log-probs; gray-box scores need a server that "
                "supports echo with logprobs (vLLM, srlib serve)"
            )
        keep = prompt_tokens or len(lp["tokens"])
        tokens, values = lp["tokens"][1:keep], lp["token_logprobs"][1:keep]
        extra = lp.get("srlib") or {}
        nan = [float("nan")] * len(tokens)
        return TokenScores(
            tokens,
            np.asarray(values, dtype=float),
            np.asarray(extra.get("mean", nan), dtype=float)[: len(tokens)],
            np.asarray(extra.get("var", nan), dtype=float)[: len(tokens)],
        )

    def _echo(self, text: str) -> tuple[dict, int | None]:
        """The echo reply for ``text`` and how many of its tokens are the prompt's (None: all).
        ``max_tokens = 0`` asks for the prompt alone; a server that refuses it (vLLM) is asked
        for one new token, which is then cut off by the prompt's token count in ``usage``."""
        payload = {"prompt": text, "echo": True, "logprobs": 1, "temperature": 0}
        if not self._needs_new_token:
            try:
                return self._post({**payload, "max_tokens": 0}), None
            except RequestRejected as e:
                if "max_tokens" not in str(e):
                    raise
                self._needs_new_token = True
        body = self._post({**payload, "max_tokens": 1})
        prompt_tokens = (body.get("usage") or {}).get("prompt_tokens")
        if not isinstance(prompt_tokens, int):
            raise UnsupportedByServer(
                f"{self.url} refuses max_tokens = 0 and reports no usage.prompt_tokens, so "
                "the prompt's echoed log-probs cannot be told from the generated token's"
            )
        return body, prompt_tokens

    def generate(self, prompts: list[str], settings: GenerationSettings) -> list[list[str]]:
        """Continuations per prompt, greedy unless ``settings.temperature`` > 0."""

        payload = {
            "max_tokens": settings.max_new_tokens,
            "temperature": settings.temperature,
            "top_p": settings.top_p,
            "n": settings.num_samples,
            "seed": settings.seed,
        }
        context = self.context_length()
        if context:  # keep each prompt's end, as the HF backend does
            payload["truncate_prompt_tokens"] = max(1, context - settings.max_new_tokens)

        def one(prompt: str) -> list[str]:
            body = self._post({"prompt": prompt, **payload})
            choices = sorted(body["choices"], key=lambda c: c.get("index", 0))
            return [c["text"] for c in choices]

        return self._map(one, prompts)
