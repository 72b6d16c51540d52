"""How one attempt ends, branch by branch, in-process on memory sandboxes (see memory_runner):
each way the agent's part leaves nothing to grade, an end state that cannot be sealed, and the
judge's pass and fail. The Docker tests (tests/e2e) run the real path of each once."""

from __future__ import annotations

import pytest
from memory_runner import TASK, _GradingBox

from endstate.agent import AgentOutcome, Counters
from endstate.errors import SandboxError
from endstate.grading import INTEGRITY, Grader, Verdict
from endstate.run._faults import INFRA_ERROR


def _ok() -> Grader:
    def doubles(sandbox) -> Verdict:
        return Verdict.ok() if "x * 2" in sandbox.read_text("calc.py") else Verdict.fail("calc.double still adds one")
    return Grader("doubles", doubles)


def _stops(reason: str, detail: str = "", **fields):
    return lambda task, live: AgentOutcome(reason, detail, Counters(steps=2), **fields)


@pytest.mark.parametrize("agent, outcome, failing, words", [
    (_stops("submitted", divergence="turn 3: no recorded answer for this request"), "divergence", "", "turn 3"),
    (_stops("model_error", "the provider answered 500"), "error", "", "model_error: the provider answered 500"),
    (_stops("harness_error", "a bug"), "error", "", "harness_error: a bug"),
    (_stops("disk_limit", "the workspace grew past 512 MiB"), "fail", "disk_limit", "512 MiB"),
], ids=["divergence", "model-error", "harness-error", "disk-limit"])
def test_an_agent_part_that_leaves_nothing_to_grade_settles_the_task_without_a_grading_sandbox(
        memory_suite, agent, outcome, failing, words):
    memory_suite.agent = agent
    result = memory_suite.runner.run_task(TASK, [_ok()])
    assert (result.outcome, result.failing_grader) == (outcome, failing), result
    assert words in result.reason and result.infra_retries == 0 and result.counters.steps == 2
    assert _GradingBox.made == [] or all(not box.harness for box in _GradingBox.made)  # nothing was graded
    assert memory_suite.agents == [TASK.id]


def test_a_replay_that_left_recorded_answers_unplayed_is_a_divergence(memory_suite):
    from endstate.cassettes import Provenance

    memory_suite.agent = _stops("submitted", unplayed=2, provenance=Provenance(mode="replayed"))
    result = memory_suite.runner.run_task(TASK, [_ok()])
    assert result.outcome == "divergence" and "2 recorded interaction(s) were never played" in result.reason


def test_a_machinery_fault_in_the_agents_part_is_run_again_then_left_an_infra_error(memory_suite):
    memory_suite.agent = _stops(INFRA_ERROR, "the engine went away")
    result = memory_suite.runner.run_task(TASK, [_ok()])
    assert result.outcome == INFRA_ERROR and result.infra_retries == 2 and memory_suite.agents == [TASK.id] * 3


def test_an_end_state_that_cannot_be_sealed_fails_as_a_tampering_finding(memory_suite):
    def unsealable(task, live):
        def refuse(*, max_bytes=None, sealing=False):
            raise SandboxError("a file name is not UTF-8: b'calc\\xff.py'")
        live.get_tree = refuse
        return AgentOutcome("submitted", "", Counters(steps=1))

    memory_suite.agent = unsealable
    result = memory_suite.runner.run_task(TASK, [_ok()])
    assert (result.outcome, result.failing_grader) == ("fail", INTEGRITY), result
    assert "could not be sealed" in result.reason and "calc\\xff.py" in result.reason
    assert result.hack and [v.outcome for v in result.verdicts] == ["fail"]
    assert result.infra_retries == 0  # the end state's doing: never a re-roll


def test_the_judge_passes_the_right_end_state_and_fails_the_fixture(memory_suite):
    passed = memory_suite.runner.run_task(TASK, [_ok()])
    assert (passed.outcome, passed.tree_hash != "") == ("pass", True), passed
    memory_suite.agent = _stops("submitted")  # leaves the fixture as it was
    failed = memory_suite.runner.run_task(TASK, [_ok()], attempt=1)
    assert (failed.outcome, failed.failing_grader) == ("fail", "doubles") and "adds one" in failed.reason
    assert failed.tree_hash != passed.tree_hash


def test_the_agents_seconds_are_kept_apart_from_the_harness_work_around_them(memory_suite):
    """`agent_s` is the agent's part of the task's wall; a slow grader adds to wall_s alone, and a
    regrade after a fault under grading keeps the agent's seconds it did not spend again."""
    import time

    from endstate.errors import CommandWedged

    agent = memory_suite.agent

    def slow_agent(task, live):
        time.sleep(0.3)
        return agent(task, live)

    graded = []

    def slow_grader(sandbox) -> Verdict:
        graded.append(1)
        time.sleep(0.4)
        if len(graded) == 1:
            raise CommandWedged("command in container abc outlived its deadline by 30s")
        return _ok().function(sandbox)

    memory_suite.agent = slow_agent
    result = memory_suite.runner.run_task(TASK, [Grader("slow", slow_grader)])
    assert result.outcome == "pass" and result.infra_retries == 1, result
    # Lower bounds only, which the sleeps guarantee on any machine: the agent's 0.3 s are its (a regrade
    # that dropped them reads 0), and the two gradings' 0.8 s are not (a timer around them reads them in).
    assert result.agent_s >= 0.3, result
    assert result.wall_s >= result.agent_s + 2 * 0.4 - 0.01, result  # each figure rounded to the millisecond
