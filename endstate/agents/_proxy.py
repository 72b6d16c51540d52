"""The host end of the model proxy: the only way a foreign agent's requests leave the sandbox.

The in-sandbox forwarder (`_forwarder`) hands each HTTP request over the `docker exec`
stream this process holds; here it is checked, made deterministic and sent on with
httpx2, the transport the cassette session patches, so record and replay are the same
vcrpy sessions as for endstate's own loop:

- only POST to the agent file's endpoints below the API root is forwarded, to the run's
  upstream URL and nowhere else; anything else is answered 404 in place, never sent;
- the body must be JSON; every string in it goes through endstate's output normaliser
  and the agent file's rewrites (durations, the host's kernel...), so the same work
  sends the same bytes; of the client's headers none is forwarded (trace ids, user
  agents and its placeholder key stay behind); the real key is added here, and the
  channel and turn headers the cassettes and the scripted server read;
- a streamed request (`"stream": true`) is forwarded and its answer read whole: the recording
  keeps the server-sent events byte for byte, and the agent gets them in the same events;
- every answer's `usage` is counted (turns; tokens by kind: input, output, cached, cache writes,
  reasoning), in a stream from its events.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable
from typing import Any, NamedTuple

import msgspec

from endstate.agent import normalise_output
from endstate.agents._spec import AgentSpec
from endstate.cassettes import BUFFERED_STREAM_HEADER
from endstate.errors import CommandWedged, ReplayDivergence
from endstate.models import ACTION_FORMAT_HEADER, CHANNEL_HEADER, TURN_HEADER

__all__ = ["ModelProxy", "ACTION_FORMAT_HEADER", "API_ROOT", "FORWARDER_ARGV", "forwarder_env", "answer_documents"]

#: The API root the agent is given, below http://127.0.0.1:PORT.
API_ROOT = "/v1"
#: How the forwarder starts inside the sandbox (its source travels in the environment, root-only).
FORWARDER_ARGV = ["python3", "-I", "-S", "-c", "import os; exec(os.environ.pop('ENDSTATE_FORWARDER'))",
                  "endstate-forwarder"]


def forwarder_env() -> dict[str, str]:
    from importlib import resources

    return {"ENDSTATE_FORWARDER": (resources.files("endstate.agents") / "_forwarder.py").read_text()}


class _Stream:
    """Frames over a `docker exec` attach socket: the engine's multiplexed stdout in, stdin out."""

    def __init__(self, sock: Any) -> None:
        self._raw = getattr(sock, "_sock", sock)
        self._sock = sock
        self._frames = bytearray()
        self._out = bytearray()
        self.err = bytearray()

    def _take(self, size: int) -> bytes:
        while len(self._out) < size:
            data = self._raw.recv(65536)
            if not data:
                raise EOFError
            self._frames += data
            while len(self._frames) >= 8:
                length = int.from_bytes(self._frames[4:8], "big")
                if len(self._frames) < 8 + length:
                    break
                (self._out if self._frames[0] == 1 else self.err).extend(self._frames[8:8 + length])
                del self._frames[:8 + length]
        taken = bytes(self._out[:size])
        del self._out[:size]
        return taken

    def receive(self) -> tuple[dict[str, Any], bytes]:
        header = json.loads(self._take(int.from_bytes(self._take(4), "big")))
        return header, self._take(int(header.get("size", 0)))

    def send(self, header: dict[str, Any], body: bytes = b"") -> None:
        encoded = json.dumps({**header, "size": len(body)}).encode()
        self._raw.sendall(len(encoded).to_bytes(4, "big") + encoded + body)

    def close(self) -> None:
        """Shut the socket down, then close it: a close alone does not wake a thread blocked in
        `recv` on it (Linux), which then waited out its join's timeout on every run."""
        try:
            self._raw.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        try:
            self._sock.close()
        except OSError:
            pass


