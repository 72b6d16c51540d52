"""SmolLM2's chat format: a tool's output must reach the model's prompt.

The rewrite is checked everywhere; the prompt rendered by llama-cpp-python's own
handler is checked where llama_cpp is installed (the local-model extra), and
`make test-live-model` (ENDSTATE_REQUIRE_LIVE_MODEL=1) turns its absence into a failure.
"""

from __future__ import annotations

import ast
import os
from typing import Any

import pytest

from endstate.models import _smollm2_server as chat
from endstate.models._local import CHAT_FORMAT, SERVER_SCRIPT, LocalModelServer

OUTPUT = "exit code: 1\nstdout:\nFAILED tests/test_lru.py::test_evicts_oldest - assert cache.get(\"a\") is None & 3 < 2\n"
TOOLS = [{"type": "function", "function": {"name": "bash", "description": "Run a command.",
                                          "parameters": {"type": "object", "properties": {"command": {"type": "string"}},
                                                         "required": ["command"]}}}]
MESSAGES = [
    {"role": "system", "content": "You are a software engineer."},
    {"role": "user", "content": "Fix the cache."},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_0", "type": "function", "function": {"name": "bash", "arguments": "{\"command\": \"pytest -q\"}"}}]},
    {"role": "tool", "tool_call_id": "call_0", "content": OUTPUT},
]


def test_tool_results_become_user_turns_naming_their_call() -> None:
    rewritten = chat.tool_results_as_user(MESSAGES)
    assert rewritten[:3] == MESSAGES[:3]
    assert rewritten[3] == {"role": "user", "content": f"Output of functions.bash (call call_0):\n{OUTPUT}"}
    parts = [{"role": "tool", "tool_call_id": "x", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}]
    assert chat.tool_results_as_user(parts)[0]["content"].endswith(":\nab")


def test_verbatim_marks_texts_and_arguments_safe_without_changing_them() -> None:
    pytest.importorskip("markupsafe")
    marked = chat.verbatim(chat.tool_results_as_user(MESSAGES))
    assert marked == chat.tool_results_as_user(MESSAGES)  # Markup is a str: same values
    assert all(hasattr(m["content"], "__html__") for m in marked if isinstance(m["content"], str))
    assert hasattr(marked[2]["tool_calls"][0]["function"]["arguments"], "__html__")
    assert MESSAGES[2]["tool_calls"][0]["function"]["arguments"].__class__ is str  # the input is not touched


def test_the_server_runs_through_the_script_which_needs_no_endstate() -> None:
    command = LocalModelServer(model_path=SERVER_SCRIPT).command()
    assert command[1] == str(SERVER_SCRIPT) and command[command.index("--chat_format") + 1] == CHAT_FORMAT
    assert CHAT_FORMAT == chat.CHAT_FORMAT
    tree = ast.parse(SERVER_SCRIPT.read_text())
    imported = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    imported += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert not [m for m in imported if m.startswith("endstate")]


class _RecordingLlama:
    """Stands in for llama_cpp.Llama: records each prompt, answers with a plain message."""

    verbose = False

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def create_completion(self, prompt: str, **kwargs: Any) -> dict:
        self.prompts.append(prompt)
        return {"id": "cmpl-0", "object": "text_completion", "created": 0, "model": "smollm2",
                "choices": [{"text": "message" if len(self.prompts) == 1 else "Fixed.", "index": 0,
                             "logprobs": None, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


@pytest.mark.live_model
def test_the_rendered_prompt_contains_the_tools_output() -> None:
    try:
        from llama_cpp import llama_chat_format
    except ImportError:
        if os.environ.get("ENDSTATE_REQUIRE_LIVE_MODEL") == "1":
            pytest.fail("ENDSTATE_REQUIRE_LIVE_MODEL=1 but llama_cpp is not installed", pytrace=False)
        pytest.skip("llama_cpp is not installed (the local-model extra)")
    chat.register(llama_chat_format)
    handler = llama_chat_format.get_chat_completion_handler(CHAT_FORMAT)
    llama = _RecordingLlama()
    handler(llama=llama, messages=MESSAGES, tools=TOOLS, tool_choice="auto")
    assert llama.prompts and all(OUTPUT in prompt for prompt in llama.prompts)
    assert "functions.bash:" in llama.prompts[0]  # the tools are still listed
    assert 'functions.bash:\n{"command": "pytest -q"}<|im_end|>' in llama.prompts[0]  # not HTML-escaped

    # The handler this replaces drops the output: the reason for this format.
    plain = _RecordingLlama()
    llama_chat_format.chatml_function_calling(llama=plain, messages=MESSAGES, tools=TOOLS, tool_choice="auto")
    assert OUTPUT not in plain.prompts[0]
