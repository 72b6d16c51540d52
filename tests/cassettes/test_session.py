"""Record and replay through the real openai SDK -> httpx2 -> vcrpy, against a local server."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import textwrap
import urllib.request
from pathlib import Path

import openai
import pytest
import zstandard
from cassette_helpers import MODEL, PROMPTS, SECRET, TASK, ChatServer, ask, client, job
from vcr.request import Request

from endstate.cassettes import load, open_session, request_hash
from endstate.cassettes._format import MAGIC
from endstate.cassettes._scrub import scrub_request
from endstate.errors import CassetteError, ReplayDivergence
from endstate.models._secrets import Scrubber

HERE = Path(__file__).parent


def record(server: ChatServer, path: Path, state: Path, prompts=PROMPTS, **options) -> list[dict]:
    with open_session(job(path, **options), task_id=TASK, state_dir=state) as tape:
        sdk = client(server.url)
        answers = [ask(sdk, turn, prompt) for turn, prompt in enumerate(prompts, 1)]
    assert tape.recorded == len(prompts)
    return answers


def decompressed(path: Path) -> bytes:
    """Every chunk of a cassette, decompressed and concatenated."""
    data = path.read_bytes()
    offset, out = len(MAGIC) + 2, b""
    while offset < len(data):
        (size,) = struct.unpack_from(">I", data, offset)
        out += zstandard.ZstdDecompressor().decompress(data[offset + 4: offset + 4 + size])
        offset += 4 + size
    return out


def assert_no_secrets(path: Path) -> None:
    for blob in (path.read_bytes(), decompressed(path)):
        for secret in (SECRET.encode(), b"SECRET123", b"session=", b"org-", b"req-123"):
            assert secret not in blob
        assert b"Bearer" not in blob and b"authorization" not in blob.lower()


def test_round_trip_keeps_no_secret_and_replays_offline(server, tmp_path):
    path = tmp_path / "demo.cassette"
    answers = record(server, path, tmp_path / "rec")
    # The key really travelled, twice, so its absence from the file means something.
    assert server.seen[0]["headers"]["authorization"] == f"Bearer {SECRET}"
    assert server.seen[0]["headers"]["x-api-key"] == SECRET
    assert_no_secrets(path)
    recording = load(path)
    assert recording.complete and len(recording.interactions) == 3
    assert [i.request.turn for i in recording.interactions] == [1, 2, 3]
    assert recording.interactions[0].request.path == f"/scripted/reference/{TASK}/v1/chat/completions"
    # Only an allowlist of headers is kept: nothing about the account, the machine or the clock.
    assert set(recording.interactions[0].request.headers) == {"content-type", "x-endstate-channel", "x-endstate-turn"}
    assert set(recording.interactions[0].response.headers) == {"content-type"}

    server.stop()
    with open_session(job(path, "replay"), task_id=TASK, state_dir=tmp_path / "play") as tape:
        sdk = client(server.url)
        again = [ask(sdk, turn, prompt) for turn, prompt in enumerate(PROMPTS, 1)]
    assert again == answers
    assert (tape.played, tape.unplayed(), tape.divergence, tape.notes) == (3, 0, None, [])


def test_credential_query_parameters_are_dropped(server, tmp_path):
    path = tmp_path / "demo.cassette"
    with open_session(job(path), task_id=TASK, state_dir=tmp_path / "rec"):
        sdk = openai.OpenAI(api_key="unused", base_url=server.url, max_retries=0,
                            default_query={"api_key": SECRET, "access_token": SECRET, "api-version": "2024-06-01"})
        ask(sdk, 1, PROMPTS[0])
    assert SECRET in server.seen[0]["path"]
    assert_no_secrets(path)
    assert load(path).interactions[0].request.query == [("api-version", "2024-06-01")]
    server.stop()
    with open_session(job(path, "replay"), task_id=TASK, state_dir=tmp_path / "play") as tape:
        ask(openai.OpenAI(api_key="other", base_url=server.url, max_retries=0), 1, PROMPTS[0])
    assert tape.unplayed() == 0


@pytest.mark.parametrize("replay_knows_the_key", [False, True])
def test_an_echoed_key_is_scrubbed_and_the_recording_still_matches(tmp_path, replay_knows_the_key):
    """The key comes back in an answer, and the agent sends it again on its next turn.
    Hashes are taken over scrubbed bytes, so replay matches whether it is handed the
    placeholder (what the recording serves) or the key itself."""
    server = ChatServer(echo_key=True)
    path = tmp_path / "demo.cassette"
    try:
        with open_session(job(path), task_id=TASK, state_dir=tmp_path / "rec", scrubber=Scrubber([SECRET])):
            sdk = client(server.url)
            first = ask(sdk, 1, PROMPTS[0])["choices"][0]["message"]["content"]
            ask(sdk, 2, PROMPTS[1], history=[{"role": "assistant", "content": first}])
    finally:
        server.stop()
    assert first.endswith(f"(your key: {SECRET})")
    assert SECRET.encode() in server.seen[1]["body"]  # the echoed key really went out again
    assert_no_secrets(path)
    recording = load(path)
    assert b"(your key: REDACTED)" in recording.interactions[0].response.body
    assert b"(your key: REDACTED)" in recording.interactions[1].request.body

    scrubber = Scrubber([SECRET]) if replay_knows_the_key else Scrubber()
    with open_session(job(path, "replay"), task_id=TASK, state_dir=tmp_path / "play", scrubber=scrubber) as tape:
        sdk = client(server.url)
        served = ask(sdk, 1, PROMPTS[0])["choices"][0]["message"]["content"]
        assert served.endswith("(your key: REDACTED)")
        said = first if replay_knows_the_key else served
        ask(sdk, 2, PROMPTS[1], history=[{"role": "assistant", "content": said}])
    assert (tape.divergence, tape.unplayed()) == (None, 0)


def test_the_request_hook_always_returns_the_request():
    request = Request("POST", f"http://h/v1/x?key={SECRET}&keep=1", b"{}",
                      {"Authorization": "Bearer k", "X-Api-Key": "k", "X-Endstate-Turn": "1"})
    assert scrub_request(request) is request
    assert dict(request.headers) == {"X-Endstate-Turn": "1"} and request.uri == "http://h/v1/x?keep=1"


def test_replay_through_endstates_model_adapter(server, tmp_path):
    from endstate.models import Message, RunSettings, open_model

    settings = RunSettings(max_retries=0)
    path = tmp_path / "demo.cassette"

    def run(mode: str, state: str) -> list:
        with open_session(job(path, mode), task_id=TASK, state_dir=tmp_path / state) as tape:
            model = open_model(MODEL, settings=settings, base_url=server.url, api_key=SECRET)
            try:
                done = [model.complete([Message(role="user", content=p)], [], channel="agent", turn=t)
                        for t, p in enumerate(PROMPTS, 1)]
            finally:
                model.close()
        return done, tape

    recorded, _ = run("record", "rec")
    server.stop()
    replayed, tape = run("replay", "play")
    assert replayed == recorded and tape.unplayed() == 0
    assert_no_secrets(path)


def test_replay_never_reaches_the_network(server, tmp_path):
    path = tmp_path / "demo.cassette"
    record(server, path, tmp_path / "rec")
    seen = len(server.seen)
    with open_session(job(path, "replay"), task_id=TASK, state_dir=tmp_path / "play"):
        with pytest.raises(ReplayDivergence):
            ask(client(server.url), 1, "something new")
    assert len(server.seen) == seen


def test_strict_divergence_names_task_turn_hash_and_closest(server, tmp_path):
    path = tmp_path / "demo.cassette"
    record(server, path, tmp_path / "rec")
    with open_session(job(path, "replay"), task_id=TASK, state_dir=tmp_path / "play") as tape:
        sdk = client(server.url)
        ask(sdk, 1, PROMPTS[0])
        with pytest.raises(ReplayDivergence) as caught:
            ask(sdk, 2, "call a tool, politely")
    error = caught.value
    assert (error.task, error.turn) == (TASK, 2)
    body = server.seen[-1]["body"]  # what the SDK sent for the same messages during recording
    changed = json.loads(body)
    changed["messages"][-1]["content"] = "call a tool, politely"
    assert error.request_hash == request_hash("POST", f"/scripted/reference/{TASK}/v1/chat/completions",
                                              json.dumps(changed).encode())
    text = tape.divergence
    assert text == str(error) and tape.divergence_error is error
    assert f"task {TASK}" in text and "agent turn 2" in text and error.request_hash[:16] in text
    assert "closest recorded request: #1 agent turn 2" in text and error.closest.startswith("#1 agent turn 2")
    assert "-  call a tool please" in text and "+  call a tool, politely" in text
    assert tape.unplayed() == 2


def test_each_answer_plays_once(server, tmp_path):
    path = tmp_path / "demo.cassette"
    record(server, path, tmp_path / "rec")
    with open_session(job(path, "replay"), task_id=TASK, state_dir=tmp_path / "play") as tape:
        sdk = client(server.url)
        ask(sdk, 1, PROMPTS[0])
        with pytest.raises(ReplayDivergence):
            ask(sdk, 1, PROMPTS[0])
    assert "its recorded answer (#0) was already played" in tape.divergence


def test_sequence_mode_serves_each_channel_in_order(server, tmp_path):
    path = tmp_path / "demo.cassette"
    with open_session(job(path), task_id=TASK, state_dir=tmp_path / "rec"):
        sdk = client(server.url)
        recorded = [ask(sdk, 1, "a1"), ask(sdk, 2, "a2"), ask(sdk, 3, "summarise", channel="compaction"),
                    ask(sdk, 3, "a3")]
    server.stop()
    with open_session(job(path, "replay", match="sequence"), task_id=TASK, state_dir=tmp_path / "play") as tape:
        sdk = client(server.url)
        # Different bodies, and the compaction comes first this time.
        served = [ask(sdk, 9, "summary first", channel="compaction"), ask(sdk, 1, "x"), ask(sdk, 2, "y"),
                  ask(sdk, 3, "z")]
        with pytest.raises(ReplayDivergence):
            ask(sdk, 4, "one more")
    assert served == [recorded[2], recorded[0], recorded[1], recorded[3]]
    assert tape.unplayed() == 0
    assert "sequence matching: all 3 recorded agent answers have been played" in tape.divergence


def test_unplayed_counts_answers_never_served(server, tmp_path):
    path = tmp_path / "demo.cassette"
    record(server, path, tmp_path / "rec")
    with open_session(job(path, "replay"), task_id=TASK, state_dir=tmp_path / "play") as tape:
        ask(client(server.url), 1, PROMPTS[0])
    assert (tape.played, tape.unplayed()) == (1, 2)


def test_missing_cassette_says_how_to_record(tmp_path):
    path = tmp_path / "nowhere" / "demo.cassette"
    with pytest.raises(CassetteError) as caught:
        with open_session(job(path, "replay"), task_id=TASK, state_dir=tmp_path):
            pass
    message = str(caught.value)
    assert f"no cassette for task {TASK} at {path}" in message
    assert f"endstate record --model {MODEL}" in message and "--replay" in message


def test_changed_task_is_refused_in_strict_and_noted_in_sequence(server, tmp_path):
    path = tmp_path / "demo.cassette"
    record(server, path, tmp_path / "rec")
    with pytest.raises(CassetteError, match="changed since cassette .* was recorded.*--match sequence"):
        with open_session(job(path, "replay", task_hash="b" * 64), task_id=TASK, state_dir=tmp_path / "s"):
            pass
    stale = job(path, "replay", match="sequence", task_hash="b" * 64)
    with open_session(stale, task_id=TASK, state_dir=tmp_path / "q") as tape:
        pass
    assert any("changed since it was recorded" in note for note in tape.notes)


def test_other_model_or_task_is_refused(server, tmp_path):
    path = tmp_path / "demo.cassette"
    record(server, path, tmp_path / "rec")
    with pytest.raises(CassetteError, match="recorded with model openai-compatible/tiny, this run uses openai/x"):
        with open_session(job(path, "replay", model="openai/x"), task_id=TASK, state_dir=tmp_path / "s"):
            pass
    with pytest.raises(CassetteError, match=f"recorded for task {TASK}, not other"):
        with open_session(job(path, "replay"), task_id="other", state_dir=tmp_path / "t"):
            pass


def test_recording_refuses_an_existing_cassette_unless_overwrite(server, tmp_path):
    path = tmp_path / "demo.cassette"
    record(server, path, tmp_path / "rec")
    before = path.read_bytes()
    with pytest.raises(CassetteError, match="already exists: pass --overwrite"):
        record(server, path, tmp_path / "rec2")
    assert path.read_bytes() == before
    record(server, path, tmp_path / "rec3", prompts=["only one"], overwrite=True)
    assert len(load(path).interactions) == 1


def test_a_corrupt_cassette_fails_replay_and_is_left_alone(server, tmp_path):
    path = tmp_path / "demo.cassette"
    record(server, path, tmp_path / "rec")
    damaged = path.read_bytes()[:-7]
    path.write_bytes(damaged)
    with pytest.raises(CassetteError, match="truncated or corrupt"):
        with open_session(job(path, "replay"), task_id=TASK, state_dir=tmp_path / "play"):
            pass
    assert path.read_bytes() == damaged


def test_one_session_per_process(server, tmp_path):
    path = tmp_path / "demo.cassette"
    record(server, path, tmp_path / "rec")
    with open_session(job(path, "replay"), task_id=TASK, state_dir=tmp_path / "a"):
        with pytest.raises(CassetteError, match="process of its own"):
            with open_session(job(path, "replay"), task_id=TASK, state_dir=tmp_path / "b"):
                pass


def test_streaming_is_refused_before_it_goes_out(server, tmp_path):
    path = tmp_path / "demo.cassette"
    with open_session(job(path), task_id=TASK, state_dir=tmp_path / "rec"):
        with pytest.raises(CassetteError, match="streaming"):
            client(server.url).chat.completions.create(model="tiny", messages=[{"role": "user", "content": "hi"}],
                                                       stream=True)
    assert server.seen == []


def test_other_http_clients_pass_through_during_replay(server, tmp_path):
    """The Docker SDK speaks requests/urllib3/http.client: only httpx2 is intercepted."""
    path = tmp_path / "demo.cassette"
    record(server, path, tmp_path / "rec")
    with open_session(job(path, "replay"), task_id=TASK, state_dir=tmp_path / "play"):
        request = urllib.request.Request(f"{server.url}/chat/completions", method="POST",
                                         data=json.dumps({"messages": [{"role": "user", "content": "x"}]}).encode())
        with urllib.request.urlopen(request, timeout=5) as reply:
            assert json.loads(reply.read())["choices"][0]["message"]["content"] == "answer to: x"


# -- a killed agent, resumed by a new process ------------------------------------------

KILLED = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    from cassette_helpers import PROMPTS, TASK, ask, client, job
    from endstate.cassettes import open_session

    mode, path, state, url, count = sys.argv[1:]
    with open_session(job(Path(path), mode), task_id=TASK, state_dir=Path(state)) as tape:
        sdk = client(url)
        for turn, prompt in enumerate(PROMPTS[: int(count)], 1):
            ask(sdk, turn, prompt)
        os.kill(os.getpid(), signal.SIGKILL)
    """
)


