"""``srlib serve``: a small OpenAI-compatible completions server over the HF backend, so any
local model can be audited as a black box and the OpenAI backend tested on loopback.

Implements ``GET /v1/models`` and ``POST /v1/completions`` with ``prompt`` (string or list),
``max_tokens``, ``temperature``, ``top_p``, ``n``, ``seed``, ``stop``, ``echo``,
``logprobs`` and vLLM's ``truncate_prompt_tokens``; each is validated
(``srlib.models.completions``): a bad value is HTTP 400 naming it, an unknown model 404.
Replies carry ``usage`` (tokens counted by the model's tokenizer). With ``echo`` and
``logprobs`` a reply holds the prompt's token log-probs (first token ``null``, as OpenAI
does) plus μ and σ² per token under ``logprobs.srlib`` (for Min-K%++); ``top_logprobs``
lists only the actual token. Requests are handled in threads, model calls one at a time (a
lock); one log line per request goes to stderr; SIGTERM stops the server cleanly.
"""

from __future__ import annotations

import json
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from srlib.models.base import GenerationSettings
from srlib.models.completions import APIError, Completion, cut_at_stop, parse


def served_name(model_path: str) -> str:
    """The default served model name: a local folder's name, or the HF id as given."""
    path = Path(model_path).expanduser()
    return path.resolve().name if path.is_dir() else model_path


def _echo_logprobs(model, text: str) -> dict:
    """OpenAI's ``logprobs`` object for an echoed text, plus srlib's μ and σ²."""
    scores = model.token_logprobs([text])[0]
    tokens = [model.first_token(text)] + scores.tokens
    offsets, pos = [], 0
    for tok in tokens:
        offsets.append(pos)
        pos += len(tok)
    lps = [None] + scores.logprobs.tolist()
    return {
        "tokens": tokens,
        "token_logprobs": lps,
        "top_logprobs": [None] + [{t: v} for t, v in zip(scores.tokens, lps[1:], strict=True)],
        "text_offset": offsets,
        "srlib": {"mean": scores.mean.tolist(), "var": scores.var.tolist()},
    }


def _truncate(model, prompt: str, keep: int | None, room: int) -> str:
    """The prompt's last ``keep`` tokens (vLLM's ``truncate_prompt_tokens``). Keeping
    ``room`` or more is left to the backend, which keeps the last ``room`` by itself."""
    if keep is None or keep >= room:
        return prompt
    ids = model.encode(prompt)
    return prompt if len(ids) <= keep else model.tokenizer.decode(ids[-keep:])


def complete(model, c: Completion) -> tuple[list[dict], dict]:
    """The choices and the ``usage`` of a validated request."""
    room = model.max_length - c.max_tokens
    prompts = [_truncate(model, p, c.truncate_prompt_tokens, room) for p in c.prompts]
    settings = GenerationSettings(
        max_new_tokens=max(1, c.max_tokens),
        temperature=c.temperature,
        top_p=c.top_p,
        seed=c.seed,
        num_samples=c.n,
    )
    if c.max_tokens > 0:
        generated = model.generate(prompts, settings)
    else:
        generated = [[""] * c.n for _ in prompts]
    count = lambda text: len(model.encode(text)) if text else 0  # noqa: E731
    choices, completion_tokens = [], 0
    for prompt, texts in zip(prompts, generated, strict=True):
        for text in texts:
            text, stopped = cut_at_stop(text, c.stop)
            completion_tokens += count(text)
            full = prompt + text if c.echo else text
            lp = _echo_logprobs(model, full) if (c.echo and c.logprobs is not None) else None
            choices.append(
                {
                    "text": full,
                    "index": len(choices),
                    "logprobs": lp,
                    "finish_reason": "stop" if stopped else "length",
                }
            )
    prompt_tokens = sum(count(p) for p in prompts)
    usage = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    return choices, usage


def make_server(
    model, host: str = "127.0.0.1", port: int = 8000, name: str | None = None
) -> ThreadingHTTPServer:
    """A server for ``model`` (an ``HFModel``) under the served ``name`` (default: its
    folder's name); call ``serve_forever`` or run it in a thread."""
    lock = threading.Lock()
    name = name or served_name(model.name)
    context = model.max_length

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:  # one line per request, written by _send
            pass

        def _send(self, code: int, body: dict, started: float) -> None:
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            usage = body.get("usage")
            tokens = (
                f" prompt={usage['prompt_tokens']} completion={usage['completion_tokens']}"
                if usage
                else ""
            )
            print(
                f"srlib serve: {self.command} {self.path} {code}{tokens}"
                f" {time.perf_counter() - started:.3f}s",
                file=sys.stderr,
                flush=True,
            )

        def _error(self, e: APIError, started: float) -> None:
            self._send(e.status, e.body(), started)

        def do_GET(self) -> None:
            started = time.perf_counter()
            if self.path.rstrip("/") != "/v1/models":
                return self._error(APIError(f"no route {self.path}", status=404), started)
            entry = {"id": name, "object": "model", "owned_by": "srlib", "max_model_len": context}
            self._send(200, {"object": "list", "data": [entry]}, started)

        def do_POST(self) -> None:
            started = time.perf_counter()
            if self.path.rstrip("/") != "/v1/completions":
                return self._error(APIError(f"no route {self.path}", status=404), started)
            try:
                size = int(self.headers.get("Content-Length", 0))
                try:
                    req = json.loads(self.rfile.read(size))
                except (json.JSONDecodeError, UnicodeDecodeError) as e:
                    raise APIError(f"the request body is not JSON: {e}") from e
                request = parse(req, name, context, lambda text: len(model.encode(text)))
                with lock:
                    choices, usage = complete(model, request)
            except APIError as e:
                return self._error(e, started)
            body = {
                "id": f"cmpl-{time.time_ns()}",
                "object": "text_completion",
                "created": int(time.time()),
                "model": name,
                "choices": choices,
                "usage": usage,
            }
            self._send(200, body, started)

    return ThreadingHTTPServer((host, port), Handler)


def serve(model, host: str = "127.0.0.1", port: int = 8000, name: str | None = None) -> None:
    """Serve ``model`` until interrupted (Ctrl-C) or terminated (SIGTERM), then close."""
    server = make_server(model, host, port, name)
    stop = lambda *_: threading.Thread(target=server.shutdown).start()  # noqa: E731
    previous = signal.signal(signal.SIGTERM, stop)
    served = name or served_name(model.name)
    print(f"srlib serve: {served} on http://{host}:{server.server_port}/v1", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        signal.signal(signal.SIGTERM, previous)
        print("srlib serve: stopped", flush=True)
