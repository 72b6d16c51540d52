"""An agent that cannot reach its model ends as the machinery's `model_error`, never as the model's FAIL:
the proxy notes why the latest request did not reach the model, and the run's ending reads it."""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace

import pytest

from endstate.agents import find_agent
from endstate.agents._proxy import ModelProxy
from endstate.agents._run import how_it_ended

OK = {"choices": [{"message": {"role": "assistant", "content": "ok"}}], "usage": {"prompt_tokens": 1}}


class _Upstream(BaseHTTPRequestHandler):
    """Answers with the status the request's path ends in (…/v1/<status>/chat/completions)."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        status = int(self.path.split("/")[2])
        data = json.dumps(OK if status == 200 else {"error": {"message": f"upstream says {status}"}}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def upstream():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Upstream)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _ask(proxy: ModelProxy) -> int:
    body = json.dumps({"model": "x", "messages": [{"role": "user", "content": "hi"}]}).encode()
    return proxy._answer({"method": "POST", "path": "/v1/chat/completions", "headers": []}, body)[0]


def _proxy(url: str) -> ModelProxy:
    return ModelProxy(find_agent("mini-swe-agent"), url, api_key=None, timeout_s=5, on_divergence=lambda e: None)


@pytest.mark.parametrize(("status", "why"), [(401, "refused the credentials"), (403, "refused the credentials"),
                                             (404, "has no such endpoint or model"), (503, "failed on its side")])
def test_an_answer_that_is_not_the_model_s_is_noted_with_the_provider_s_words(upstream, status, why):
    proxy = _proxy(f"{upstream}/v1/{status}")
    assert _ask(proxy) == status  # the agent gets the answer as it came
    assert proxy.unreachable == (f"the model at {upstream}/v1/{status}/chat/completions {why} "
                                 f"(HTTP {status}: upstream says {status})")
    proxy.close()


@pytest.mark.parametrize("status", [200, 400, 413, 429])
def test_the_model_s_answers_and_the_conversation_s_own_faults_are_not(upstream, status):
    proxy = _proxy(f"{upstream}/v1/{status}")
    _ask(proxy)
    assert proxy.unreachable == ""
    proxy.close()


def test_an_answer_that_gets_through_later_clears_it(upstream):
    proxy = _proxy(f"{upstream}/v1/503")
    _ask(proxy)
    proxy.upstream = f"{upstream}/v1/200"  # the agent retried, and the server was back
    _ask(proxy)
    assert proxy.unreachable == ""
    proxy.close()


def test_a_refused_connection_is_noted_and_answered_502():
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    proxy = _proxy(f"http://127.0.0.1:{port}/v1")
    assert _ask(proxy) == 502
    assert proxy.unreachable.startswith(f"the model cannot be reached at http://127.0.0.1:{port}/v1/chat/completions: "
                                        "ConnectError"), proxy.unreachable
    assert proxy.error == ""  # not a defect of endstate's
    proxy.close()


@pytest.mark.parametrize(("exit_code", "timed_out"), [(1, False), (0, False), (0, True)])
def test_a_run_whose_model_was_unreachable_ends_as_model_error_whatever_the_agent_did(exit_code, timed_out):
    spec = find_agent("claude-code")
    result = SimpleNamespace(exit_code=exit_code, timed_out=timed_out, stderr="API Error: 404")
    proxy = SimpleNamespace(unreachable="the model at http://x/v1/messages has no such endpoint or model (HTTP 404)",
                            error="")
    stop, detail = how_it_ended(spec, result, "", 60.0, proxy)
    assert stop == "model_error" and detail.startswith(proxy.unreachable + "; then claude-code: "), detail
    reached = SimpleNamespace(unreachable="", error="")
    assert how_it_ended(spec, result, "", 60.0, reached)[0] in ("agent_error", "model_stopped", "wall_budget")
