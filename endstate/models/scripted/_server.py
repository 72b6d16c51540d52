"""A loopback HTTP server speaking provider wire formats for the control arms.

    POST /scripted/<policy>/<task_id>/v1/chat/completions     (openai SDK: scripted/)
    POST /scripted/<policy>/<task_id>/v1/messages             (anthropic SDK: scripted-anthropic/; _messages)
    POST /scripted/<policy>/<task_id>/v1/responses            (openai SDK: scripted-responses/; _responses)

The agent reaches it through the real SDK, exactly as it reaches a
provider, so recording a control arm exercises the same SDK -> httpx2 -> vcrpy
path as a live model. Answers depend only on the policy, the task folder, the
channel and turn headers and the request's messages: no clock, no randomness, and of the request headers only
the action format an agent's proxy declares (`_bashblock`; an Authorization header is
never echoed). A request offering Claude Code's or Codex's own tools is answered with
those tools (`_vocab`). With `auto_cache` on (or ENDSTATE_SCRIPTED_AUTO_CACHE=1), chat answers
report as cached the prompt a provider's automatic cache would hold
(`prompt_tokens_details.cached_tokens`: all but the newest message, in 128-token steps
from 1024, as OpenAI caches). It is off by default so that a fresh recording of a
control arm reports the usage the committed cassettes hold.

A request with `"stream": true` is answered with the same answer as server-sent events,
in each provider's own event sequence (`_sse`); a refusal stays a JSON error body.

Rate-limit mode (`rate_limit_every=N`) answers every Nth request, counted over the
whole server, with HTTP 429 and `Retry-After: 1`, as a provider under load does.
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

from endstate.errors import ManifestError
from endstate.models._settings import CHANNEL_HEADER, TURN_HEADER
from endstate.models.scripted._bashblock import ACTION_FORMAT_HEADER, bash_block_answer
from endstate.models.scripted._messages import error_body as messages_error_body
from endstate.models.scripted._messages import messages_answer
from endstate.models.scripted._policies import POLICIES, ScriptError, canonical_json, estimate_tokens, find_policy
from endstate.models.scripted._responses import REASONING_TOKENS, cached_tokens, responses_answer
from endstate.models.scripted._sse import stream_events
from endstate.models.scripted._vocab import agent_vocabulary, native_answer

if TYPE_CHECKING:
    from endstate.task import Task

__all__ = ["ScriptedServer"]

_TASK_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_MAX_BODY = 64 * 1024 * 1024
_CHANNELS = ("agent", "compaction")
#: The wire format of each endpoint below /scripted/<policy>/<task_id>/.
_ENDPOINTS = {("v1", "chat", "completions"): "chat", ("v1", "messages"): "messages", ("v1", "responses"): "responses"}
#: Set to 1: live scripted runs report cached prompt tokens, as an automatic provider cache would.
AUTO_CACHE_ENV = "ENDSTATE_SCRIPTED_AUTO_CACHE"


class ScriptedServer:
    """The scripted control arms on a free loopback port, served from a background thread.

    Use as a context manager, or call `start` and `close`::

        with ScriptedServer(Path("tasks")) as server:
            model = open_model("scripted/reference", settings=...,
                               base_url=server.base_url_for("reference", task_id))
    """

    def __init__(self, tasks_root: Path, *, host: str = "127.0.0.1", port: int = 0, log: bool = False,
                 rate_limit_every: int = 0, auto_cache: bool | None = None) -> None:
        if rate_limit_every < 0 or rate_limit_every == 1:
            raise ValueError(f"rate_limit_every must be 0 (off) or 2 or more, not {rate_limit_every}")
        self.tasks_root = Path(tasks_root)
        self._address = (host, port)
        self._log = log
        self._rate_limit_every = rate_limit_every
        self._auto_cache = os.environ.get(AUTO_CACHE_ENV) == "1" if auto_cache is None else auto_cache
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> ScriptedServer:
        if self._httpd is not None:
            return self
        httpd = _HTTPServer(self._address, _Handler)
        httpd.tasks_root = self.tasks_root
        httpd.log = self._log
        httpd.rate_limit_every = self._rate_limit_every
        httpd.auto_cache = self._auto_cache
        httpd.requests = 0
        httpd.rate_limited = 0
        httpd.lock = threading.Lock()
        self._httpd = httpd
        self._thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), name="endstate-scripted", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        if self._httpd is None:
            return
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join()
        self._httpd = self._thread = None

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def base_url(self) -> str:
        """The server root, e.g. http://127.0.0.1:PORT."""
        if self._httpd is None:
            raise RuntimeError("the scripted server is not running: call start() or use it in a with block")
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def base_url_for(self, policy: str, task_id: str, *, wire: str = "chat") -> str:
        """The API root serving `policy` on `task_id`: for `wire` "chat" or "responses" the OpenAI
        one, for "messages" the Anthropic one (the anthropic SDK adds /v1 itself)."""
        root = f"{self.base_url}/scripted/{policy}/{task_id}"
        return root if wire == "messages" else f"{root}/v1"

    @property
    def rate_limited(self) -> int:
        """Requests answered with 429 so far (rate-limit mode)."""
        return self._httpd.rate_limited if self._httpd is not None else 0


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    tasks_root: Path
    log: bool
    rate_limit_every: int
    auto_cache: bool
    requests: int
    rate_limited: int
    lock: threading.Lock

    def handle_error(self, request: Any, client_address: Any) -> None:
        """What escapes a handler is the socket's: a client that hung up mid-answer (its run was
        interrupted) is nobody's fault, anything else one line on stderr, never a traceback."""
        exc = sys.exc_info()[1]
        if not isinstance(exc, ConnectionError):
            print(f"scripted server: a request from {client_address[0]} failed: {type(exc).__name__}: {exc}",
                  file=sys.stderr)