def run_killed(tmp_path: Path, mode: str, path: Path, state: Path, url: str, count: int) -> None:
    script = tmp_path / "killed.py"
    script.write_text(KILLED)
    # The helpers, and tests/ for what they import (loopback).
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), str(HERE.parent), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, str(script), mode, str(path), str(state), url, str(count)],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == -9, done.stderr


def test_killed_recording_keeps_its_interactions_and_resumes(server, tmp_path):
    path, state = tmp_path / "demo.cassette", tmp_path / "work"
    run_killed(tmp_path, "record", path, state, server.url, 2)
    cut = load(path)
    assert len(cut.interactions) == 2 and not cut.complete
    assert_no_secrets(path)
    # The new process gets the same job; the journal in state_dir says to append.
    with open_session(job(path), task_id=TASK, state_dir=state) as tape:
        ask(client(server.url), 3, PROMPTS[2])
    whole = load(path)
    assert whole.complete and tape.recorded == 1
    assert [i.request.turn for i in whole.interactions] == [1, 2, 3]
    assert whole.header == cut.header
    server.stop()
    with open_session(job(path, "replay"), task_id=TASK, state_dir=tmp_path / "play") as tape:
        sdk = client(server.url)
        for turn, prompt in enumerate(PROMPTS, 1):
            ask(sdk, turn, prompt)
    assert tape.unplayed() == 0