class ModelProxy:
    """Serves one agent run's model requests from a background thread.

    `upstream` is the real API root (or, on replay, a stand-in whose path is what the
    recording hashed); `api_key` the real key, never shown to the sandbox. `on_divergence`
    is called once when replay has no answer (the run stops the agent there)."""

    def __init__(self, spec: AgentSpec, upstream: str, *, api_key: str | None, timeout_s: float,
                 on_divergence: Callable[[ReplayDivergence], None], allowlist: bool = True) -> None:
        import re

        import httpx2

        self.spec = spec
        self.upstream = upstream.rstrip("/")
        self._api_key = api_key
        self._client = httpx2.Client(timeout=timeout_s)
        self._rewrites = [(re.compile(r.pattern), r.replacement) for r in spec.normalise]
        self._on_divergence = on_divergence
        #: The endpoint allowlist (a guard: the mutation check turns it off, and then any method
        #: and path the agent asks for goes to the model's API, with the real key).
        self.allowlist = allowlist
        self._stream: _Stream | None = None
        self._thread: threading.Thread | None = None
        self.turns = 0
        #: The forwarded answers' tokens by kind, summed.
        self.tokens = Tokens()
        self.refused: list[str] = []
        self.divergence: ReplayDivergence | None = None
        self.error = ""
        #: Why the model could not be had, when the latest forwarded request failed for a reason of
        #: the machinery (no connection, refused credentials, no such endpoint, a server error): the
        #: run is then an error, never the model's failure. Cleared by an answer that got through.
        self.unreachable = ""
        #: (request body, response body) of every forwarded exchange, in order.
        self.exchanges: list[tuple[bytes, bytes]] = []

    def start(self, api: Any, container_id: str, port: int) -> None:
        """Start the forwarder in the container and wait until it listens."""
        exec_id = api.exec_create(container_id, [*FORWARDER_ARGV, str(port)], user="root", workdir="/",
                                  stdin=True, environment=forwarder_env())["Id"]
        self._stream = _Stream(api.exec_start(exec_id, socket=True))
        self._raw_settimeout(60)
        try:
            header, _ = self._stream.receive()
        except (EOFError, OSError, ValueError):
            header = {}
        if header.get("ready") != port:
            # Started before the agent runs anything: a fault of the machinery (the task is run again), never
            # a verdict on the agent, as a hung command runner is.
            said = bytes(self._stream.err)[-300:].decode("utf-8", "replace").strip()
            raise CommandWedged(f"the model forwarder in container {container_id[:12]} did not say it listens on "
                                f"port {port} within 60 s: {said or 'it said nothing'}")
        self._raw_settimeout(None)
        self._thread = threading.Thread(target=self._serve, name="endstate-model-proxy", daemon=True)
        self._thread.start()

    def _raw_settimeout(self, seconds: float | None) -> None:
        assert self._stream is not None
        self._stream._raw.settimeout(seconds)

    def close(self) -> None:
        if self._stream is not None:
            self._stream.close()
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._client.close()

    def _serve(self) -> None:
        assert self._stream is not None
        while True:
            try:
                header, body = self._stream.receive()
            except (EOFError, OSError, ValueError):
                return
            try:
                status, reason, headers, answer = self._answer(header, body)
            except Exception as exc:  # noqa: BLE001 - the agent gets an answer; the run reports the error
                self.error = self.error or f"{type(exc).__name__}: {exc}"
                status, reason, headers, answer = 502, "Bad Gateway", [], _error(f"endstate's proxy failed: {exc}")
            try:
                self._stream.send({"status": status, "reason": reason, "headers": headers}, answer)
            except OSError:
                return

    def _answer(self, header: dict[str, Any], body: bytes) -> tuple[int, str, list[list[str]], bytes]:
        method, path = str(header.get("method", "")), str(header.get("path", "")).split("?", 1)[0]
        endpoint = path[len(API_ROOT):] if path.startswith(API_ROOT + "/") else ""
        if self.allowlist and (method != "POST" or endpoint not in self.spec.model.endpoints):
            self.refused.append(f"{method} {path}")
            return 404, "Not Found", [], _error(f"endstate's proxy forwards only POST {API_ROOT}"
                                                f"{{{','.join(self.spec.model.endpoints)}}}")
        if self.divergence is not None:
            return 404, "Not Found", [], _error("replay diverged: no recorded answer")
        try:
            document = json.loads(body)
        except ValueError:
            return 400, "Bad Request", [], _error("endstate's proxy forwards JSON bodies only")
        streamed = isinstance(document, dict) and bool(document.get("stream"))
        sent = json.dumps(self._normalise(document), ensure_ascii=False, separators=(",", ":")).encode()
        headers = {"Content-Type": "application/json", "Accept": "application/json",
                   CHANNEL_HEADER: "agent", TURN_HEADER: str(self.turns)}
        if self.spec.scripted is not None:
            headers[ACTION_FORMAT_HEADER] = json.dumps(msgspec.to_builtins(self.spec.scripted), sort_keys=True)
        if streamed:  # read whole here, so the recording keeps every event as the server sent it
            headers[BUFFERED_STREAM_HEADER] = "1"
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        import httpx2

        url = self.upstream + (endpoint or path)
        try:
            response = self._client.request(method, url, content=sent, headers=headers)
        except ReplayDivergence as exc:
            self.divergence = exc
            self._on_divergence(exc)
            return 404, "Not Found", [], _error("replay diverged: no recorded answer")
        except httpx2.TransportError as exc:
            self.unreachable = f"the model cannot be reached at {_site(url)}: {type(exc).__name__}: {exc}"
            return 502, "Bad Gateway", [], _error(self.unreachable)
        self.turns += 1
        answer = response.content
        self.unreachable = _unreachable(response.status_code, answer, _site(url))
        self._count(answer)
        self.exchanges.append((sent, answer))
        kept = [[name, value] for name, value in response.headers.items() if name.lower() == "content-type"]
        return response.status_code, response.reason_phrase, kept, answer

    def _normalise(self, value: Any) -> Any:
        if isinstance(value, str):
            text = normalise_output(value)
            for pattern, replacement in self._rewrites:
                text = pattern.sub(replacement, text)
            return text
        if isinstance(value, list):
            return [self._normalise(item) for item in value]
        if isinstance(value, dict):
            return {key: self._normalise(item) for key, item in value.items()}
        return value

    def _count(self, answer: bytes) -> None:
        self.tokens = Tokens(*(a + b for a, b in zip(self.tokens, answer_tokens(answer))))

    @property
    def input_tokens(self) -> int:
        return self.tokens.input

    @property
    def output_tokens(self) -> int:
        return self.tokens.output


