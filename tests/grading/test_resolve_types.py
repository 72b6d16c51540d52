"""A grader's arguments checked against its annotations when it is resolved, before any sandbox:
`min_tests = "three"` in task.toml is one line naming the argument, not a TypeError mid-grading."""

from __future__ import annotations

import pytest

from endstate.errors import GraderContractError
from endstate.grading import resolve


@pytest.mark.parametrize(("args", "said"), [
    ({"command": "pytest", "min_tests": "three"}, "argument 'min_tests' is 'three', and it takes int"),
    ({"command": "pytest", "min_tests": True}, "argument 'min_tests' is True, and it takes int"),
    ({"command": ["pytest"]}, "argument 'command' is ['pytest'], and it takes str"),
])
def test_an_argument_of_the_wrong_type_is_refused_naming_it(args, said):
    with pytest.raises(GraderContractError) as caught:
        resolve("endstate.grading:holdout", args)
    assert str(caught.value) == f"grader 'endstate.grading:holdout': {said}: fix it in task.toml"


def test_arguments_of_the_right_type_pass_and_ints_may_stand_for_floats():
    assert resolve("endstate.grading:holdout", {"command": "pytest", "min_tests": 3}).args["min_tests"] == 3
    assert resolve("endstate.grading:files_unchanged", {"paths": ["tests/**"]}).args == {"paths": ["tests/**"]}
    assert resolve("endstate.grading:verifier", {"script": "tests/test.sh", "timeout": 30}).args["timeout"] == 30


def test_the_run_refuses_the_task_before_any_sandbox(tmp_path):
    import shutil
    from pathlib import Path

    from endstate.run import resolve_graders
    from endstate.task import load_task

    task = tmp_path / "bugfix-lru-eviction"
    shutil.copytree(Path(__file__).resolve().parents[2] / "tasks" / "bugfix-lru-eviction", task)
    toml = task / "task.toml"
    toml.write_text(toml.read_text().replace("min_tests = 5", 'min_tests = "three"'))
    with pytest.raises(GraderContractError, match=r"^task bugfix-lru-eviction: grader 'endstate.grading:holdout': "
                                                   r"argument 'min_tests' is 'three'"):
        resolve_graders(load_task(task))
