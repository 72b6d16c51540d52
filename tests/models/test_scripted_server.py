"""The scripted control arms, end to end through the real openai SDK and httpx2."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import httpx2
import pytest

from endstate.models import Message, ModelError, ScriptedServer, ToolCall, ToolSchema, open_model
from endstate.models._spec import SCRIPTED_POLICIES
from endstate.models.scripted import POLICIES

TASK = "demo-task"
BASH = ToolSchema(name="bash", description="run a command", parameters={"type": "object"})


def _post(url: str, body: object, **headers: str) -> httpx2.Response:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return httpx2.post(url, content=data, headers={"Content-Type": "application/json", **headers}, timeout=5)


def _play(model, turns: int) -> list:
    """Drive the model like the agent loop would, feeding back dummy tool results."""
    messages = [Message(role="system", content="You are a coding agent."), Message(role="user", content="Fix add().")]
    completions = []
    for turn in range(turns):
        completion = model.complete(messages, [BASH], channel="agent", turn=turn)
        completions.append(completion)
        messages.append(completion.message)
        for call in completion.message.tool_calls:
            messages.append(Message(role="tool", content="ok", tool_call_id=call.id))
    return completions


def test_policy_names_match_the_spec_parser():
    assert tuple(POLICIES) == SCRIPTED_POLICIES


def test_reference_plays_the_steps_in_order(scripted, fast):
    model = open_model("scripted/reference", settings=fast, base_url=scripted.base_url_for("reference", TASK))
    try:
        first, second, third, after = _play(model, 4)
    finally:
        model.close()
    assert first.message.content == "Reading the code."
    assert first.message.tool_calls == (ToolCall(id="call_0_0", name="read_file", arguments='{"path": "calc.py"}'),)
    assert first.finish_reason == "tool_calls"
    assert second.message.content == ""
    assert second.message.tool_calls == (
        ToolCall(id="call_1_0", name="edit_file", arguments='{"new": "a + b", "old": "a - b", "path": "calc.py"}'),
        ToolCall(id="call_1_1", name="bash", arguments='{"command": "python -m pytest -q", "timeout": 60}'),
    )
    assert third.message == Message(role="assistant", content="Fixed add().")
    assert third.finish_reason == "stop"
    # Past the last step the model is done.
    assert after.message == Message(role="assistant", content="Done.")
    assert all(c.retries == 0 for c in (first, second, third, after))


def test_usage_is_a_deterministic_estimate(scripted, fast):
    model = open_model("scripted/reference", settings=fast, base_url=scripted.base_url_for("reference", TASK))
    messages = [Message(role="user", content="Fix add().")]
    try:
        completion = model.complete(messages, [], channel="agent", turn=2)
    finally:
        model.close()
    sent = [{"role": "user", "content": "Fix add()."}]
    answered = {"role": "assistant", "content": "Fixed add()."}
    canonical = dict(sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert completion.usage.input_tokens == math.ceil(len(json.dumps(sent, **canonical)) / 4)
    assert completion.usage.output_tokens == math.ceil(len(json.dumps(answered, **canonical)) / 4)


def test_compaction_channel_answers_the_summary(scripted, fast):
    model = open_model("scripted/reference", settings=fast, base_url=scripted.base_url_for("reference", TASK))
    try:
        completion = model.complete([Message(role="user", content="Summarise.")], [], channel="compaction", turn=1)
    finally:
        model.close()
    assert completion.message == Message(role="assistant", content="Read calc.py and fixed add().")


def test_null_answers_done_without_tool_calls(scripted, fast):
    model = open_model("scripted/null", settings=fast, base_url=scripted.base_url_for("null", TASK))
    try:
        (completion,) = _play(model, 1)
    finally:
        model.close()
    assert completion.message == Message(role="assistant", content="Done.")
    assert completion.finish_reason == "stop"


def test_turn_header_selects_the_step(scripted):
    url = scripted.base_url_for("reference", TASK) + "/chat/completions"
    body = {"model": "reference", "messages": []}
    step1 = _post(url, body, **{"X-Endstate-Channel": "agent", "X-Endstate-Turn": "1"}).json()
    assert [c["id"] for c in step1["choices"][0]["message"]["tool_calls"]] == ["call_1_0", "call_1_1"]
    missing = _post(url, body, **{"X-Endstate-Channel": "agent"})
    assert missing.status_code == 400 and "X-Endstate-Turn" in missing.json()["error"]["message"]


def test_responses_are_byte_identical_across_runs_and_servers(tasks_root):
    body = {"model": "reference", "messages": [{"role": "user", "content": "Fix add()."}]}
    headers = {"X-Endstate-Channel": "agent", "X-Endstate-Turn": "1"}
    answers = []
    for _ in range(2):
        with ScriptedServer(tasks_root) as server:
            url = server.base_url_for("reference", TASK) + "/chat/completions"
            for _ in range(2):
                response = _post(url, body, **headers)
                assert response.status_code == 200
                answers.append((response.content, sorted(response.headers.items())))
    assert all(answer == answers[0] for answer in answers)
    assert "date" not in dict(answers[0][1])
    payload = json.loads(answers[0][0])
    assert payload["created"] == 0 and payload["object"] == "chat.completion"
    assert payload["usage"]["total_tokens"] == payload["usage"]["prompt_tokens"] + payload["usage"]["completion_tokens"]


def test_unknown_task_or_policy_is_404(scripted, fast):
    for policy, task in [("reference", "no-such-task"), ("oracle", TASK), ("reference", "..")]:
        response = _post(f"{scripted.base_url}/scripted/{policy}/{task}/v1/chat/completions", {"messages": []})
        assert response.status_code == 404, (policy, task)
        assert "error" in response.json()
    model = open_model("scripted/reference", settings=fast, base_url=scripted.base_url_for("reference", "no-such-task"))
    try:
        with pytest.raises(ModelError) as info:
            model.complete([Message(role="user", content="hi")], [], channel="agent", turn=0)
    finally:
        model.close()
    assert info.value.status == 404
    assert "HTTP 404" in str(info.value) and "no-such-task" in str(info.value)


def test_malformed_request_is_400(scripted):
    url = scripted.base_url_for("reference", TASK) + "/chat/completions"
    assert _post(url, b"{not json", **{"X-Endstate-Turn": "0"}).status_code == 400
    assert _post(url, {"no": "messages"}, **{"X-Endstate-Turn": "0"}).status_code == 400
    assert _post(url, {"messages": []}, **{"X-Endstate-Channel": "other", "X-Endstate-Turn": "0"}).status_code == 400
    assert _post(url, {"messages": []}, **{"X-Endstate-Turn": "-1"}).status_code == 400


def test_a_task_without_reference_is_refused_clearly(tasks_root, make_task):
    make_task(tasks_root, "no-reference")
    (tasks_root / "no-reference" / "reference.toml").unlink()
    with ScriptedServer(tasks_root) as server:
        url = server.base_url_for("reference", "no-reference") + "/chat/completions"
        response = _post(url, {"messages": []}, **{"X-Endstate-Turn": "0"})
    assert response.status_code == 422
    assert "reference.toml" in response.json()["error"]["message"]


def test_nothing_secret_is_echoed(scripted):
    secret = "sk-very-secret-value"
    for path in (scripted.base_url_for("reference", TASK), scripted.base_url_for("reference", "missing")):
        response = _post(
            path + "/chat/completions",
            {"messages": [{"role": "user", "content": "hi"}]},
            Authorization=f"Bearer {secret}",
            **{"X-Endstate-Turn": "0", "api-key": secret},
        )
        assert secret not in response.text
        assert all(secret not in value for value in response.headers.values())


def test_the_server_needs_starting(tasks_root):
    server = ScriptedServer(tasks_root)
    with pytest.raises(RuntimeError, match="start"):
        server.base_url_for("null", TASK)
    server.close()  # closing a server never started is harmless


def test_runs_standalone_and_prints_its_base_url(tasks_root):
    process = subprocess.Popen(
        [sys.executable, "-m", "endstate.models.scripted", "--tasks", str(tasks_root), "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        base_url = process.stdout.readline().strip()
        assert base_url.startswith("http://127.0.0.1:")
        response = _post(f"{base_url}/scripted/null/{TASK}/v1/chat/completions", {"messages": []})
        assert response.json()["choices"][0]["message"]["content"] == "Done."
    finally:
        process.terminate()
        process.wait(timeout=10)
        process.stdout.close()


def test_a_client_that_hangs_up_mid_request_leaves_no_traceback(scripted, capfd):
    import socket

    httpd = scripted._httpd
    for request in (b"POST /v1/chat/completions HTTP/1.1\r\nContent-Length: 100\r\n\r\n{\"mod",  # cut in the body
                    b"POST /v1/chat/completions HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}"):  # gone before the answer
        ours, theirs = socket.socketpair()
        theirs.sendall(request)
        theirs.close()  # the answer can only meet a closed peer: EPIPE
        httpd.process_request_thread(ours, ("127.0.0.1", 0))  # the server's own path for a connection, here in this thread
    assert capfd.readouterr().err == ""

    broken = socket.socket()
    broken.close()  # not a hang-up: reading from it is a fault of the server's, told in one line
    httpd.process_request_thread(broken, ("127.0.0.1", 0))
    err = capfd.readouterr().err
    assert err.startswith("scripted server: a request from 127.0.0.1 failed: OSError") and err.count("\n") == 1, err
