"""The Scrubber: which values count as secrets, every form they are replaced in, and URLs."""

from __future__ import annotations

import base64
import json
from urllib.parse import quote

import msgspec
import pytest

from endstate.models import Message, RunSettings, open_model
from endstate.models._secrets import MIN_SECRET_LENGTH, PLACEHOLDER, Scrubber, split_query

KEY = "sk-test/ABC+def=123"  # characters that change under percent-encoding and JSON escaping


def test_every_written_form_of_a_key_is_replaced():
    scrub = Scrubber([KEY])
    for form in (KEY, quote(KEY, safe=""), json.dumps(KEY)[1:-1].replace("/", "\\/")):
        assert scrub.text(f"a {form} b") == f"a {PLACEHOLDER} b", form
    assert scrub.bytes(json.dumps({"k": KEY}).encode()) == json.dumps({"k": PLACEHOLDER}).encode()


def test_keys_from_the_environment_and_the_base_url():
    env = {"OPENAI_API_KEY": "sk-env-0123456789", "ANTHROPIC_API_KEY": "sk-ant-0123456789", "PATH": "/usr/bin:/bin"}
    scrub = Scrubber.for_run("http://gw-user:pa%2Fss-word-99@h:1/v1?api_key=query-key-42&api-version=2024-06-01",
                             env)
    basic = base64.b64encode(b"gw-user:pa/ss-word-99").decode()
    text = f"sk-env-0123456789 sk-ant-0123456789 pa/ss-word-99 pa%2Fss-word-99 {basic} query-key-42"
    assert scrub.text(text) == " ".join([PLACEHOLDER] * 6)
    # Names and values that are not credentials stay: the user name, the API version, PATH.
    assert scrub.text("gw-user 2024-06-01 /usr/bin:/bin") == "gw-user 2024-06-01 /usr/bin:/bin"


def test_short_and_placeholder_keys_are_not_secrets():
    scrub = Scrubber(["", "abc", "x" * (MIN_SECRET_LENGTH - 1), "not-needed"])
    assert not scrub
    text = "abc xxxxxxx not-needed"
    assert scrub.text(text) == text and scrub.bytes(text.encode()) == text.encode()
    assert Scrubber(["y" * MIN_SECRET_LENGTH]).text("y" * MIN_SECRET_LENGTH) == PLACEHOLDER


def test_scrubbing_is_idempotent_and_longest_first():
    scrub = Scrubber(["secret-0123456789", "secret-0123456789-longer"])
    once = scrub.text("secret-0123456789-longer and secret-0123456789")
    assert once == f"{PLACEHOLDER} and {PLACEHOLDER}"
    assert scrub.text(once) == once


def test_urls_lose_passwords_and_query_keys_whatever_their_length():
    scrub = Scrubber()
    assert scrub.url("http://u:pw@127.0.0.1:8/v1?key=k&api-version=1") == \
        f"http://u:{PLACEHOLDER}@127.0.0.1:8/v1?key={PLACEHOLDER}&api-version=1"
    assert scrub.url("http://127.0.0.1:8/v1") == "http://127.0.0.1:8/v1"
    assert scrub.url(None) is None


def test_structs_come_back_as_the_same_type():
    class Outcome(msgspec.Struct):
        detail: str
        lines: list[str]

    scrub = Scrubber([KEY])
    cleaned = scrub.struct(Outcome(f"401: Bearer {KEY}", [KEY, "ok"]))
    assert cleaned == Outcome(f"401: Bearer {PLACEHOLDER}", [PLACEHOLDER, "ok"])


def test_a_base_url_query_reaches_the_server_as_a_query(fake_server, json_reply):
    """The SDKs would glue the endpoint onto the query (`/v1?key=Kchat/completions`)."""
    assert split_query("http://h/v1?api_key=K&x=1") == ("http://h/v1", {"api_key": "K", "x": "1"})
    answer = {"choices": [{"message": {"content": "hi"}, "finish_reason": "stop"}]}
    server = fake_server(lambda seen, n: json_reply(answer))
    model = open_model("openai-compatible/m", settings=RunSettings(max_retries=0),
                       base_url=f"{server.url}/v1?api_key=query-key-42", api_key="k")
    try:
        model.complete([Message(role="user", content="hi")], [], channel="agent", turn=1)
    finally:
        model.close()
    assert server.seen[0].path == "/v1/chat/completions?api_key=query-key-42"


@pytest.mark.parametrize("secret", ["", "short"])
def test_empty_or_short_keys_scrub_nothing_in_a_run(secret):
    scrub = Scrubber.for_run(None, {"OPENAI_API_KEY": secret})
    assert scrub.text("a short text with the word short in it") == "a short text with the word short in it"
