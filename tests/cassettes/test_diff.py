"""show and diff on real recordings."""

from __future__ import annotations

import pytest
from cassette_helpers import PROMPTS, TASK, ask, client, job

import endstate.cassettes
from endstate.cassettes import Difference, diff, first_difference, open_session, show
from endstate.errors import CassetteError


def record(server, path, prompts, state):
    with open_session(job(path), task_id=TASK, state_dir=state):
        sdk = client(server.url)
        history = []
        for turn, prompt in enumerate(prompts, 1):
            answer = ask(sdk, turn, prompt, history=history)
            history += [{"role": "user", "content": prompt}, answer["choices"][0]["message"]]
    return path


def test_show_prints_the_header_and_each_exchange(server, tmp_path):
    path = record(server, tmp_path / "a.cassette", PROMPTS, tmp_path / "s")
    text = show(path)
    assert f"task {TASK}" in text and "3 interactions, complete" in text
    assert "#0 agent turn 1" in text and "#2 agent turn 3" in text
    assert "[user]\n      read calc.py" in text
    assert "answer to: read calc.py" in text
    assert '-> bash({"command": "ls"})  [call_1]' in text
    # Later requests repeat the history; show says so instead of printing it again.
    assert "… 2 earlier message(s), as sent in #0" in text and "… 4 earlier message(s), as sent in #1" in text


def test_show_cuts_very_long_contents(server, tmp_path):
    path = record(server, tmp_path / "a.cassette", ["x" * 50_000], tmp_path / "s")
    text = show(path)
    assert "characters cut" in text and len(text) < 10_000


def test_identical_recordings(server, tmp_path):
    a = record(server, tmp_path / "a.cassette", PROMPTS, tmp_path / "s1")
    b = record(server, tmp_path / "b.cassette", PROMPTS, tmp_path / "s2")
    assert diff(a, b) == (True, "identical: 3 interactions")


@pytest.mark.parametrize("turn", [1, 2])
def test_diff_reports_the_first_turn_that_differs(server, tmp_path, turn):
    changed = list(PROMPTS)
    changed[turn - 1] = "something else entirely"
    a = record(server, tmp_path / "a.cassette", PROMPTS, tmp_path / "s1")
    b = record(server, tmp_path / "b.cassette", changed, tmp_path / "s2")
    same, text = diff(a, b)
    assert not same
    assert text.startswith(f"first difference at agent turn {turn} ")
    assert f"-  {PROMPTS[turn - 1]}" in text and "+  something else entirely" in text
    assert "response:" in text and "+  answer to: something else entirely" in text


def test_diff_of_a_longer_recording_names_the_extra_turn(server, tmp_path):
    a = record(server, tmp_path / "a.cassette", PROMPTS[:2], tmp_path / "s1")
    b = record(server, tmp_path / "b.cassette", PROMPTS, tmp_path / "s2")
    same, text = diff(a, b)
    assert not same and f"agent turn 3 (#2) is only in {b}" in text


def test_first_difference_pairs_by_key_not_by_position():
    same = str.__eq__
    left = [((1,), "a"), ((2,), "b"), ((3,), "c")]
    assert first_difference(left, list(left), same) is None
    assert first_difference(left, [((1,), "a"), ((2,), "B"), ((3,), "c")], same) == Difference((2,), 1, 1)
    # a key only on the left comes first, in left's order; one only on the right after all of left
    assert first_difference(left, [((1,), "a"), ((3,), "c")], same) == Difference((2,), 1, None)
    assert first_difference(left[:2], [((1,), "a"), ((2,), "b"), ((3,), "c")], same) == Difference((3,), None, 2)
    assert first_difference([], [], same) is None


def test_show_and_diff_refuse_bad_files(tmp_path):
    bad = tmp_path / "bad.cassette"
    bad.write_bytes(b"garbage")
    with pytest.raises(CassetteError):
        show(bad)
    with pytest.raises(CassetteError):
        diff(bad, bad)


def test_public_names():
    assert set(endstate.cassettes.__all__) == {
        "open_session", "Tape", "show", "diff", "first_difference", "Difference", "load", "finalize", "request_hash", "MATCH_MODES",
        "cassette_file", "cassettes_in",
        "FORMAT_VERSION", "Recording", "Header", "Interaction", "RecordedRequest", "RecordedResponse", "End",
        "check_replay_folder", "replay_settings", "ReplaySource", "CassetteJob", "BUFFERED_STREAM_HEADER",
        "Provenance", "ProvenanceMode", "RunMode", "FIRST_DIVERGENCE", "LAST_TURN", "cassette_file",
    }
