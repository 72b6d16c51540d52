"""Provider adapters and the provider-neutral transcript they exchange.

    open_model("openai/gpt-4.1", settings=RunSettings())       -> Model
    check_spec("anthropic/claude-...", base_url=None, env=...)  the same checks, offline

Specs are `provider/model` with provider one of PROVIDERS. `scripted/<policy>`
models are served by a ScriptedServer and reached through the OpenAI adapter.
"""

from endstate.models._errors import ModelError
from endstate.models._settings import RunSettings
from endstate.models._spec import PROVIDERS, check_spec, open_model, parse_spec
from endstate.models._types import Channel, Completion, Message, Model, ToolCall, ToolSchema, Usage
from endstate.models.scripted import ScriptedServer

__all__ = [
    "Message",
    "ToolCall",
    "Usage",
    "Completion",
    "ToolSchema",
    "Model",
    "Channel",
    "ModelError",
    "RunSettings",
    "open_model",
    "parse_spec",
    "check_spec",
    "PROVIDERS",
    "ScriptedServer",
]