@pytest.mark.parametrize("interrupt", [KeyboardInterrupt, SystemExit])
def test_an_interrupted_recording_is_cut_short_as_a_kill_leaves_it(server, tmp_path, interrupt):
    path, state = tmp_path / "demo.cassette", tmp_path / "work"
    with pytest.raises(interrupt), open_session(job(path), task_id=TASK, state_dir=state):
        sdk = client(server.url)
        ask(sdk, 1, PROMPTS[0])
        ask(sdk, 2, PROMPTS[1])
        raise interrupt
    cut = load(path)
    assert len(cut.interactions) == 2 and not cut.complete  # replay and `cassette show` call it incomplete
    with pytest.raises(CassetteError, match="incomplete"):
        with open_session(job(path, "replay"), task_id=TASK, state_dir=tmp_path / "play"):
            pass
    with open_session(job(path), task_id=TASK, state_dir=state) as tape:  # the journal is open: it appends
        ask(client(server.url), 3, PROMPTS[2])
    whole = load(path)
    assert whole.complete and whole.end.error == "" and tape.recorded == 1
    assert [i.request.turn for i in whole.interactions] == [1, 2, 3]


def test_a_recording_ended_by_an_error_is_complete_and_names_it(server, tmp_path):
    path = tmp_path / "demo.cassette"
    with pytest.raises(ValueError), open_session(job(path), task_id=TASK, state_dir=tmp_path / "work"):
        ask(client(server.url), 1, PROMPTS[0])
        raise ValueError("the agent loop failed")
    ended = load(path)
    assert ended.complete and ended.end.error == "ValueError" and len(ended.interactions) == 1


