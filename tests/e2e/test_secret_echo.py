"""Secrets never touch disk: a server that echoes the credentials back, recorded for real.

The server stands in for a provider that knows the account's key and quotes it
(a 401 "Incorrect API key provided: Bearer sk-...", then 200 answers that carry
it in the assistant's text, which the agent sends back on its next turn) and
echoes what it was sent (the Basic credentials from the base URL's userinfo,
the query key) in bodies and response headers. Its answers are the task's
reference trajectory, so the run does real work in a real sandbox. Every byte
the run leaves behind, cassettes decompressed, must hold none of it; replaying
the recording offline, with no key and no --model, must give the same run.
"""

from __future__ import annotations

import base64
import json
import struct
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qsl, quote, urlsplit

import msgspec
import pytest
import zstandard
from cli_runner import run_endstate
from e2e_helpers import TASKS
from loopback import QuietHandler, serve

from endstate.cassettes import load
from endstate.cassettes._format import MAGIC
from endstate.models import ScriptedServer
from endstate.run import read_results

pytestmark = pytest.mark.docker

TASK = "bugfix-lru-eviction"
ENV_KEY = "sk-proj-ENVKEY-0123456789abcdef"
URL_KEY = "url-PASSWORD-9876543210"
QUERY_KEY = "q-QUERYKEY-13579"
USER = "gateway-user"


def forms_of_every_secret() -> list[bytes]:
    basic = base64.b64encode(f"{USER}:{URL_KEY}".encode()).decode()
    return [s.encode() for key in (ENV_KEY, URL_KEY, QUERY_KEY, basic) for s in {key, quote(key, safe="")}]


class EchoServer:
    """Chat completions from the scripted reference policy, with every credential echoed."""

    def __init__(self, scripted: ScriptedServer) -> None:
        self.seen: list[dict[str, str]] = []
        owner = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                body = self.rfile.read(int(self.headers["content-length"]))
                query = dict(parse_qsl(urlsplit(self.path).query))
                auth = self.headers.get("authorization", "")
                owner.seen.append({"authorization": auth, "api_key": query.get("api_key", "")})
                password = base64.b64decode(auth.removeprefix("Basic ")).decode().partition(":")[2] if auth else ""
                echo = {"x-echo-key": query.get("api_key", ""),
                        "content-type": f"application/json; charset=utf-8; account={ENV_KEY}"}
                if len(owner.seen) == 1:  # the first attempt is refused, quoting the key; the SDK retries
                    message = f"Incorrect API key provided: Bearer {ENV_KEY}. You sent {auth} with key {password}."
                    self._send(401, {"error": {"message": message, "type": "invalid_request_error"}},
                               {**echo, "x-should-retry": "true", "retry-after-ms": "10"})
                    return
                forwarded = urllib.request.Request(
                    f"{scripted.base_url_for('reference', TASK)}/chat/completions", data=body, method="POST",
                    headers={name: self.headers[name] for name in ("content-type", "x-endstate-channel",
                                                                   "x-endstate-turn")})
                with urllib.request.urlopen(forwarded, timeout=30) as reply:
                    answer = json.loads(reply.read())
                message = answer["choices"][0]["message"]
                message["content"] = f"{message.get('content') or ''} (account {ENV_KEY}, password {password})"
                self._send(200, answer, echo)

            def _send(self, status: int, body: dict, headers: dict[str, str]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd, _ = serve(Handler)
        self.port = self.httpd.server_address[1]

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def echo() -> Iterator[EchoServer]:
    with ScriptedServer(TASKS) as scripted:
        server = EchoServer(scripted)
        yield server
        server.close()


def frames(data: bytes) -> Iterator[bytes]:
    """Every zstd frame of a cassette file, decompressed (layout: endstate.cassettes._format)."""
    assert data.startswith(MAGIC)
    offset = len(MAGIC) + 2
    while offset < len(data):
        (length,) = struct.unpack_from(">I", data, offset)
        yield zstandard.ZstdDecompressor().decompressobj().decompress(data[offset + 4: offset + 4 + length])
        offset += 4 + length


def leaks(folder: Path) -> list[str]:
    """Every (file, secret) where a form of a secret is found, cassettes read decompressed and
    with their request bodies rebuilt from the stored edits."""
    found = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        blobs = [path.read_bytes()]
        if path.suffix == ".cassette":
            blobs += [*frames(blobs[0]), msgspec.msgpack.encode(load(path))]
        found += [f"{path}: {secret!r}" for secret in forms_of_every_secret() if any(secret in b for b in blobs)]
    return found


def test_echoed_credentials_never_reach_disk_and_the_recording_replays(echo, tmp_path):
    base_url = f"http://{USER}:{URL_KEY}@127.0.0.1:{echo.port}/v1?api_key={QUERY_KEY}"
    cassettes, recorded, replayed = tmp_path / "cassettes", tmp_path / "recorded", tmp_path / "replayed"
    ran = run_endstate("record", "--model", "openai-compatible/echo", "--base-url", base_url, "--suite", str(TASKS),
                       "--task", TASK, "--retries", "1", "--cassettes", str(cassettes), "--out", str(recorded),
                       env={"OPENAI_API_KEY": ENV_KEY})
    live = read_results(recorded).tasks[0]
    assert (live.outcome, live.counters.retries) == ("pass", 1), ran
    # The credentials really travelled, and the server really quoted them back.
    assert echo.seen[0] == {"authorization": "Basic " + base64.b64encode(f"{USER}:{URL_KEY}".encode()).decode(),
                            "api_key": QUERY_KEY}
    assert len(echo.seen) == live.counters.steps + 1
    recording = load(cassettes / f"{TASK}.cassette")
    assert recording.interactions[0].response.status == 401
    assert b"Incorrect API key provided: Bearer REDACTED" in recording.interactions[0].response.body
    assert recording.interactions[1].request.body.count(b"(account REDACTED, password REDACTED)") == 0
    assert b"(account REDACTED, password REDACTED)" in recording.interactions[2].request.body
    assert recording.interactions[1].response.headers["content-type"] == [
        "application/json; charset=utf-8; account=REDACTED"]
    job = json.loads((recorded / "work" / TASK / "job.json").read_bytes())
    assert job["base_url"] == f"http://{USER}:REDACTED@127.0.0.1:{echo.port}/v1?api_key=REDACTED"

    assert leaks(tmp_path) == []
    assert recording.header.settings is not None and recording.header.settings.max_retries == 1

    echo.close()  # replay needs no server, no key, no --model and no settings: the cassettes have them
    ran = run_endstate("eval", "--suite", str(TASKS), "--task", TASK, "--replay", str(cassettes), "--out",
                       str(replayed),
                       env={"OPENAI_API_KEY": ""})
    assert ran.code == 0, ran
    again = read_results(replayed)
    assert again.card.model == "openai-compatible/echo" and again.card.retry_ceiling == 1
    [task] = again.tasks
    assert (task.outcome, task.tree_hash, task.counters, task.unplayed) == (
        "pass", live.tree_hash, live.counters, 0), task
    assert leaks(tmp_path) == []
