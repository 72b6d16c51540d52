"""An in-memory sandbox and a runner built on it: the fast layer under the runner's branches.

The Docker tests keep what needs a real engine; a branch of the runner (retries, regrades,
the ways an attempt ends before its judge) is tested here once, in-process, in milliseconds.
`memory_suite` gives a `_Suite` whose agent is a function of the test's and whose sandboxes,
agent and grading alike, are `MemorySandbox`es.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from endstate.agent import AgentOutcome, Counters
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



class MemorySuite:
    """A runner over memory sandboxes. `agent(task, live)` stands for the agent's part: it may
    change `live` and returns its AgentOutcome (default: leaves END_STATE, submitted)."""

    def __init__(self, monkeypatch, tmp_path, **config):
        self.agents: list[str] = []
        self.agent = lambda task, live: (live.put_tree(END_STATE), AgentOutcome("submitted", "", Counters(steps=3),
                                                                                 sandbox_s=1.5))[1]
        suite = self

        def run_agent(runner, task, live, fixture, trial=0):
            suite.agents.append(task.id)
            return suite.agent(task, live)

        def prepare(runner, key):
            return Prepared(dict(FIXTURE), {}, TaskSandbox("image", SandboxLimits()), MemorySandbox(FIXTURE))

        monkeypatch.setattr(_runner._Suite, "_run_agent", run_agent)
        monkeypatch.setattr(_runner._Suite, "_prepare", prepare)
        monkeypatch.setattr(_runner, "GradingBox", _GradingBox)
        _GradingBox.made = []
        config.setdefault("infra", RetryPolicy(tries=3, backoff_s=0.0, engine_wait_s=0.0))
        self.runner = _runner._Suite(RunConfig(model="scripted/null", **config), tmp_path, "memory",
                                     lambda result: None, [(TASK, 0)])

    def close(self):
        self.runner.close()


@pytest.fixture
def memory_suite(monkeypatch, tmp_path):
    made = MemorySuite(monkeypatch, tmp_path)
    yield made
    made.close()