def test_killed_replay_does_not_serve_played_answers_again(server, tmp_path):
    path, state = tmp_path / "demo.cassette", tmp_path / "work"
    answers = record(server, path, tmp_path / "rec")
    server.stop()
    run_killed(tmp_path, "replay", path, state, server.url, 2)
    with open_session(job(path, "replay"), task_id=TASK, state_dir=state) as tape:
        sdk = client(server.url)
        assert tape.played == 2 and tape.unplayed() == 1
        assert ask(sdk, 3, PROMPTS[2]) == answers[2]
        with pytest.raises(ReplayDivergence):
            ask(sdk, 2, PROMPTS[1])
    assert tape.unplayed() == 0
    assert "its recorded answer (#1) was already played" in tape.divergence
    # The session closed in order, so the next run in this folder starts from the top.
    with open_session(job(path, "replay"), task_id=TASK, state_dir=state) as tape:
        assert tape.played == 0
        assert ask(client(server.url), 1, PROMPTS[0]) == answers[0]


def test_resumed_can_be_stated_explicitly(server, tmp_path):
    path, state = tmp_path / "demo.cassette", tmp_path / "work"
    record(server, path, state)
    server.stop()
    with open_session(job(path, "replay"), task_id=TASK, state_dir=state, resumed=False) as tape:
        ask(client(server.url), 1, PROMPTS[0])
    assert tape.played == 1
