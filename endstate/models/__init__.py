"""Provider adapters and the provider-neutral transcript they exchange.

    open_model("openai/gpt-4.1", settings=RunSettings())       -> Model
    check_spec("anthropic/claude-...", base_url=None, env=...)  the same checks, offline

Specs are `provider/model` with provider one of PROVIDERS. `scripted/<policy>`
models are served by a ScriptedServer and reached through the OpenAI adapter.
"""

from endstate.models._errors import ModelError
from endstate.models._local import MODEL_ALIAS, LocalModelServer, describe_exit
from endstate.models._ratelimit import RequestLimits
from endstate.models._secrets import SECRET_QUERY_KEYS, Scrubber, is_secret_query_key
from endstate.models._settings import CHANNEL_HEADER, TURN_HEADER, RunSettings, completion_headers
from endstate.models._spec import (
    PROVIDERS,
    SCRIPTED_POLICIES,
    SCRIPTED_PROVIDERS,
    WIRE_FORMATS,
    check_reachable,
    check_settings,
    check_spec,
    open_model,
    parse_spec,
    settings_for,
)
from endstate.models._types import Channel, Completion, Message, Model, Thinking, ToolCall, ToolSchema, Usage
from endstate.models._warm import warm_openai
from endstate.models.scripted import ACTION_FORMAT_HEADER, ScriptedServer

__all__ = [
    "Message",
    "ToolCall",
    "Thinking",
    "Usage",
    "Completion",
    "ToolSchema",
    "Model",
    "Channel",
    "ModelError",
    "RunSettings",
    "RequestLimits",
    "open_model",
    "parse_spec",
    "check_spec",
    "PROVIDERS",
    "ScriptedServer",
    "SCRIPTED_POLICIES",
    "SCRIPTED_PROVIDERS",
    "check_reachable",
    "check_settings",
    "settings_for",
    "WIRE_FORMATS",
    "CHANNEL_HEADER",
    "TURN_HEADER",
    "completion_headers",
    "Scrubber",
    "SECRET_QUERY_KEYS",
    "is_secret_query_key",
    "LocalModelServer",
    "describe_exit",
    "MODEL_ALIAS",
    "warm_openai",
    "ACTION_FORMAT_HEADER",
]
