"""Agent files for programs (npm packages, Debian's Node): decoded, and started as a command line."""

from __future__ import annotations

import shlex

import msgspec

from endstate.agents import find_agent
from endstate.agents._run import PLACEHOLDER_KEY, PROXY_PORT, agent_command


def test_the_shipped_claude_code_file_is_pinned_and_a_program():
    spec = find_agent("claude-code")
    assert spec is not None and spec.id.startswith("claude-code@")
    assert spec.install.npm == ("@anthropic-ai/claude-code@2.1.197",) and spec.install.debian == ("nodejs",)
    assert spec.run.program == "claude" and not spec.run.module and not spec.install.requirements
    assert {"DISABLE_TELEMETRY", "DISABLE_AUTOUPDATER", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"} <= set(spec.run.env)


def test_a_program_starts_from_the_npm_bin_with_prompt_model_and_proxy_substituted():
    spec = find_agent("claude-code")
    line = agent_command(spec, prompt="fix it; don't `rm`", model_name="null", max_steps=7)
    words = shlex.split(line.split("exec ", 1)[1])
    assert words[0] == "env"
    env = dict(w.split("=", 1) for w in words[1:] if "=" in w and not w.startswith("-") and w.isascii()
               and w.split("=", 1)[0].isupper())
    assert env["ANTHROPIC_BASE_URL"] == f"http://127.0.0.1:{PROXY_PORT}/v1"
    assert env["ANTHROPIC_API_KEY"] == PLACEHOLDER_KEY and env["ANTHROPIC_MODEL"] == "null"
    assert env["ANTHROPIC_SMALL_FAST_MODEL"] == "null"
    argv = words[1 + len(env):]
    assert argv[0] == "/opt/endstate/agents/claude-code/npm/node_modules/.bin/claude"
    assert argv[1:3] == ["-p", "fix it; don't `rm`"] and argv[argv.index("--max-turns") + 1] == "7"


def test_codex_runs_its_native_binary_with_the_proxy_as_its_configured_provider():
    spec = find_agent("codex")
    assert spec is not None and spec.install.npm == ("@openai/codex@0.171.0-linux-x64",) and not spec.install.debian
    line = agent_command(spec, prompt="fix {it}", model_name="reference", max_steps=7)
    argv = shlex.split(line.split("exec ", 1)[1])
    binary = argv.index(spec.run.program)
    args = argv[binary + 1:]
    assert args[0] == "exec" and args[-1] == "fix {it}" and args[args.index("-m") + 1] == "reference"
    assert "--dangerously-bypass-approvals-and-sandbox" in args
    config = [args[i + 1] for i, a in enumerate(args) if a == "-c"]
    assert f"model_providers.endstate.base_url=http://127.0.0.1:{PROXY_PORT}/v1" in config
    assert {"model_provider=endstate", "model_providers.endstate.wire_api=responses",
            "check_for_update_on_startup=false", "analytics.enabled=false"} <= set(config)
    assert f"OPENAI_API_KEY={PLACEHOLDER_KEY}" in argv[:binary]


def test_the_transcript_reads_text_and_tool_calls_from_streamed_messages_and_responses():
    from endstate.agents._proxy import answer_documents
    from endstate.agents._run import _said
    from endstate.models.scripted._messages import messages_answer
    from endstate.models.scripted._responses import responses_answer
    from endstate.models.scripted._sse import stream_events

    message = {"role": "assistant", "content": "Step 1 of 2: Bash.", "tool_calls": [
        {"id": "call_0", "type": "function", "function": {"name": "Bash", "arguments": '{"command": "ls -la /workspace"}'}}]}
    where = {"policy": "reference", "task_id": "t", "channel": "agent", "turn": 0}
    messages = messages_answer({"messages": []}, message, **where)
    responses = responses_answer({"input": []}, message, **where)
    for wire, answer in (("messages", messages), ("responses", responses)):
        said = "".join(_said(d) for d in answer_documents(stream_events(wire, answer)))
        assert said.startswith("Step 1 of 2: Bash.\n[") and "Bash]" in said, (wire, said)
        assert said.replace(" ", "").endswith('{"command":"ls-la/workspace"}'), (wire, said)
    assert "".join(_said(d) for d in answer_documents(msgspec.json.encode(messages))).startswith("Step 1 of 2: Bash.\n[tool_use Bash]")
