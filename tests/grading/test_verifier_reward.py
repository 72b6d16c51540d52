"""The reward a Harbor verifier writes, read as Harbor reads it: reward.txt a number, else reward.json
a number or an object of numbers. An object with `reward` is that reward (the rest said); one that
names several rewards and none `reward` (Harbor's multi-reward recipe: correctness, performance)
passes only with each of them 1. A string, a boolean, NaN or an infinity in reward.json is no
number (Harbor refuses them too); reward.txt is read as text."""

from __future__ import annotations

import pytest

from endstate.grading._verifier import _reward
from endstate.sandbox import FileEntry


def _written(name: str, text: str) -> dict:
    return {name: FileEntry(0o644, text.encode())}


@pytest.mark.parametrize(("name", "text", "said", "values"), [
    ("reward.txt", "1\n", "1", [1.0]),
    ("reward.txt", "0.5", "0.5", [0.5]),
    ("reward.txt", "reward=1", "reward=1", None),
    ("reward.txt", "nan", "nan", None),
    ("reward.json", '{"reward": 1, "tests": 12}', "1", [1.0]),
    ("reward.json", "1", "1", [1.0]),
    ("reward.json", '{"correctness": 1, "performance": 1}', "correctness=1, performance=1", [1.0, 1.0]),
    ("reward.json", '{"performance": 0, "correctness": 1}', "correctness=1, performance=0", [1.0, 0.0]),
    ("reward.json", '{"reward": "1"}', "1", None),
    ("reward.json", '{"reward": true}', "True", None),
    ("reward.json", '{"correctness": 1, "performance": NaN}', "correctness=1, performance=NaN", None),
    ("reward.json", '{"correctness": 1, "note": "fast"}', 'correctness=1, note="fast"', None),
    ("reward.json", "{}", "None", None),
    ("reward.json", "not json", "not json", None),
])
def test_a_reward_is_read_as_harbor_reads_it(name, text, said, values):
    assert _reward(_written(name, text)) == (said, values)


def test_reward_txt_comes_first_and_a_link_is_never_read():
    written = {**_written("reward.json", '{"correctness": 0}'), **_written("reward.txt", "1")}
    assert _reward(written) == ("1", [1.0])
    assert _reward({"reward.txt": FileEntry.symlink("/etc/passwd")}) == (None, None)
    assert _reward({}) == (None, None)


def test_a_reward_json_nested_past_the_parsers_depth_is_no_number_never_an_error():
    """The verifier runs the end state's code, which may write reward.json itself: 64 KiB of `[` is a FAIL's reason."""
    assert _reward(_written("reward.json", "[" * 60000)) == ("[" * 40, None)
