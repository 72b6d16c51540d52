"""Model specs (`provider/model`) and opening a model from a spec.

Everything that can be wrong with a spec is found by `check_spec` without
touching the network, so the CLI refuses a bad `--model` before any container
starts. `open_model` repeats those checks and builds the adapter.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable, Mapping
from urllib.parse import urlsplit

import msgspec

from endstate.errors import ModelSpecError
from endstate.models._ratelimit import RequestLimits
from endstate.models._settings import RunSettings
from endstate.models._types import Model

__all__ = [
    "PROVIDERS",
    "SCRIPTED_POLICIES",
    "SCRIPTED_PROVIDERS",
    "WIRE_FORMATS",
    "check_reachable",
    "check_settings",
    "parse_spec",
    "settings_for",
    "check_spec",
    "open_model",
]

#: Every provider a spec may name, in the order they are listed to users.
PROVIDERS: tuple[str, ...] = ("openai", "anthropic", "openai-compatible", "openai-responses", "scripted",
                              "scripted-anthropic", "scripted-responses")

#: The providers served by the local ScriptedServer: the control arms through the chat-completions
#: wire format (openai SDK), the Messages API (anthropic SDK) and the Responses API (openai SDK).
SCRIPTED_PROVIDERS: tuple[str, ...] = ("scripted", "scripted-anthropic", "scripted-responses")

#: The control arms `scripted/<policy>` may name.
SCRIPTED_POLICIES: tuple[str, ...] = ("null", "reference", "wasteful", "hacks")

#: The wire format each provider speaks, by the name a user knows it by: what an installed agent
#: must speak too, and what a fork's prefix must have been recorded in.
WIRE_FORMATS: dict[str, str] = {
    "openai": "Chat Completions",
    "openai-compatible": "Chat Completions",
    "scripted": "Chat Completions",
    "anthropic": "the Messages API",
    "scripted-anthropic": "the Messages API",
    "openai-responses": "the Responses API",
    "scripted-responses": "the Responses API",
}

# The settings only one wire format sends, and the one that does: elsewhere they would do nothing.
_SETTING_WIRE: dict[str, tuple[str, str]] = {
    "thinking_budget": ("the Messages API", "Anthropic extended thinking"),
    "prompt_cache": ("the Messages API", "Anthropic prompt caching (OpenAI caches prompts by itself)"),
}

# The environment variable holding each provider's key; None: no key needed.
_KEY_ENV: dict[str, str | None] = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "openai-compatible": None,
    "openai-responses": "OPENAI_API_KEY",
    "scripted": None,
    "scripted-anthropic": None,
    "scripted-responses": None,
}

# Local servers (vLLM, Ollama, llama.cpp) accept any key, but the SDK insists on one.
_PLACEHOLDER_KEY = "not-needed"

_EXAMPLES = ("openai/gpt-4.1, anthropic/claude-sonnet-4-5, openai-responses/o4-mini, "
             "openai-compatible/<model> --base-url URL, scripted/reference")


def parse_spec(spec: str) -> tuple[str, str]:
    """Split `provider/model` into its two parts; the model may itself hold slashes.

    Raises ModelSpecError, listing the known providers, for a malformed spec or an
    unknown provider, and listing the policies for an unknown `scripted/` policy.
    """
    provider, slash, model = spec.partition("/")
    if not slash or not provider or not model.strip("/") or any(c.isspace() for c in spec):
        raise ModelSpecError(
            f"model spec {spec!r} is not provider/model: known providers are "
            f"{', '.join(PROVIDERS)} (e.g. {_EXAMPLES})"
        )
    if provider not in PROVIDERS:
        raise ModelSpecError(
            f"model spec {spec!r} names unknown provider {provider!r}: known providers are "
            f"{', '.join(PROVIDERS)} (e.g. {_EXAMPLES})"
        )
    if provider in SCRIPTED_PROVIDERS and model not in SCRIPTED_POLICIES and not (model.startswith("hack.") and len(model) > 5):
        raise ModelSpecError(
            f"model spec {spec!r} names unknown scripted policy {model!r}: known policies are "
            f"{', '.join(SCRIPTED_POLICIES)}, hack.<name> (a task's live hack)"
        )
    return provider, model


def check_spec(spec: str, base_url: str | None = None, env: Mapping[str, str] | None = None) -> tuple[str, str]:
    """Everything `open_model` would refuse, checked offline. Returns (provider, model).

    `env` defaults to the process environment. A scripted spec needs no base URL
    here: the runner starts the scripted server and supplies it when opening.
    """
    provider, model = parse_spec(spec)
    if provider in SCRIPTED_PROVIDERS and base_url is not None:  # the run serves it itself: the URL would be ignored
        raise ModelSpecError(f"--base-url {base_url} would do nothing: {spec} is served by endstate itself; "
                             "drop --base-url (it is for openai-compatible/... and a gateway of your own)")
    _check_base_url(spec, provider, base_url, require_for_scripted=False)
    _api_key(spec, provider, os.environ if env is None else env, explicit=None)
    return provider, model


def check_settings(spec: str, settings: RunSettings) -> None:
    """Refuse a run setting the spec's provider never sends: it would be pinned on the run card
    and in every cassette as if it had been applied. ModelSpecError names the option."""
    provider, _ = parse_spec(spec)
    wire = WIRE_FORMATS[provider]
    for field, (needs, what) in _SETTING_WIRE.items():
        if getattr(settings, field) is not msgspec.UNSET and wire != needs:
            raise ModelSpecError(f"--{field.replace('_', '-')} is {what}, sent only over {needs} "
                                 f"(anthropic/...); {spec} speaks {wire}, so it would do nothing: drop it")
    if settings.reasoning_effort is not msgspec.UNSET and wire == "the Messages API":
        raise ModelSpecError(f"--reasoning-effort is sent only to OpenAI's APIs; {spec} speaks {wire}, so it "
                             "would do nothing: drop it (for Anthropic, --thinking-budget N turns on thinking)")


def settings_for(spec: str, settings: RunSettings) -> RunSettings:
    """`settings` without those the spec's provider never sends (`check_settings` refuses them when a
    user passes them): a fork onto another provider takes the rest of its parent's settings."""
    wire = WIRE_FORMATS[parse_spec(spec)[0]]
    unused = [field for field, (needs, _) in _SETTING_WIRE.items() if wire != needs]
    if wire == "the Messages API":
        unused.append("reasoning_effort")
    return msgspec.structs.replace(settings, **{field: msgspec.UNSET for field in unused})


