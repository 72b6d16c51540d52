"""The host end of the model proxy: what it forwards, to where, with which headers, and what it refuses."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from endstate.agents import find_agent
from endstate.agents._proxy import ModelProxy
from endstate.models._settings import CHANNEL_HEADER, TURN_HEADER
from endstate.models.scripted._bashblock import ACTION_FORMAT_HEADER

ANSWER = {"choices": [{"message": {"role": "assistant", "content": "ok"}}],
          "usage": {"prompt_tokens": 11, "completion_tokens": 3}}


class _Upstream(BaseHTTPRequestHandler):
    seen: list[tuple[str, dict[str, str], bytes]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.seen.append((f"{self.command} {self.path}" if self.command != "POST" else self.path,
                          dict(self.headers), body))
        data = json.dumps(ANSWER).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_DELETE = do_POST

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def upstream():
    _Upstream.seen = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Upstream)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/api/v1", _Upstream.seen
    server.shutdown()
    server.server_close()


def _proxy(url: str, key: str | None = "sk-real-key") -> ModelProxy:
    return ModelProxy(find_agent("mini-swe-agent"), url, api_key=key, timeout_s=10, on_divergence=lambda e: None)


def _request(path: str = "/v1/chat/completions", body: object = None, method: str = "POST",
             headers: list[list[str]] | None = None) -> tuple[dict, bytes]:
    document = {"model": "openai/x", "messages": [{"role": "user", "content": "hi"}]} if body is None else body
    return {"method": method, "path": path, "headers": headers or []}, json.dumps(document).encode()


def test_a_chat_request_goes_to_the_upstream_with_only_the_harness_headers(upstream):
    url, seen = upstream
    proxy = _proxy(url)
    status, _, headers, answer = proxy._answer(*_request(headers=[["Authorization", "Bearer placeholder"],
                                                                  ["traceparent", "00-abc-def-01"],
                                                                  ["User-Agent", "litellm/1"]]))
    assert status == 200 and json.loads(answer) == ANSWER and headers == [["content-type", "application/json"]]
    path, sent, _ = seen[0]
    assert path == "/api/v1/chat/completions"
    assert sent["Authorization"] == "Bearer sk-real-key"
    assert "traceparent" not in sent and "litellm" not in sent.get("User-Agent", "")
    assert sent[CHANNEL_HEADER] == "agent" and sent[TURN_HEADER] == "0"
    assert json.loads(sent[ACTION_FORMAT_HEADER])["fence"] == "mswea_bash_command"
    proxy._answer(*_request())
    assert seen[1][1][TURN_HEADER] == "1"
    assert (proxy.turns, proxy.input_tokens, proxy.output_tokens) == (2, 22, 6)
    proxy.close()


@pytest.mark.parametrize("method, path", [
    ("GET", "/v1/models"), ("POST", "/v1/embeddings"), ("POST", "/v1/../../admin"), ("POST", "/chat/completions"),
    ("POST", "http://example.com/v1/chat/completions"), ("DELETE", "/v1/chat/completions"),
])
def test_anything_but_the_declared_endpoints_is_refused_in_place(upstream, method, path):
    url, seen = upstream
    proxy = _proxy(url)
    status, _, _, answer = proxy._answer(*_request(path=path, method=method))
    assert status == 404 and b"forwards only POST /v1" in answer
    assert seen == [] and proxy.refused == [f"{method} {path}"] and proxy.turns == 0
    proxy.close()


def test_without_the_allowlist_guard_other_methods_and_paths_go_out_with_the_key(upstream):
    """What the mutation check's proxy-allowlist mutant turns off: the same requests reach the API."""
    url, seen = upstream
    proxy = ModelProxy(find_agent("mini-swe-agent"), url, api_key="sk-real-key", timeout_s=10,
                       on_divergence=lambda e: None, allowlist=False)
    assert proxy._answer(*_request(path="/v1/files", body={"purpose": "batch"}))[0] == 200
    assert proxy._answer(*_request(path="/v1/models", method="GET", body={}))[0] == 200
    assert [path for path, _, _ in seen] == ["/api/v1/files", "GET /api/v1/models"]
    assert all(headers["Authorization"] == "Bearer sk-real-key" for _, headers, _ in seen) and proxy.refused == []
    proxy.close()


def test_non_json_bodies_are_refused(upstream):
    url, seen = upstream
    proxy = _proxy(url)
    assert proxy._answer({"method": "POST", "path": "/v1/chat/completions", "headers": []}, b"not json")[0] == 400
    assert seen == []
    proxy.close()