class Tokens(NamedTuple):
    """One answer's usage as endstate counts it (`Counters`): the input includes the parts read
    from and written to the provider's prompt cache, the output includes the reasoning."""

    input: int = 0
    output: int = 0
    cached: int = 0
    cache_write: int = 0
    reasoning: int = 0


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


def _details(usage: dict[str, Any], field: str, key: str) -> int:
    details = usage.get(field)
    return _int(details.get(key)) if isinstance(details, dict) else 0


def _tokens(usage: Any) -> Tokens:
    """A usage object of any of the three wire formats: the Messages API reports its cache reads
    and writes beside `input_tokens`; Chat Completions and the Responses API inside it."""
    if not isinstance(usage, dict):
        return Tokens()
    if "prompt_tokens" in usage or "completion_tokens" in usage:  # Chat Completions
        return Tokens(_int(usage.get("prompt_tokens")), _int(usage.get("completion_tokens")),
                      _details(usage, "prompt_tokens_details", "cached_tokens"), 0,
                      _details(usage, "completion_tokens_details", "reasoning_tokens"))
    read, written = _int(usage.get("cache_read_input_tokens")), _int(usage.get("cache_creation_input_tokens"))
    return Tokens(_int(usage.get("input_tokens")) + read + written, _int(usage.get("output_tokens")),
                  read + _details(usage, "input_tokens_details", "cached_tokens"), written,
                  _details(usage, "output_tokens_details", "reasoning_tokens"))


def answer_usage(answer: bytes) -> tuple[int, int]:
    """(input, output) tokens of one answer (see `answer_tokens`)."""
    tokens = answer_tokens(answer)
    return tokens.input, tokens.output


def answer_tokens(answer: bytes) -> Tokens:
    """The tokens of one answer by kind, whole or streamed in any of the three wire formats.

    A chat completion (whole, or the last chunk with `include_usage`) carries `usage` at the top;
    a Messages stream puts the input (with its cache reads and writes) in
    `message_start.message.usage` and the running output count in each `message_delta.usage`
    (the last one is the total, so it is not summed); a Responses stream gives the whole usage
    once, in `response.completed.response.usage`."""
    total = Tokens()
    for document in answer_documents(answer):
        if not isinstance(document, dict):
            continue
        kind = document.get("type")
        if kind == "message_start":
            total = _tokens((document.get("message") or {}).get("usage"))
        elif kind == "message_delta":
            total = total._replace(output=_tokens(document.get("usage")).output or total.output)
        elif isinstance(kind, str) and kind.startswith("response.") and isinstance(document.get("response"), dict):
            if kind == "response.completed":
                total = _tokens(document["response"].get("usage"))
        else:
            more = _tokens(document.get("usage"))
            total = Tokens(*(a + b for a, b in zip(total, more)))
    return total


def answer_documents(answer: bytes) -> list[Any]:
    """The JSON documents of an answer: the body, or each `data:` event of a server-sent stream."""
    try:
        return [json.loads(answer)]
    except ValueError:
        pass
    documents = []
    for line in answer.decode("utf-8", "replace").splitlines():
        if line.startswith("data:") and line[5:].strip() not in ("", "[DONE]"):
            try:
                documents.append(json.loads(line[5:]))
            except ValueError:
                continue
    return documents


def _site(url: str) -> str:
    """scheme://host[:port]/path of `url`, without the credentials or query a URL may carry."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname or ''}{f':{parts.port}' if parts.port else ''}{parts.path}"


#: Answers that say the model is not there for this request, whatever it would have written: the
#: credentials refused, no such endpoint or model, the server failing on its side.
_MACHINERY_STATUS = {401: "refused the credentials", 403: "refused the credentials", 404: "has no such endpoint or model",
                     405: "does not take POST there", 407: "wants proxy credentials"}


def _unreachable(status: int, answer: bytes, site: str) -> str:
    """Why the model could not be had from this answer ("" when it answered, or the request itself was
    at fault: a 400 or 413 is the conversation's, a 429 the agent's to wait out)."""
    what = _MACHINERY_STATUS.get(status) or ("failed on its side" if status >= 500 else "")
    if not what:
        return ""
    said = ""
    for document in answer_documents(answer):
        error = document.get("error") if isinstance(document, dict) else None
        said = str(error.get("message", "")) if isinstance(error, dict) else str(error or "")
        break
    return f"the model at {site} {what} (HTTP {status}{': ' + said[:200] if said else ''})"


def _error(message: str) -> bytes:
    return json.dumps({"error": {"message": message, "type": "invalid_request_error", "code": None}}).encode()
