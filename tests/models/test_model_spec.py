"""Model specs, settings and the public names of endstate.models: all offline."""

from __future__ import annotations

import msgspec
import pytest

import endstate.models
from endstate.errors import ModelSpecError, UserError
from endstate.models import PROVIDERS, RunSettings, check_spec, open_model, parse_spec

KEYS = {"OPENAI_API_KEY": "sk-test-openai", "ANTHROPIC_API_KEY": "sk-ant-test"}


def test_public_names_are_exactly_these():
    assert sorted(endstate.models.__all__) == sorted(
        [
            "Message", "ToolCall", "Usage", "Completion", "ToolSchema", "Model", "Channel",
            "ModelError", "RunSettings", "open_model", "parse_spec", "check_spec", "PROVIDERS",
            "ScriptedServer", "SCRIPTED_POLICIES", "check_reachable", "CHANNEL_HEADER", "TURN_HEADER",
            "completion_headers", "Scrubber", "SECRET_QUERY_KEYS", "is_secret_query_key", "LocalModelServer",
            "describe_exit", "MODEL_ALIAS", "warm_openai", "ACTION_FORMAT_HEADER", "Thinking", "RequestLimits",
            "SCRIPTED_PROVIDERS", "check_settings", "WIRE_FORMATS", "settings_for",
        ]
    )
    for name in endstate.models.__all__:
        assert hasattr(endstate.models, name)


def test_importing_the_package_loads_no_sdk():
    import subprocess
    import sys

    code = "import sys, endstate.models; print('openai' in sys.modules, 'anthropic' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("openai/gpt-4.1-2025-04-14", ("openai", "gpt-4.1-2025-04-14")),
        ("anthropic/claude-sonnet-4-5", ("anthropic", "claude-sonnet-4-5")),
        ("openai-compatible/meta-llama/Llama-3.1-8B", ("openai-compatible", "meta-llama/Llama-3.1-8B")),
        ("scripted/null", ("scripted", "null")),
        ("scripted/reference", ("scripted", "reference")),
    ],
)
def test_parse_spec_splits_at_the_first_slash(spec, expected):
    assert parse_spec(spec) == expected


def test_providers_are_the_seven_known_ones():
    assert PROVIDERS == ("openai", "anthropic", "openai-compatible", "openai-responses", "scripted",
                         "scripted-anthropic", "scripted-responses")


@pytest.mark.parametrize("spec", ["gpt-4", "openai/", "/gpt-4", "", "openai/gpt 4", "openai"])
def test_malformed_spec_lists_known_providers(spec):
    with pytest.raises(ModelSpecError) as info:
        parse_spec(spec)
    message = str(info.value)
    assert "provider/model" in message
    for provider in PROVIDERS:
        assert provider in message


def test_unknown_provider_is_named_and_known_ones_listed():
    with pytest.raises(ModelSpecError) as info:
        parse_spec("mistral/large")
    message = str(info.value)
    assert "'mistral'" in message
    for provider in PROVIDERS:
        assert provider in message


def test_unknown_scripted_policy_lists_policies():
    with pytest.raises(ModelSpecError, match="null, reference"):
        parse_spec("scripted/oracle")


def test_spec_errors_are_user_errors():
    with pytest.raises(UserError):
        parse_spec("nope")


@pytest.mark.parametrize(
    ("spec", "variable"),
    [("openai/gpt-4.1", "OPENAI_API_KEY"), ("anthropic/claude-sonnet-4-5", "ANTHROPIC_API_KEY")],
)
def test_missing_key_names_the_environment_variable(spec, variable):
    with pytest.raises(ModelSpecError, match=variable):
        check_spec(spec, None, {})
    with pytest.raises(ModelSpecError, match=variable):
        check_spec(spec, None, {variable: ""})
    assert check_spec(spec, None, {variable: "k"}) == parse_spec(spec)


