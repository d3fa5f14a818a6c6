"""``srlib serve``: a small OpenAI-compatible completions server over the HF backend, so any
local model can be audited as a black box and the OpenAI backend tested on loopback.

Implements ``GET /v1/models`` and ``POST /v1/completions`` with ``prompt`` (string or list),
``max_tokens``, ``temperature``, ``top_p``, ``n``, ``seed``, ``echo`` and ``logprobs``. With
``echo`` and ``logprobs`` it returns the prompt's token log-probs (first token ``null``, as
OpenAI does) plus μ and σ² per token under ``logprobs.srlib`` (for Min-K%++);
``top_logprobs`` lists only the actual token. One model call at a time (a lock).
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from srlib.models.base import GenerationSettings


def _echo_logprobs(model, text: str) -> tuple[str, dict]:
    scores = model.token_logprobs([text])[0]
    tokens = [model.first_token(text)] + scores.tokens
    offsets, pos = [], 0
    for tok in tokens:
        offsets.append(pos)
        pos += len(tok)
    lps = [None] + scores.logprobs.tolist()
    return text, {
        "tokens": tokens,
        "token_logprobs": lps,
        "top_logprobs": [None] + [{t: v} for t, v in zip(scores.tokens, lps[1:], strict=True)],
        "text_offset": offsets,
        "srlib": {"mean": scores.mean.tolist(), "var": scores.var.tolist()},
    }


def make_server(model, host: str = "127.0.0.1", port: int = 8000) -> ThreadingHTTPServer:
    """A server for ``model`` (an ``HFModel``); call ``serve_forever`` or run it in a thread."""
    lock = threading.Lock()
    name = getattr(model, "name", "srlib-model")

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:  # quiet: tests and notebooks read stdout
            pass

        def _send(self, code: int, body: dict) -> None:
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path.rstrip("/") == "/v1/models":
                self._send(200, {"object": "list", "data": [{"id": name, "object": "model"}]})
            else:
                self._send(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self) -> None:
            if self.path.rstrip("/") != "/v1/completions":
                return self._send(404, {"error": {"message": f"no route {self.path}"}})
            try:
                req = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                prompts = req["prompt"] if isinstance(req["prompt"], list) else [req["prompt"]]
                with lock:
                    choices = _complete(model, prompts, req)
            except (KeyError, TypeError, ValueError, json.JSONDecodeError) as e:
                return self._send(400, {"error": {"message": f"bad request: {e}"}})
            self._send(
                200,
                {
                    "id": f"cmpl-{time.time_ns()}",
                    "object": "text_completion",
                    "created": int(time.time()),
                    "model": req.get("model", name),
                    "choices": choices,
                },
            )

    return ThreadingHTTPServer((host, port), Handler)


def _complete(model, prompts: list[str], req: dict) -> list[dict]:
    max_tokens = int(req.get("max_tokens", 16))
    echo, want_lp = bool(req.get("echo")), req.get("logprobs") is not None
    settings = GenerationSettings(
        max_new_tokens=max(1, max_tokens),
        temperature=float(req.get("temperature", 1.0) or 0.0),
        top_p=float(req.get("top_p", 1.0)),
        seed=int(req.get("seed") or 0),
        num_samples=int(req.get("n", 1)),
    )
    generated = model.generate(prompts, settings) if max_tokens > 0 else [[""] * 1] * len(prompts)
    choices = []
    for prompt, texts in zip(prompts, generated, strict=True):
        for text in texts:
            full = prompt + text if echo else text
            lp = _echo_logprobs(model, full)[1] if (echo and want_lp) else None
            choices.append(
                {"text": full, "index": len(choices), "logprobs": lp, "finish_reason": "length"}
            )
    return choices


def serve(model, host: str = "127.0.0.1", port: int = 8000) -> None:
    """Serve ``model`` until interrupted."""
    server = make_server(model, host, port)
    print(f"srlib serve: {getattr(model, 'name', '')} on http://{host}:{server.server_port}/v1")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
