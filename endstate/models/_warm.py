"""One request through the OpenAI adapter against an in-memory transport.

The SDK imports its chat resources and builds parts of its models on the first request
(about 90 ms). The runner's fork server calls `warm_openai` once (see
endstate.run._forkserver_warm), so that work is done there and every agent worker
forked from it starts warm. Nothing leaves the process: the transport answers in memory.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from endstate.models._types import ToolSchema

__all__ = ["warm_openai"]

_ANSWER = {
    "id": "warm-up", "object": "chat.completion", "created": 0, "model": "warm-up",
    "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
        "role": "assistant", "content": None,
        "tool_calls": [{"id": "call-0", "type": "function", "function": {"name": "bash", "arguments": "{}"}}]}}],
    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
}


def warm_openai(tools: list[ToolSchema]) -> bool:
    """Make one in-memory request through the adapter, offering `tools` (the agent's);
    whether it went through."""
    import httpx2

    from endstate.models._openai import OpenAIChatModel
    from endstate.models._settings import RunSettings
    from endstate.models._types import Message

    model = OpenAIChatModel("warm-up/warm-up", provider="openai-compatible", model="warm-up",
                            settings=RunSettings(max_retries=0), api_key="warm-up",
                            base_url="http://warm-up.invalid/v1")
    try:
        model._http._transport = httpx2.MockTransport(lambda request: httpx2.Response(200, json=_ANSWER))  # noqa: SLF001
        completion = model.complete([Message("system", "warm-up"), Message("user", "warm-up")], tools,
                                    channel="agent", turn=0)
        return bool(completion.message.tool_calls)
    finally:
        model.close()