def test_check_spec_reads_the_process_environment_by_default(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(ModelSpecError, match="ANTHROPIC_API_KEY"):
        check_spec("anthropic/claude-sonnet-4-5")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-x")
    assert check_spec("anthropic/claude-sonnet-4-5") == ("anthropic", "claude-sonnet-4-5")


def test_openai_compatible_needs_a_base_url_but_no_key():
    with pytest.raises(ModelSpecError, match="--base-url"):
        check_spec("openai-compatible/qwen", None, {})
    assert check_spec("openai-compatible/qwen", "http://127.0.0.1:8000/v1", {}) == ("openai-compatible", "qwen")


def test_base_url_must_be_http():
    with pytest.raises(ModelSpecError, match="http"):
        check_spec("openai-compatible/qwen", "127.0.0.1:8000/v1", {})


def test_scripted_needs_no_key_and_no_base_url_at_check_time():
    assert check_spec("scripted/reference", None, {}) == ("scripted", "reference")


@pytest.mark.parametrize("spec", ["scripted/null", "scripted-anthropic/reference", "scripted-responses/reference"])
def test_a_base_url_for_a_scripted_arm_is_refused_not_ignored(spec):
    with pytest.raises(ModelSpecError, match=rf"^--base-url http://127.0.0.1:8000/v1 would do nothing: {spec} is "
                                             r"served by endstate itself; drop --base-url"):
        check_spec(spec, "http://127.0.0.1:8000/v1", {})


def test_opening_scripted_without_a_server_says_how(fast):
    with pytest.raises(ModelSpecError, match="ScriptedServer"):
        open_model("scripted/null", settings=fast)


def test_open_model_refuses_what_check_spec_refuses(fast):
    with pytest.raises(ModelSpecError, match="OPENAI_API_KEY"):
        open_model("openai/gpt-4.1", settings=fast, env={})
    with pytest.raises(ModelSpecError, match="known providers"):
        open_model("bogus/x", settings=fast, env=KEYS)


def test_explicit_api_key_stands_in_for_the_environment(fast):
    model = open_model("anthropic/claude-sonnet-4-5", settings=fast, api_key="sk-ant-given", env={})
    try:
        assert model.spec == "anthropic/claude-sonnet-4-5"
    finally:
        model.close()


def test_open_model_builds_the_right_adapter(fast):
    from endstate.models._anthropic import AnthropicModel
    from endstate.models._openai import OpenAIChatModel

    openai_model = open_model("openai/gpt-4.1", settings=fast, env=KEYS)
    compat = open_model("openai-compatible/qwen", settings=fast, base_url="http://127.0.0.1:9/v1", env={})
    claude = open_model("anthropic/claude-sonnet-4-5", settings=fast, env=KEYS)
    try:
        assert isinstance(openai_model, OpenAIChatModel) and openai_model.provider == "openai"
        assert isinstance(compat, OpenAIChatModel) and compat.base_url.startswith("http://127.0.0.1:9/v1")
        assert isinstance(claude, AnthropicModel)
    finally:
        for model in (openai_model, compat, claude):
            model.close()


def test_run_settings_defaults_and_validation():
    settings = RunSettings()
    assert (settings.temperature, settings.seed, settings.max_retries) == (0.0, 0, 0)
    assert (settings.timeout_s, settings.max_output_tokens, settings.tool_choice) == (120, 2048, "auto")
    with pytest.raises(AttributeError):
        settings.temperature = 1.0  # frozen
    with pytest.raises(ValueError, match="max_retries"):
        RunSettings(max_retries=-1)
    with pytest.raises(ValueError, match="timeout_s"):
        RunSettings(timeout_s=0)


def test_a_fork_onto_another_provider_leaves_the_settings_it_never_sends_behind():
    from endstate.models import check_settings, settings_for

    parent = RunSettings(thinking_budget=1024, max_output_tokens=4096, prompt_cache=True, temperature=0.5)
    onto_gpt = settings_for("openai/gpt-4.1", parent)
    assert (onto_gpt.thinking_budget, onto_gpt.prompt_cache, onto_gpt.temperature) == (msgspec.UNSET, msgspec.UNSET, 0.5)
    check_settings("openai/gpt-4.1", onto_gpt)  # nothing left that would do nothing
    assert settings_for("anthropic/claude-x", parent) == parent
    assert settings_for("anthropic/claude-x", RunSettings(reasoning_effort="low")).reasoning_effort is msgspec.UNSET
