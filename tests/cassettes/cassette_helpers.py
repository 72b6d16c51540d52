"""A tiny chat-completions server on 127.0.0.1, the real openai SDK, and cassette jobs.

The server answers each request from its last message, so answers are
deterministic; it also sends the headers real providers send that must never
reach a cassette (cookies, organisation, dates).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import openai
from loopback import QuietHandler, serve

from endstate.cassettes import FORMAT_VERSION, CassetteJob, Header

SECRET = "sk-test-SECRET123"
MODEL = "openai-compatible/tiny"
TASK = "demo-task"
TASK_HASH = "a" * 64


def header(model: str = "openai/m") -> Header:
    """A cassette header of stand-ins: no task or image is behind its hashes."""
    return Header(format_version=FORMAT_VERSION, endstate_version="0.1.0", model=model, task_id="t",
                  task_hash="h" * 64, image_id="sha256:i", created="2025-01-01T00:00:00Z")


def answer_for(request: dict[str, Any]) -> dict[str, Any]:
    last = request["messages"][-1]
    content = last.get("content") or ""
    message: dict[str, Any] = {"role": "assistant", "content": f"answer to: {content}"}
    if "call a tool" in content:
        message = {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "call_1", "type": "function",
                            "function": {"name": "bash", "arguments": json.dumps({"command": "ls"})}}],
        }
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1700000000,
        "model": request.get("model", "tiny"),
        "choices": [{"index": 0, "message": message,
                     "finish_reason": "tool_calls" if message.get("tool_calls") else "stop"}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8},
    }


class ChatServer:
    """`echo_key`: every answer also quotes the bearer key it was sent, as a careless server might."""

    def __init__(self, *, echo_key: bool = False) -> None:
        self.seen: list[dict[str, Any]] = []
        owner = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                owner.seen.append({"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()},
                                   "body": body})
                answer = answer_for(json.loads(body))
                if echo_key:
                    message = answer["choices"][0]["message"]
                    message["content"] = f"{message['content']} (your key: {self.headers['authorization'][7:]})"
                data = json.dumps(answer).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.send_header("set-cookie", f"session={SECRET}; Path=/")
                self.send_header("openai-organization", f"org-{SECRET}")
                self.send_header("x-request-id", "req-123")
                self.end_headers()
                self.wfile.write(data)

        self.httpd, self.thread = serve(Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/scripted/reference/{TASK}/v1"

    def stop(self) -> None:
        if self.thread.is_alive():
            self.httpd.shutdown()
            self.httpd.server_close()
            self.thread.join()


def client(url: str) -> openai.OpenAI:
    """The real SDK, with the key as api_key and again as an x-api-key header; no retries."""
    return openai.OpenAI(api_key=SECRET, base_url=url, max_retries=0, timeout=5,
                         default_headers={"x-api-key": SECRET})


def ask(sdk: openai.OpenAI, turn: int, content: str, *, channel: str = "agent",
        history: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """One non-streaming completion tagged like endstate's model adapter tags them; the raw answer."""
    messages = [{"role": "system", "content": "You fix code."}, *(history or []), {"role": "user", "content": content}]
    raw = sdk.chat.completions.with_raw_response.create(
        model="tiny", messages=messages, temperature=0,
        extra_headers={"X-Endstate-Channel": channel, "X-Endstate-Turn": str(turn)},
    )
    return json.loads(raw.content)


def job(path: Path, mode: str = "record", *, match: str = "strict", overwrite: bool = False,
        **header: Any) -> CassetteJob:
    fields = {"model": MODEL, "task_id": TASK, "task_hash": TASK_HASH, "image_id": "sha256:img",
              "endstate_version": "0.1.0", **header}
    return CassetteJob(mode=mode, path=str(path), match=match, header=fields, overwrite=overwrite)


PROMPTS = ["read calc.py", "call a tool please", "run the tests"]
