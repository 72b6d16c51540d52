"""The request hash and the two matchers."""

from __future__ import annotations

import pytest
from vcr.request import Request

from endstate.cassettes import request_hash
from endstate.cassettes._match import RequestKeys, check_match_mode
from endstate.errors import CassetteError

PATH = "/v1/chat/completions"


def test_the_hash_reads_json_not_bytes():
    one = request_hash("POST", PATH, b'{"model": "m", "messages": [{"role": "user", "content": "hi"}]}')
    other = request_hash("post", PATH, b'{"messages":[{"content":"hi","role":"user"}],"model":"m"}')
    assert one == other and len(one) == 64


def test_the_hash_sees_method_path_and_body():
    base = request_hash("POST", PATH, b'{"a": 1}')
    assert request_hash("PUT", PATH, b'{"a": 1}') != base
    assert request_hash("POST", "/v2/chat/completions", b'{"a": 1}') != base
    assert request_hash("POST", PATH, b'{"a": 2}') != base
    assert request_hash("POST", PATH, b"not json") == request_hash("POST", PATH, "not json")
    assert request_hash("POST", PATH, b"not json") != request_hash("POST", PATH, b"not json!")


def vcr_request(uri: str, body: bytes, **headers: str) -> Request:
    return Request("POST", uri, body, headers)


def test_strict_ignores_host_port_scheme_query_and_headers():
    keys = RequestKeys()
    made = vcr_request("http://127.0.0.1:5000/v1/chat/completions?api_key=x", b'{"a": 1}', authorization="k1")
    recorded = vcr_request("https://recorded.invalid/v1/chat/completions", b'{ "a" : 1 }')
    keys.endstate_request_hash(made, recorded)
    with pytest.raises(AssertionError, match="request hash"):
        keys.endstate_request_hash(made, vcr_request("https://h/v1/chat/completions", b'{"a": 2}'))


def test_sequence_compares_channels_only():
    keys = RequestKeys()
    agent = vcr_request("http://h/v1/x", b"1", **{"X-Endstate-Channel": "agent", "X-Endstate-Turn": "1"})
    other_agent = vcr_request("http://h/v1/y", b"2", **{"x-endstate-channel": "agent", "X-Endstate-Turn": "7"})
    compaction = vcr_request("http://h/v1/x", b"1", **{"X-Endstate-Channel": "compaction"})
    keys.endstate_channel(agent, other_agent)
    with pytest.raises(AssertionError, match="channel 'agent' != recorded 'compaction'"):
        keys.endstate_channel(agent, compaction)
    assert (keys.turn_of(agent), keys.turn_of(compaction)) == (1, None)


def test_unknown_match_modes_list_the_known_ones():
    with pytest.raises(CassetteError, match="strict, sequence"):
        check_match_mode("loose")


def _chat(model: str, assistant: dict) -> bytes:
    import json

    call = {"id": "call_0", "type": "function", "function": {"name": "bash", "arguments": "{}"}}
    return json.dumps({"model": model, "messages": [{"role": "user", "content": "fix it"},
                                                    {**assistant, "role": "assistant", "tool_calls": [call]},
                                                    {"role": "tool", "tool_call_id": "call_0", "content": "ok"}]}).encode()


@pytest.mark.parametrize("form", [{"content": ""}, {"content": None}, {}])
def test_a_fork_prefix_reads_an_empty_assistant_content_in_any_form_as_none(form):
    """An OpenAI-compatible server's recording sends "" where the scripted arm sends nothing: a fork of
    one onto the other is the same conversation, and still differs from one with text."""
    keys = RequestKeys()
    recorded = vcr_request("http://h/v1/chat/completions", _chat("openai-compatible/x", {"content": ""}))
    keys.endstate_conversation(vcr_request("http://h/v1/chat/completions", _chat("scripted/null", form)), recorded)
    with pytest.raises(AssertionError, match="the conversation differs"):
        keys.endstate_conversation(vcr_request("http://h/v1/chat/completions",
                                               _chat("scripted/null", {"content": "thinking"})), recorded)
    if form != {"content": ""}:  # strict replay still compares what was sent
        with pytest.raises(AssertionError, match="request hash"):
            keys.endstate_request_hash(vcr_request("http://h/v1/chat/completions",
                                                   _chat("openai-compatible/x", form)), recorded)
