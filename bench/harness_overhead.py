"""Harness overhead per agent step: loop + permission policy + output normalisation +
journal, with the model and the sandbox taken out (both answer instantly, in memory).

Plays every task's reference trajectory against its fixture held in memory, so the
commands, file sizes and tool outputs are the real ones' shape.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

from endstate.agent import Agent, Journal, Policy  # noqa: E402
from endstate.models import Completion, Message, ToolCall, Usage  # noqa: E402
from endstate.sandbox import ExecResult, Sandbox  # noqa: E402
from endstate.sandbox._tree import FileEntry  # noqa: E402
from endstate.task import load_suite  # noqa: E402

PYTEST_OUTPUT = "....F...\n" * 20 + "FAILED tests/test_x.py::test_y - assert 1 == 2\n1 failed, 159 passed in 0.42s\n"


class InstantSandbox:
    def __init__(self, tree):
        self.files = {p: e.data for p, e in tree.items()}

    def exec(self, command, *, timeout=None):
        return ExecResult(1, PYTEST_OUTPUT, "")

    def read_file(self, path):
        if path not in self.files:
            raise FileNotFoundError(path)
        return self.files[path]

    def write_file(self, path, data):
        self.files[path] = data

    edit_file = Sandbox.edit_file

    def get_tree(self):
        return {p: FileEntry(0o644, d) for p, d in self.files.items()}


class InstantModel:
    spec = "bench/instant"

    def __init__(self, steps):
        self.steps = steps

    def complete(self, messages, tools, *, channel, turn, tool_choice="auto"):
        if channel == "compaction" or turn >= len(self.steps) or not self.steps[turn].calls:
            return Completion(Message("assistant", "done"), Usage(10, 2))
        calls = tuple(ToolCall(f"c{turn}_{i}", c.tool, json.dumps(c.args)) for i, c in enumerate(self.steps[turn].calls))
        return Completion(Message("assistant", "", tool_calls=calls), Usage(10, 2))

    def close(self):
        pass


def main() -> None:
    tasks, _ = load_suite(ROOT / "tasks")
    policy = Policy.default()
    steps = 0
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for task in tasks:
            journal = Journal(Path(tmp) / f"{task.id}.json")
            agent = Agent(InstantModel(task.reference().steps), InstantSandbox(task.fixture()), policy=policy,
                          budget=task.manifest.budget, journal=journal)
            state, _ = agent.run(task.prompt)
            steps += state.counters.steps
    elapsed = time.perf_counter() - start
    print(f"{steps} steps over {len(tasks)} tasks in {elapsed:.2f} s: {1000 * elapsed / steps:.1f} ms per step "
          "(loop, policy, normalisation, journal, tree hash; no model, no sandbox)")


if __name__ == "__main__":
    main()
