"""llama-cpp-python's OpenAI-compatible server, with a chat format whose prompt shows tool results.

Run by file path with the Python that has llama_cpp (which need not have endstate):

    python .../endstate/models/_smollm2_server.py --chat_format endstate-chatml-tools --model ...

Why: llama-cpp-python's `chatml-function-calling` format (0.3.36) lists the tools
and constrains each call's arguments to its JSON schema, but its template has no
branch for messages of role "tool": a tool result renders as an empty
`<|im_start|>tool` header, so the model never sees what its own tools printed. The
format registered here hands that handler the same conversation with each tool
result rewritten as a user turn that names the call it answers, so the output
reaches the prompt and everything else (tool list, grammar, parsing) is unchanged.
That template also HTML-escapes what it renders (jinja's autoescape is on for
template strings), so `"` would reach the model as `&#34;`: texts and call arguments
are passed as markupsafe.Markup, which jinja renders as they are.

This file imports nothing from endstate, so it runs under any interpreter that has
llama_cpp; `LocalModelServer` starts it.
"""

from __future__ import annotations

import sys
from typing import Any

CHAT_FORMAT = "endstate-chatml-tools"


def tool_results_as_user(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The conversation with every tool message turned into a user message carrying its output."""
    names = {}
    for message in messages:
        for call in message.get("tool_calls") or ():
            names[call.get("id")] = (call.get("function") or {}).get("name", "tool")
    rewritten = []
    for message in messages:
        if message.get("role") != "tool":
            rewritten.append(message)
            continue
        call_id = message.get("tool_call_id", "")
        content = message.get("content") or ""
        if not isinstance(content, str):  # a list of content parts
            content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
        rewritten.append({"role": "user",
                          "content": f"Output of functions.{names.get(call_id, 'tool')} (call {call_id}):\n{content}"})
    return rewritten


def verbatim(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Texts and tool-call arguments marked safe, so an autoescaping template renders them unchanged."""
    from markupsafe import Markup  # jinja2's own dependency, so wherever llama_cpp is

    marked = []
    for message in messages:
        message = dict(message)
        if isinstance(message.get("content"), str):
            message["content"] = Markup(message["content"])
        if message.get("tool_calls"):
            message["tool_calls"] = [
                {**call, "function": {**call["function"], "arguments": Markup(call["function"].get("arguments", ""))}}
                for call in message["tool_calls"]]
        marked.append(message)
    return marked


def register(formats: Any) -> None:
    """Register CHAT_FORMAT with llama_cpp.llama_chat_format (passed in, so tests can use the real one)."""

    def handler(llama: Any, messages: list[dict[str, Any]], **kwargs: Any) -> Any:
        return formats.chatml_function_calling(llama, verbatim(tool_results_as_user(messages)), **kwargs)

    formats.register_chat_completion_handler(CHAT_FORMAT)(handler)


def main() -> None:
    # Run as a script, this file's folder heads sys.path; endstate's private modules must not shadow anything.
    if sys.path and sys.path[0] and __file__.startswith(sys.path[0]):
        sys.path.pop(0)
    from llama_cpp import llama_chat_format
    from llama_cpp.server.__main__ import main as serve

    register(llama_chat_format)
    serve()


if __name__ == "__main__":
    main()
