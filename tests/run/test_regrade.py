"""A fault of the machinery while a sealed attempt is graded grades that snapshot again: the
agent does not run again and the model is not asked again. Before sealing, the attempt is
run again from scratch, as ever. The runner's branches, with an in-memory sandbox."""

from __future__ import annotations

from pathlib import Path

import pytest

from endstate.agent import AgentOutcome, Counters
from endstate.errors import CommandWedged
from endstate.grading import Grader, Verdict
from endstate.run import RetryPolicy, RunConfig, _runner
from endstate.run._attempt import Prepared
from endstate.sandbox import ExecResult, FileEntry, Sandbox, SandboxLimits
from endstate.task import TaskSandbox, load_task

ROOT = Path(__file__).resolve().parents[2]
TASK = load_task(ROOT / "tasks" / "bugfix-lru-eviction")
FIXTURE = {"calc.py": FileEntry(0o644, b"def double(x):\n    return x + 1\n")}
END_STATE = {"calc.py": FileEntry(0o644, b"def double(x):\n    return x * 2\n")}


class MemorySandbox(Sandbox):
    """A workspace held in memory; commands do nothing and succeed."""

    backend = "memory"

    def __init__(self, tree=None):
        self.tree, self.harness, self.closed = dict(tree or {}), {}, False
        self.limits = SandboxLimits()

    def exec(self, command, *, timeout=None):
        return ExecResult(0, "", "")

    def read_file(self, path):
        return self.tree[path].data

    def write_file(self, path, data):
        self.tree[path] = FileEntry(0o644, data)

    def put_tree(self, tree):
        self.tree.update(tree)

    def get_tree(self, *, max_bytes=None, sealing=False):
        return dict(self.tree)

    def stop(self):
        pass

    def put_harness_tree(self, tree, *, at="/workspace", owner="root"):
        self.harness[at] = tree

    def read_folder(self, path, *, max_bytes):
        raise FileNotFoundError(path)

    def read_path(self, path, *, max_bytes):
        raise FileNotFoundError(path)

    def handle(self):
        raise NotImplementedError

    @classmethod
    def attach(cls, handle):
        raise NotImplementedError

    def close(self):
        self.closed = True


class _GradingBox:
    made: list[MemorySandbox] = []

    def __init__(self, *args, **kwargs):
        self.box = MemorySandbox()
        _GradingBox.made.append(self.box)

    def get(self):
        return self.box

    def close(self):
        self.box.close()


@pytest.fixture
def suite(monkeypatch, tmp_path):
    agents = []

    def run_agent(self, task, live, fixture, trial=0):
        agents.append(task.id)
        if self.agent_fault and len(agents) == 1:
            raise CommandWedged("command in container abc outlived its deadline by 30s")
        live.put_tree(END_STATE)
        return AgentOutcome("submitted", "", Counters(steps=3), sandbox_s=1.5)

    def prepare(self, key):
        return Prepared(dict(FIXTURE), {}, TaskSandbox("image", SandboxLimits()), MemorySandbox(FIXTURE))

    monkeypatch.setattr(_runner._Suite, "_run_agent", run_agent)
    monkeypatch.setattr(_runner._Suite, "_prepare", prepare)
    monkeypatch.setattr(_runner, "GradingBox", _GradingBox)
    _GradingBox.made = []
    config = RunConfig(model="scripted/null", infra=RetryPolicy(tries=3, backoff_s=0.0, engine_wait_s=0.0))
    made = _runner._Suite(config, tmp_path, "memory", lambda result: None, [(TASK, 0)])
    made.agent_fault = False
    yield made, agents
    made.close()


def _grader(faults: int, seen: list):
    def graded_end_state(sandbox) -> Verdict:
        seen.append(sandbox.read_text("calc.py"))
        if len(seen) <= faults:
            raise CommandWedged("command in container abc outlived its deadline by 30s")
        return Verdict.ok()
    return Grader("graded_end_state", graded_end_state)


def test_a_fault_while_a_sealed_attempt_is_graded_grades_its_snapshot_again(suite):
    made, agents = suite
    seen: list[str] = []
    result = made.run_task(TASK, [_grader(1, seen)])
    assert result.outcome == "pass" and result.infra_retries == 1, result
    assert agents == [TASK.id]  # the agent ran once
    assert seen == [END_STATE["calc.py"].data.decode()] * 2  # the same end state, graded twice
    assert len(_GradingBox.made) == 2  # a fresh grading sandbox for the second
    assert result.stop_reason == "submitted" and result.counters.steps == 3 and result.tree_hash
    assert not made.sealed  # forgotten once the attempt is done


def test_faults_past_the_retries_leave_the_attempt_an_infra_error_and_the_agent_run_once(suite):
    made, agents = suite
    seen: list[str] = []
    result = made.run_task(TASK, [_grader(5, seen)])
    assert result.outcome == "infra_error" and result.infra_retries == 2 and len(seen) == 3
    assert agents == [TASK.id]


def test_a_fault_before_sealing_runs_the_attempt_again_from_scratch(suite):
    made, agents = suite
    made.agent_fault = True
    seen: list[str] = []
    result = made.run_task(TASK, [_grader(0, seen)])
    assert result.outcome == "pass" and result.infra_retries == 1, result
    assert agents == [TASK.id, TASK.id] and len(seen) == 1