EVENTS = (b'data: {"choices":[{"delta":{"role":"assistant","content":"Hel"}}]}\n\n'
          b'data: {"choices":[{"delta":{"content":"lo"}}]}\n\n'
          b'data: {"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":2}}\n\n'
          b"data: [DONE]\n\n")


class _Streaming(BaseHTTPRequestHandler):
    seen: list[bytes] = []

    def do_POST(self) -> None:
        self.seen.append(self.rfile.read(int(self.headers["Content-Length"])))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        for event in EVENTS.split(b"\n\n")[:-1]:  # one write per event, as a server streams them
            self.wfile.write(event + b"\n\n")
            self.wfile.flush()
        self.close_connection = True

    def log_message(self, *args: object) -> None:
        pass


def test_a_streamed_answer_is_recorded_as_its_events_and_replayed_byte_for_byte(tmp_path):
    from endstate.cassettes import CassetteJob, load, open_session

    _Streaming.seen = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Streaming)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    cassette = tmp_path / "t.cassette"
    body = {"model": "x", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    spec = find_agent("mini-swe-agent")
    answers = []
    for mode in ("record", "replay"):
        job = CassetteJob(mode=mode, path=str(cassette), header={"agent": spec.id, "model": "openai/x"})
        with open_session(job, task_id="t", state_dir=tmp_path / mode):
            proxy = _proxy(url)
            status, _, headers, answer = proxy._answer(*_request(body=body))
            proxy.close()
        assert status == 200 and headers == [["content-type", "text/event-stream"]]
        assert (proxy.input_tokens, proxy.output_tokens) == (7, 2)
        answers.append(answer)
    server.shutdown()
    server.server_close()
    assert answers == [EVENTS, EVENTS] and len(_Streaming.seen) == 1  # replay asked no server
    assert load(cassette).interactions[0].response.body == EVENTS


def test_volatile_text_is_made_fixed_before_it_is_sent(upstream):
    url, seen = upstream
    proxy = _proxy(url, key=None)
    content = ("<system_information>Linux 6.1.0-99-amd64 #1 SMP x86_64</system_information>\n"
               "<output>\n5 passed in 0.37s\nat 0x7f3a2b1c4d50\n</output>")
    proxy._answer(*_request(body={"model": "x", "messages": [{"role": "user", "content": content}]}))
    sent = json.loads(seen[0][2])["messages"][0]["content"]
    assert sent == ("<system_information>Linux sandbox</system_information>\n"
                    "<output>\n5 passed in <duration>\nat 0x<addr>\n</output>")
    assert "Authorization" not in seen[0][1]
    proxy.close()


def test_closing_the_stream_ends_the_thread_that_serves_it():
    """The proxy closes its end of the forwarder's stream when the agent's command has ended; the thread
    blocked reading it must end then, not at its join's timeout (ten idle seconds on every run)."""
    import socket

    from endstate.agents._proxy import _Stream

    ours, theirs = socket.socketpair()
    stream = _Stream(ours)
    ended = threading.Event()

    def serve() -> None:
        with pytest.raises((EOFError, OSError)):
            stream.receive()
        ended.set()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    assert not ended.wait(0.2)  # blocked in recv: nothing was sent
    stream.close()
    assert ended.wait(5), "the thread reading the stream is still blocked after close()"
    theirs.close()


class _SilentEngine:
    """An engine whose exec of the forwarder ends at once with a word on standard error and no `ready`."""

    def __init__(self) -> None:
        import socket

        self.ours, theirs = socket.socketpair()
        said = b"python3: not here\n"
        theirs.sendall(b"\x02\x00\x00\x00" + len(said).to_bytes(4, "big") + said)
        theirs.close()

    def exec_create(self, container: str, argv: list[str], **kwargs: object) -> dict:
        return {"Id": "exec-1"}

    def exec_start(self, exec_id: str, socket: bool) -> object:
        return self.ours


def test_a_forwarder_that_never_listens_is_a_fault_of_the_machinery_run_again():
    """It starts before the agent runs anything: the run is an infra_error the runner retries, never the
    agent's error (a control arm stays a control arm on a loaded machine)."""
    from endstate.errors import CommandWedged
    from endstate.sandbox import machinery_fault

    proxy = _proxy("http://127.0.0.1:9/api/v1")
    with pytest.raises(CommandWedged, match="did not say it listens on port 4000 within 60 s: python3: not here") as raised:
        proxy.start(_SilentEngine(), "c0ffee" * 4, 4000)
    assert machinery_fault(raised.value).startswith("a sandbox's command runner hung (the model forwarder")
    proxy.close()