class _RateLimited(ScriptError):
    pass


class _Handler(BaseHTTPRequestHandler):
    server: _HTTPServer

    def do_POST(self) -> None:
        wire = _ENDPOINTS.get(tuple(self.path.split("?", 1)[0].split("/")[4:]), "chat")
        errors = messages_error_body if wire == "messages" else _error_body
        headers: dict[str, str] = {}
        self._streamed: dict[str, Any] | None = None
        try:
            self._throttle()
            status, body = 200, self._answer(wire)
            if self._streamed is not None:  # errors stay JSON, as the providers answer them before streaming
                self._send_events(stream_events(wire, body, **self._streamed))
                return
        except _RateLimited as exc:
            status, body, headers = 429, errors(429, str(exc)), {"Retry-After": "1"}
        except ScriptError as exc:
            status, body = exc.status, errors(exc.status, str(exc))
        except Exception as exc:  # a bug here must reach the client as an answer, not a dropped socket
            status, body = 500, errors(500, f"the scripted server failed: {type(exc).__name__}: {exc}")
        self._send(status, body, headers)

    def _throttle(self) -> None:
        every = self.server.rate_limit_every
        if not every:
            return
        with self.server.lock:
            self.server.requests += 1
            limited = self.server.requests % every == 0
            self.server.rate_limited += limited
        if limited:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            raise _RateLimited(429, f"rate limited (every {every}th request): retry after 1 second")

    def do_GET(self) -> None:
        self._send(405, _error_body(405, "the scripted server answers POST .../v1/chat/completions only"))

    def _answer(self, wire: str) -> dict[str, Any]:
        policy, task_id = self._route()
        task = self._task(task_id)
        channel = self.headers.get(CHANNEL_HEADER, "agent")
        if channel not in _CHANNELS:
            raise ScriptError(400, f"header {CHANNEL_HEADER} must be one of {', '.join(_CHANNELS)}")
        turn = self._turn()
        request = self._request_json(wire)
        if request.get("stream") is True:
            options = request.get("stream_options")
            self._streamed = {"include_usage": isinstance(options, dict) and options.get("include_usage") is True}
        action_format = self.headers.get(ACTION_FORMAT_HEADER)
        try:
            vocabulary = agent_vocabulary(request, wire) if channel == "agent" and turn is not None else None
            if action_format and channel == "agent" and turn is not None:  # a text-action agent's own format
                message = bash_block_answer(find_policy(policy), task, turn, action_format)
            elif vocabulary is not None and turn is not None:  # Claude Code's or Codex's own tools
                message = native_answer(find_policy(policy), task, turn, vocabulary, request)
            else:
                message = find_policy(policy)(task, channel, turn)
        except ManifestError as exc:
            raise ScriptError(422, f"task {task_id!r} has no usable reference trajectory: {exc}") from None
        if wire == "messages":
            return messages_answer(request, message, policy=policy, task_id=task_id, channel=channel, turn=turn)
        if wire == "responses":
            return responses_answer(request, message, policy=policy, task_id=task_id, channel=channel, turn=turn,
                                    auto_cache=self.server.auto_cache)
        prompt_tokens = estimate_tokens(request["messages"])
        completion_tokens = estimate_tokens(message)
        cached = cached_tokens(request["messages"][:-1])
        # A reasoning model bills its hidden reasoning as output: a fixed share per effort.
        reasoning = REASONING_TOKENS.get(str(request.get("reasoning_effort")), 0)
        completion_tokens += reasoning
        return {
            "id": f"scripted-{policy}-{task_id}-{channel}-{'none' if turn is None else turn}",
            "object": "chat.completion",
            "created": 0,
            "model": f"scripted/{policy}",
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
                    "logprobs": None,
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
                **({"prompt_tokens_details": {"cached_tokens": cached}} if self.server.auto_cache else {}),
                **({"completion_tokens_details": {"reasoning_tokens": reasoning}} if reasoning else {}),
            },
        }

    def _route(self) -> tuple[str, str]:
        parts = self.path.split("?", 1)[0].split("/")
        if len(parts) < 6 or parts[1] != "scripted" or tuple(parts[4:]) not in _ENDPOINTS:
            raise ScriptError(404, "no such endpoint: POST /scripted/<policy>/<task_id>/v1/chat/completions, "
                                   ".../v1/messages or .../v1/responses")
        policy, task_id = parts[2], parts[3]
        if find_policy(policy) is None:
            raise ScriptError(404, f"unknown scripted policy {policy!r}: known policies are {', '.join(POLICIES)}, "
                                   "hack.<name>")
        if not _TASK_ID.match(task_id):
            raise ScriptError(404, f"unknown task {task_id!r}")
        return policy, task_id

    def _task(self, task_id: str) -> Task:
        # Imported here: the task package loads the sandbox package, which a spec check does not need.
        from endstate.task import load_task

        folder = self.server.tasks_root / task_id
        if not (folder / "task.toml").is_file():
            raise ScriptError(404, f"unknown task {task_id!r}: no {task_id}/task.toml in the scripted server's tasks folder")
        try:
            return load_task(folder)
        except ManifestError as exc:
            raise ScriptError(422, f"task {task_id!r} does not load: {exc}") from None

    def _turn(self) -> int | None:
        text = self.headers.get(TURN_HEADER)
        if text is None:
            return None
        if not text.isdigit():
            raise ScriptError(400, f"header {TURN_HEADER} must be a non-negative integer")
        return int(text)

    def _request_json(self, wire: str) -> dict[str, Any]:
        length = self.headers.get("Content-Length")
        if length is None or not length.isdigit():
            raise ScriptError(400, "the request needs a Content-Length header")
        if int(length) > _MAX_BODY:
            raise ScriptError(413, "the request body is too large")
        raw = self.rfile.read(int(length))
        try:
            request = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            raise ScriptError(400, "the request body is not JSON") from None
        field = "input" if wire == "responses" else "messages"
        if not isinstance(request, dict) or not isinstance(request.get(field), list if wire != "responses" else (list, str)):
            raise ScriptError(400, f"the request body must be a JSON object with a `{field}` list")
        return request

    def _send(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        data = canonical_json(body).encode("utf-8")
        # send_response would add Server and Date headers: the clock has no place in a recording.
        self.log_request(status)
        self.send_response_only(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)
        self.close_connection = True

    def _send_events(self, data: bytes) -> None:
        self.log_request(200)
        self.send_response_only(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)
        self.close_connection = True

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.log:
            super().log_message(format, *args)


def _error_body(status: int, message: str) -> dict[str, Any]:
    kind = "not_found_error" if status == 404 else "invalid_request_error"
    return {"error": {"message": message, "type": kind, "code": None}}
