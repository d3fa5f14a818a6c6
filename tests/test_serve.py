"""``srlib serve`` as OpenAI's own Python client sees it: completions, echoed log-probs,
``usage``, a 404 for an unknown model, a 400 naming each invalid parameter, and a clean
shutdown on SIGTERM."""

import signal
import subprocess
import sys
import threading

import httpx
import numpy as np
import openai
import pytest

from srlib.benchmarks import load_benchmark
from srlib.models.base import GenerationSettings
from srlib.models.hf import HFModel
from srlib.models.openai import OpenAIModel, RequestRejected
from srlib.models.serve import make_server


@pytest.fixture(scope="module")
def server(tiny_model_dir):
    hf = HFModel(str(tiny_model_dir), batch_size=1)
    srv = make_server(hf, port=0, name="tiny")
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{srv.server_port}/v1"
    yield url, hf, openai.OpenAI(base_url=url, api_key="unused", max_retries=0)
    srv.shutdown()
    srv.server_close()


def test_official_client_completion_echo_and_usage(server):
    url, hf, client = server
    prompt = load_benchmark("humaneval")[0].prompt[:60]
    reply = client.completions.create(model="tiny", prompt=prompt, max_tokens=6, temperature=0)
    text = hf.generate([prompt], GenerationSettings(max_new_tokens=6))[0][0]
    assert reply.model == "tiny" and reply.choices[0].text == text
    assert reply.usage.prompt_tokens == len(hf.encode(prompt))
    assert reply.usage.completion_tokens == len(hf.encode(text))
    assert reply.usage.total_tokens == reply.usage.prompt_tokens + reply.usage.completion_tokens
    echo = client.completions.create(
        model="tiny", prompt=prompt, max_tokens=0, echo=True, logprobs=1
    )
    lp = echo.choices[0].logprobs
    assert echo.choices[0].text == prompt and lp.token_logprobs[0] is None
    np.testing.assert_allclose(
        lp.token_logprobs[1:], hf.token_logprobs([prompt])[0].logprobs, atol=1e-5
    )
    assert echo.usage.completion_tokens == 0
    stop = text[-1]  # the greedy text stops at its first occurrence of its last character
    cut = client.completions.create(
        model="tiny", prompt=prompt, max_tokens=6, temperature=0, stop=stop
    )
    assert cut.choices[0].finish_reason == "stop" and stop not in cut.choices[0].text
    assert [m.id for m in client.models.list().data] == ["tiny"]


BAD = [
    ("max_tokens", -1),
    ("max_tokens", 10**6),
    ("max_tokens", "5"),
    ("temperature", 2.5),
    ("temperature", "hot"),
    ("top_p", 0),
    ("top_p", 1.5),
    ("n", 0),
    ("logprobs", 6),
    ("echo", "yes"),
    ("stop", ["a", "b", "c", "d", "e"]),
    ("stop", ""),
    ("seed", 1.5),
    ("prompt", 5),
    ("prompt", []),
    ("prompt", "x " * 500),  # longer than the context: generation cannot fit
]


def test_each_invalid_parameter_is_a_400_naming_it_and_the_server_keeps_serving(server):
    url, _, client = server
    for name, value in BAD:
        body = {"model": "tiny", "prompt": "def f(", "max_tokens": 4, name: value}
        with pytest.raises(openai.BadRequestError) as e:
            client.completions.create(**{"model": "tiny", "prompt": "x"}, extra_body=body)
        assert e.value.status_code == 400 and e.value.body["param"] == name, (name, value)
    with pytest.raises(openai.NotFoundError) as e:
        client.completions.create(model="gpt-4", prompt="x", max_tokens=1)
    assert e.value.body["code"] == "model_not_found" and "tiny" in e.value.body["message"]
    r = httpx.post(f"{url}/completions", content=b"{not json")
    assert r.status_code == 400 and set(r.json()["error"]) == {"message", "type", "param", "code"}
    assert client.completions.create(model="tiny", prompt="x", max_tokens=1).usage.total_tokens


def test_openai_backend_names_the_model_or_parameter_refused(server):
    url, hf, _ = server
    with pytest.raises(RequestRejected, match="does not serve model 'nope'"):
        OpenAIModel(url, "nope", max_retries=0).generate(
            ["x"], GenerationSettings(max_new_tokens=2)
        )
    with pytest.raises(RequestRejected, match="parameter 'top_p'"):
        OpenAIModel(url, "tiny").generate(["x"], GenerationSettings(top_p=0.0, temperature=1.0))
    client = OpenAIModel(url, "tiny", concurrency=4)
    assert client.context_length() == hf.max_length
    long = [s.text for s in load_benchmark("humaneval")[:6]]  # longer than the context
    settings = GenerationSettings(max_new_tokens=5)
    assert client.generate(long, settings) == hf.generate(long, settings)  # concurrent = serial


def test_cli_server_logs_each_request_and_stops_on_sigterm(tiny_model_dir):
    cmd = [
        sys.executable,
        "-m",
        "srlib.cli",
        "serve",
        "--model",
        str(tiny_model_dir),
        "--port",
        "0",
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url = proc.stdout.readline().split(" on ")[1].strip()
        models = httpx.get(f"{url}/models").json()["data"]
        assert [m["id"] for m in models] == [tiny_model_dir.name]  # the folder's name
        bad = httpx.post(f"{url}/completions", json={"model": tiny_model_dir.name, "n": 0})
        assert bad.status_code == 400
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 0 and "stopped" in out
    assert "GET /v1/models 200" in err and "POST /v1/completions 400" in err
