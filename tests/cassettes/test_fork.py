"""A fork through the real openai SDK -> httpx2 -> vcrpy: a prefix served from a parent
cassette, matched on the conversation whatever model asks, then live into a new cassette."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import msgspec
import pytest
from cassette_helpers import PROMPTS, TASK, ChatServer, client, job

from endstate.cassettes import FIRST_DIVERGENCE, LAST_TURN, Provenance, load, open_session
from endstate.errors import CassetteError, ReplayDivergence


def ask_as(sdk, turn: int, content: str, model: str) -> dict:
    raw = sdk.chat.completions.with_raw_response.create(
        model=model, messages=[{"role": "system", "content": "You fix code."}, {"role": "user", "content": content}],
        temperature=0, extra_headers={"X-Endstate-Channel": "agent", "X-Endstate-Turn": str(turn)})
    return json.loads(raw.content)


def record_parent(server: ChatServer, path: Path, state: Path) -> list[dict]:
    with open_session(job(path), task_id=TASK, state_dir=state):
        sdk = client(server.url)
        return [ask_as(sdk, turn, prompt, "tiny") for turn, prompt in enumerate(PROMPTS)]


def fork_job(path: Path, parent: Path, fork_at: int, **header):
    return msgspec.structs.replace(job(path, model="openai-compatible/other", **header), parent=str(parent),
                                   fork_at=fork_at)


def test_a_fork_serves_turns_before_k_from_the_parent_and_records_the_rest(server, tmp_path):
    parent, child = tmp_path / "parent.cassette", tmp_path / "child.cassette"
    answers = record_parent(server, parent, tmp_path / "rec")
    seen = len(server.seen)
    with open_session(fork_job(child, parent, 2), task_id=TASK, state_dir=tmp_path / "fork") as tape:
        sdk = client(server.url)
        forked = [ask_as(sdk, turn, prompt, "other") for turn, prompt in enumerate(PROMPTS)]
    # Turns 0 and 1 were the parent's answers (asked by another model); only turn 2 reached the server.
    assert forked[:2] == answers[:2] and len(server.seen) == seen + 1
    assert json.loads(server.seen[-1]["body"])["model"] == "other"
    recording = load(child)
    assert recording.header.parent == hashlib.sha256(parent.read_bytes()).hexdigest()
    assert (recording.header.fork_at, recording.header.model) == (2, "openai-compatible/other")
    assert [i.request.turn for i in recording.interactions] == [0, 1, 2] and recording.complete
    assert tape.provenance() == Provenance("forked", replayed_turns=2, live_from=2, parent=recording.header.parent)

    server.stop()  # the new cassette replays strictly, offline, as the fork asked
    with open_session(job(child, "replay", model="openai-compatible/other"), task_id=TASK,
                      state_dir=tmp_path / "play") as tape:
        sdk = client(server.url)
        again = [ask_as(sdk, turn, prompt, "other") for turn, prompt in enumerate(PROMPTS)]
    assert again == forked and (tape.unplayed(), tape.divergence) == (0, None)
    assert tape.provenance() == Provenance("replayed", replayed_turns=3)


def test_a_divergence_before_k_names_the_task_and_turn(server, tmp_path):
    parent, child = tmp_path / "parent.cassette", tmp_path / "child.cassette"
    record_parent(server, parent, tmp_path / "rec")
    seen = len(server.seen)
    with open_session(fork_job(child, parent, 2), task_id=TASK, state_dir=tmp_path / "fork") as tape:
        sdk = client(server.url)
        ask_as(sdk, 0, PROMPTS[0], "other")
        with pytest.raises(ReplayDivergence) as caught:
            ask_as(sdk, 1, "something else", "other")
    assert len(server.seen) == seen  # nothing went live
    first = str(caught.value).splitlines()[0]
    assert first.startswith(f"fork of task {TASK} diverged at agent turn 1, before --fork-at 2")
    assert tape.divergence == str(caught.value)


def test_at_the_first_divergence_the_fork_goes_live_there(server, tmp_path):
    parent, child = tmp_path / "parent.cassette", tmp_path / "child.cassette"
    record_parent(server, parent, tmp_path / "rec")
    seen = len(server.seen)
    with open_session(fork_job(child, parent, FIRST_DIVERGENCE), task_id=TASK, state_dir=tmp_path / "fork") as tape:
        sdk = client(server.url)
        ask_as(sdk, 0, PROMPTS[0], "tiny")
        changed = ask_as(sdk, 1, "a changed prompt", "tiny")
        ask_as(sdk, 2, PROMPTS[2], "tiny")  # the parent has this one, but the fork is live from turn 1
    assert changed["choices"][0]["message"]["content"] == "answer to: a changed prompt"
    assert len(server.seen) == seen + 2
    assert tape.provenance().live_from == 1 and tape.provenance().replayed_turns == 1
    assert load(child).header.fork_at == 1


def test_a_fork_that_matches_to_the_end_leaves_the_cassette_as_it_was(server, tmp_path):
    parent, child = tmp_path / "parent.cassette", tmp_path / "child.cassette"
    record_parent(server, parent, tmp_path / "rec")
    with open_session(fork_job(child, parent, FIRST_DIVERGENCE), task_id=TASK, state_dir=tmp_path / "fork") as tape:
        sdk = client(server.url)
        for turn, prompt in enumerate(PROMPTS):
            ask_as(sdk, turn, prompt, "tiny")
    assert child.read_bytes() == parent.read_bytes()
    assert tape.provenance() == Provenance("replayed", replayed_turns=3)


def test_an_interrupted_fork_is_cut_short_as_a_kill_leaves_it(server, tmp_path):
    parent, child = tmp_path / "parent.cassette", tmp_path / "child.cassette"
    record_parent(server, parent, tmp_path / "rec")
    with pytest.raises(KeyboardInterrupt), open_session(fork_job(child, parent, 1), task_id=TASK,
                                                        state_dir=tmp_path / "fork"):
        sdk = client(server.url)
        for turn, prompt in enumerate(PROMPTS[:2]):  # turn 0 from the parent, turn 1 live
            ask_as(sdk, turn, prompt, "other")
        raise KeyboardInterrupt
    cut = load(child)
    assert not cut.complete and [i.request.turn for i in cut.interactions] == [0, 1]


def test_fork_at_last_answers_the_last_turn_live(server, tmp_path):
    parent, child = tmp_path / "parent.cassette", tmp_path / "child.cassette"
    record_parent(server, parent, tmp_path / "rec")
    with open_session(fork_job(child, parent, LAST_TURN), task_id=TASK, state_dir=tmp_path / "fork") as tape:
        sdk = client(server.url)
        for turn, prompt in enumerate(PROMPTS):
            ask_as(sdk, turn, prompt, "other")
    assert (load(child).header.fork_at, tape.provenance().replayed_turns) == (2, 2)


def test_a_fork_past_the_parents_turns_is_refused_by_task(server, tmp_path):
    parent, child = tmp_path / "parent.cassette", tmp_path / "child.cassette"
    record_parent(server, parent, tmp_path / "rec")
    with pytest.raises(CassetteError, match=f"cannot fork task {TASK} at turn 7: .* has 3 agent turns"):
        with open_session(fork_job(child, parent, 7), task_id=TASK, state_dir=tmp_path / "fork"):
            pass
    assert not child.exists()
