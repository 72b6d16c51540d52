"""A fault of the machinery while a sealed attempt is graded grades that snapshot again: the
agent does not run again and the model is not asked again. Before sealing, the attempt is
run again from scratch, as ever. The runner's branches, with an in-memory sandbox."""

from __future__ import annotations

from memory_runner import END_STATE, TASK, _GradingBox

from endstate.errors import CommandWedged
from endstate.grading import Grader, Verdict


def _grader(faults: int, seen: list):
    def graded_end_state(sandbox) -> Verdict:
        seen.append(sandbox.read_text("calc.py"))
        if len(seen) <= faults:
            raise CommandWedged("command in container abc outlived its deadline by 30s")
        return Verdict.ok()
    return Grader("graded_end_state", graded_end_state)


def test_a_fault_while_a_sealed_attempt_is_graded_grades_its_snapshot_again(memory_suite):
    made, agents = memory_suite.runner, memory_suite.agents
    seen: list[str] = []
    result = made.run_task(TASK, [_grader(1, seen)])
    assert result.outcome == "pass" and result.infra_retries == 1, result
    assert agents == [TASK.id]  # the agent ran once
    assert seen == [END_STATE["calc.py"].data.decode()] * 2  # the same end state, graded twice
    assert len(_GradingBox.made) == 2  # a fresh grading sandbox for the second
    assert result.stop_reason == "submitted" and result.counters.steps == 3 and result.tree_hash
    assert not made.sealed  # forgotten once the attempt is done


def test_faults_past_the_retries_leave_the_attempt_an_infra_error_and_the_agent_run_once(memory_suite):
    made, agents = memory_suite.runner, memory_suite.agents
    seen: list[str] = []
    result = made.run_task(TASK, [_grader(5, seen)])
    assert result.outcome == "infra_error" and result.infra_retries == 2 and len(seen) == 3
    assert agents == [TASK.id]


def test_a_fault_before_sealing_runs_the_attempt_again_from_scratch(memory_suite):
    made, agents = memory_suite.runner, memory_suite.agents
    agent = memory_suite.agent

    def wedged_once(task, live):
        if len(agents) == 1:
            raise CommandWedged("command in container abc outlived its deadline by 30s")
        return agent(task, live)
    memory_suite.agent = wedged_once
    seen: list[str] = []
    result = made.run_task(TASK, [_grader(0, seen)])
    assert result.outcome == "pass" and result.infra_retries == 1, result
    assert agents == [TASK.id, TASK.id] and len(seen) == 1
