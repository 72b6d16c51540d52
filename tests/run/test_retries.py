"""Retries of tasks whose machinery failed, and what --resume reruns."""

from __future__ import annotations

import threading

import pytest

from endstate.errors import CommandWedged, UserError
from endstate.run import RetryPolicy
from endstate.run._faults import INFRA_ERROR, guarded, run_with_retries, settle
from endstate.run._results import RunCard, RunResult, TaskResult, write_results
from endstate.run._resume import finished, start_run

FAST = RetryPolicy(tries=3, backoff_s=0.0, engine_wait_s=0.0)


def outcomes(*sequence: str):
    runs = []

    def once(retry: int) -> TaskResult:
        runs.append(retry)
        return TaskResult("t", "bugfix", outcome=sequence[len(runs) - 1])
    return once, runs


@pytest.mark.parametrize("sequence, runs, final", [
    (("pass",), [0], "pass"),
    ((INFRA_ERROR, "pass"), [0, 1], "pass"),
    ((INFRA_ERROR, INFRA_ERROR, "fail"), [0, 1, 2], "fail"),
    ((INFRA_ERROR, INFRA_ERROR, INFRA_ERROR, "pass"), [0, 1, 2], INFRA_ERROR),
    (("fail", "pass"), [0], "fail"),
    (("error", "pass"), [0], "error"),
    (("divergence", "pass"), [0], "divergence"),
])
def test_only_infra_errors_are_rerun_and_only_so_often(sequence, runs, final):
    once, ran = outcomes(*sequence)
    cleaned = []
    result = run_with_retries(once, FAST, None, threading.Event(), lambda: cleaned.append(1))
    assert ran == runs and result.outcome == final
    assert result.infra_retries == len(runs) - 1 == len(cleaned)


def test_a_cancelled_run_does_not_retry():
    once, ran = outcomes(INFRA_ERROR, "pass")
    cancelled = threading.Event()
    cancelled.set()
    assert run_with_retries(once, FAST, None, cancelled, lambda: None).outcome == INFRA_ERROR and ran == [0]


def test_settle_names_the_fault_and_keeps_what_the_task_read():
    result = TaskResult("t", "bugfix", outcome="error", reason="harness bug: ConnectionError: aborted")
    settle(result, ConnectionResetError(104, "reset"), None, None)
    assert result.outcome == INFRA_ERROR
    assert result.reason.startswith("the connection to the Docker engine broke (ConnectionResetError")
    assert "it read: error: harness bug" in result.reason


def test_a_model_failure_is_never_an_infra_error():
    result = TaskResult("t", "bugfix", outcome="error", stop_reason="model_error", reason="model_error: 503")
    settle(result, ConnectionResetError(104, "reset"), None, None)
    assert result.outcome == "error"


def test_a_plain_bug_stays_a_harness_bug():
    result = TaskResult("t", "bugfix", outcome="error", reason="harness bug: KeyError: 'x'")
    settle(result, KeyError("x"), None, None)
    assert result.outcome == "error" and result.reason == "harness bug: KeyError: 'x'"


CARD = RunCard(endstate_version="0", model="scripted/null", provider="scripted", temperature=0.0, seed=0,
               retry_ceiling=0, tool_choice="auto", network_policy="none", sandbox_backend="docker", image="i",
               image_id="sha256:i", task_pack_hash="h", tasks=5)


@pytest.mark.parametrize("keep_errors", [False, True])
def test_resume_reruns_infra_and_harness_errors_unless_asked_to_keep_them(tmp_path, keep_errors):
    done = [TaskResult("a", "bugfix", outcome="pass"), TaskResult("b", "bugfix", outcome="fail"),
            TaskResult("c", "bugfix", outcome=INFRA_ERROR, reason="the Docker engine restarted"),
            TaskResult("d", "bugfix", outcome="error", reason="harness bug: KeyError: 'x'"),
            TaskResult("e", "bugfix", outcome="error", stop_reason="model_error", reason="model_error: 500")]
    start_run(tmp_path, {"k": 1}, resume=False)
    write_results(RunResult(CARD, done), tmp_path)
    kept = start_run(tmp_path, {"k": 1}, resume=True, rerun_errors=not keep_errors)
    assert [t.task_id for t in kept] == (["a", "b", "c", "d", "e"] if keep_errors else ["a", "b", "e"])
    assert [finished(t) for t in done] == [True, True, False, False, True]


def test_resume_never_reruns_an_attempt_whose_agent_had_ended(tmp_path):
    """Whatever broke once the end state existed (sealing, grading), running the agent again
    would give a failing end state another try."""
    done = [TaskResult("a", "bugfix", outcome="error", stop_reason="ended",
                       reason="harness bug: UnicodeEncodeError: 'utf-8' codec can't encode"),
            TaskResult("b", "bugfix", outcome=INFRA_ERROR, tree_hash="abc", reason="the Docker engine restarted"),
            TaskResult("c", "bugfix", outcome="error", stop_reason="harness_error", reason="harness_error: x")]
    start_run(tmp_path, {"k": 1}, resume=False)
    write_results(RunResult(CARD, done), tmp_path)
    assert [t.task_id for t in start_run(tmp_path, {"k": 1}, resume=True)] == ["a", "b"]


@pytest.mark.parametrize("raised, outcome, reason", [
    (KeyError("x"), "error", "harness bug: KeyError: 'x'"),
    (ConnectionResetError(104, "reset by peer"), INFRA_ERROR, "the connection to the Docker engine broke"),
    (UserError("task t: no fixture"), "error", "task t: no fixture"),
    # The sandbox's own runner hung (under a grader, say): the task is run again, never judged on it.
    (CommandWedged("command in container abc outlived its deadline by 30s"), INFRA_ERROR,
     "a sandbox's command runner hung (command in container abc outlived its deadline by 30s)"),
])
def test_whatever_a_task_raises_becomes_its_result(raised, outcome, reason):
    def run():
        raise raised
    result = guarded(run, TaskResult("t", "bugfix", outcome="error"), None)
    assert result.outcome == outcome and result.reason.startswith(reason)


def test_a_tasks_check_row_the_machinery_failed_under_is_graded_again(monkeypatch):
    from endstate.checks import _check

    raised = [CommandWedged("command in container abc outlived its deadline by 30s"), None]
    graded = []

    def check_case(plan, case, backend, image):
        graded.append(case)
        fault = raised.pop(0)
        if fault:
            raise fault
        return _check.CheckRow("solution", "pass", "pass", ok=True)

    monkeypatch.setattr(_check, "_check_case", check_case)
    monkeypatch.setattr(_check, "wait_for_engine", lambda watch, seconds, cancelled: True)
    row = _check._check_case_again_on_faults(None, "solution", "docker", "image")
    assert row.ok and len(graded) == 2
    assert "graded again after: a sandbox's command runner hung" in row.note


@pytest.mark.parametrize("fault, tries", [
    (CommandWedged("command in container abc outlived its deadline by 30s"), 3),  # given up after three
    (ValueError("a bug of ours"), 1),  # not the machinery's: never graded again
])
def test_a_tasks_check_row_is_graded_again_only_for_the_machinery_and_only_so_often(monkeypatch, fault, tries):
    from endstate.checks import _check

    graded = []

    def check_case(plan, case, backend, image):
        graded.append(case)
        raise fault

    monkeypatch.setattr(_check, "_check_case", check_case)
    monkeypatch.setattr(_check, "wait_for_engine", lambda watch, seconds, cancelled: True)
    with pytest.raises(type(fault)):
        _check._check_case_again_on_faults(None, "solution", "docker", "image")
    assert len(graded) == tries