def check_reachable(spec: str, base_url: str, *, timeout: float = 3.0) -> None:
    """Refuse, before any container starts, a base URL where nothing accepts connections."""
    url = urlsplit(base_url)
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        with socket.create_connection((url.hostname or "localhost", port), timeout=timeout):
            pass
    except OSError as exc:
        from endstate.models._local import server_exit
        from endstate.models._secrets import Scrubber

        died = server_exit(base_url, wait_s=0)
        if died:
            raise ModelSpecError(f"{spec}: {died}: start it again (`endstate serve-local --port {port}`)") from None
        raise ModelSpecError(
            f"{spec}: nothing answers at {Scrubber().url(base_url)} ({exc.strerror or exc}): start the server "
            "(for SmolLM2: `endstate serve-local`) or fix --base-url"
        ) from None


def open_model(
    spec: str,
    *,
    settings: RunSettings,
    base_url: str | None = None,
    extra_headers: Mapping[str, str] | None = None,
    api_key: str | None = None,
    env: Mapping[str, str] | None = None,
    limits: RequestLimits | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> Model:
    """Build the adapter for `spec`. No request is made until `complete`.

    `api_key` overrides the environment. `extra_headers` go on every request
    (gateways that want their own headers). `limits` are the run's request ceiling and
    rate-limit waits; `sleep` is how they wait (a replay passes one that does not).
    Raises ModelSpecError as `check_spec`.
    """
    provider, model = parse_spec(spec)
    _check_base_url(spec, provider, base_url, require_for_scripted=True)
    key = _api_key(spec, provider, os.environ if env is None else env, explicit=api_key)
    # Imported here so that checking a spec does not pay for loading an SDK.
    if provider in ("anthropic", "scripted-anthropic"):
        from endstate.models._anthropic import AnthropicModel

        return AnthropicModel(
            spec, model=model, settings=settings, api_key=key, base_url=base_url, extra_headers=extra_headers,
            provider=provider, limits=limits, sleep=sleep,
        )
    from endstate.models._openai import OpenAIChatModel
    from endstate.models._responses import OpenAIResponsesModel

    adapter = OpenAIResponsesModel if provider in ("openai-responses", "scripted-responses") else OpenAIChatModel
    return adapter(
        spec,
        provider=provider,
        model=model,
        settings=settings,
        api_key=key,
        base_url=base_url,
        extra_headers=extra_headers,
        limits=limits,
        sleep=sleep,
    )


def _check_base_url(spec: str, provider: str, base_url: str | None, *, require_for_scripted: bool) -> None:
    if base_url is not None and not base_url.startswith(("http://", "https://")):
        raise ModelSpecError(f"base URL {base_url!r} for {spec} must start with http:// or https://")
    if provider == "openai-compatible" and not base_url:
        raise ModelSpecError(
            f"{spec} needs --base-url: the server's OpenAI-compatible API root, e.g. http://127.0.0.1:8000/v1"
        )
    if provider in SCRIPTED_PROVIDERS and require_for_scripted and not base_url:
        raise ModelSpecError(
            f"{spec} is served by a local ScriptedServer: start one and pass "
            f"base_url=server.base_url_for(policy, task_id)"
        )


def _api_key(spec: str, provider: str, env: Mapping[str, str], *, explicit: str | None) -> str:
    if provider in SCRIPTED_PROVIDERS:
        # The scripted server needs no key; never hand it the user's real one.
        return _PLACEHOLDER_KEY
    if explicit:
        return explicit
    name = _KEY_ENV[provider]
    if name is None:
        return env.get("OPENAI_API_KEY") or _PLACEHOLDER_KEY
    key = env.get(name)
    if not key:
        raise ModelSpecError(f"{spec} needs an API key: set the environment variable {name}")
    return key
