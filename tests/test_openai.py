"""The OpenAI-compatible backend over real HTTP on loopback, against ``srlib serve``."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from srlib.benchmarks import load_benchmark
from srlib.detection.detect import detect
from srlib.models.base import GenerationSettings
from srlib.models.hf import HFModel
from srlib.models.openai import OpenAIModel, UnsupportedByServer
from srlib.models.serve import make_server
from srlib.transforms import make_variants_many


def running(server):
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_port}/v1"


@pytest.fixture(scope="module")
def served(tiny_model_dir):
    server = make_server(HFModel(str(tiny_model_dir), batch_size=1), port=0, name="tiny")
    url = running(server)
    yield url, HFModel(str(tiny_model_dir), batch_size=1)
    server.shutdown()
    server.server_close()


def test_echo_logprobs_equal_the_hf_backend(served):
    url, hf = served
    client = OpenAIModel(url, "tiny")
    texts = [s.prompt[:120] for s in load_benchmark("humaneval")[:4]]
    for a, b in zip(client.token_logprobs(texts), hf.token_logprobs(texts), strict=True):
        assert a.tokens == b.tokens
        np.testing.assert_allclose(a.logprobs, b.logprobs, atol=1e-5)
        np.testing.assert_allclose(a.var, b.var, atol=1e-5)


def test_greedy_generation_equals_the_hf_backend(served):
    url, hf = served
    prompts = [s.prompt[:100] for s in load_benchmark("humaneval")[:3]]
    settings = GenerationSettings(max_new_tokens=8)
    assert OpenAIModel(url, "tiny").generate(prompts, settings) == hf.generate(prompts, settings)


def test_detection_over_http_gives_identical_decisions(served):
    url, hf = served
    samples = load_benchmark("humaneval")[:3]  # longer than the context: sliding windows
    variants = make_variants_many(samples, 3, kinds=("function", "variable"), progress=False)
    kw = {"variants": variants, "max_new_tokens": 12, "progress": False}
    local = detect(hf, samples, **kw)
    remote = detect(OpenAIModel(url, "tiny"), samples, **kw)
    assert (local.n_variants == 3).all()
    for col in ("sr_gray", "sr_black", "sr_gray_p", "sr_black_p"):
        assert local[col].tolist() == remote[col].tolist()
    np.testing.assert_allclose(local.ppl, remote.ppl, rtol=1e-5)


class Scripted(BaseHTTPRequestHandler):
    """A stand-in server: fails ``failures`` times with 503, then answers without logprobs."""

    failures = 0

    def log_message(self, *args):
        pass

    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        if Scripted.failures > 0:
            Scripted.failures -= 1
            self.send_response(503)
            self.end_headers()
            return
        body = json.dumps({"choices": [{"index": 0, "text": " ok", "logprobs": None}]}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def test_retries_with_backoff_then_succeeds_and_reports_missing_echo():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Scripted)
    url = running(server)
    try:
        Scripted.failures = 2
        client = OpenAIModel(url, "x", backoff=0.01, max_retries=3, concurrency=1)
        assert client.generate(["p"], GenerationSettings(max_new_tokens=2)) == [[" ok"]]
        with pytest.raises(UnsupportedByServer, match="echo"):
            client.token_logprobs(["text"])
        Scripted.failures = 10
        with pytest.raises(ConnectionError, match="no answer after 2 tries"):
            OpenAIModel(url, "x", backoff=0.01, max_retries=1).generate(["p"], GenerationSettings())
    finally:
        server.shutdown()
        server.server_close()


class VLLMLike(BaseHTTPRequestHandler):
    """vLLM's echo: ``max_tokens = 0`` is a 400 naming it; with 1, the prompt's tokens and
    one generated token come back, and ``usage.prompt_tokens`` says where the prompt ends."""

    def log_message(self, *args):
        pass

    def do_POST(self):
        req = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if req["max_tokens"] == 0:
            error = {"message": "max_tokens must be at least 1, got 0.", "param": "max_tokens"}
            self._reply(400, {"error": error})
            return
        prompt = req["prompt"].split(" ")
        tokens = [prompt[0]] + [" " + t for t in prompt[1:]] + [" gen"]
        values = [None] + [-float(k) for k in range(1, len(tokens) - 1)] + [-9.0]
        logprobs = {"tokens": tokens, "token_logprobs": values}
        choice = {"index": 0, "text": req["prompt"] + " gen", "logprobs": logprobs}
        usage = {"prompt_tokens": len(prompt), "completion_tokens": 1}
        self._reply(200, {"choices": [choice], "usage": usage})

    def _reply(self, status, doc):
        body = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def test_echo_on_a_server_that_refuses_zero_new_tokens_drops_the_generated_one():
    server = ThreadingHTTPServer(("127.0.0.1", 0), VLLMLike)
    try:
        client = OpenAIModel(running(server), "x", concurrency=1)
        scores = client.token_logprobs(["def f ( ) :", "a b"])
        assert scores[0].tokens == [" f", " (", " )", " :"]
        np.testing.assert_array_equal(scores[0].logprobs, [-1.0, -2.0, -3.0, -4.0])
        assert scores[1].tokens == [" b"] and len(scores[1].mean) == 1
    finally:
        server.shutdown()
        server.server_close()


def test_unreachable_server_is_a_clear_error():
    client = OpenAIModel("http://127.0.0.1:9/v1", "x", max_retries=0, timeout=2)
    with pytest.raises(ConnectionError, match="no answer after"):
        client.generate(["p"], GenerationSettings())
