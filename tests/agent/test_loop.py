"""The agent loop against a scripted in-process model and an in-memory sandbox."""

from __future__ import annotations

import json

import pytest

from endstate.agent import Agent, Guards, Journal, Policy
from endstate.models import Completion, Message, ModelError, ToolCall, Usage
from endstate.sandbox import ExecResult, Sandbox
from endstate.sandbox._tree import FileEntry
from endstate.task import Budget


class MemorySandbox:
    """Files in a dict; `exec` understands `append TEXT FILE` and `echo TEXT`."""

    def __init__(self, files: dict[str, str] | None = None) -> None:
        self.files = {k: v.encode() for k, v in (files or {}).items()}
        self.commands: list[str] = []

    def exec(self, command: str, *, timeout=None) -> ExecResult:
        self.commands.append(command)
        words = command.split()
        if words[0] == "append":
            self.files[words[2]] = self.files.get(words[2], b"") + words[1].encode() + b"\n"
        return ExecResult(0, " ".join(words[1:]) + "\n" if words[0] == "echo" else "", "")

    def read_file(self, path: str) -> bytes:
        if path not in self.files:
            raise FileNotFoundError(path)
        return self.files[path]

    def write_file(self, path: str, data: bytes) -> None:
        self.files[path] = data

    edit_file = Sandbox.edit_file  # read, count, write: the base class's own way

    def get_tree(self):
        return {p: FileEntry(0o644, d) for p, d in self.files.items()}


def call(name: str, args: dict | str, n: int = 0) -> ToolCall:
    return ToolCall(f"c{n}", name, args if isinstance(args, str) else json.dumps(args))


class ScriptModel:
    """Answers agent turns from a list; compaction requests with a fixed summary."""

    spec = "test/script"

    def __init__(self, turns: list[list[ToolCall] | str], usage: int = 10) -> None:
        self.turns = turns
        self.usage = usage
        self.requests: list[tuple[str, int, list[Message]]] = []

    def complete(self, messages, tools, *, channel, turn, tool_choice="auto"):
        self.requests.append((channel, turn, list(messages)))
        if channel == "compaction":
            return Completion(Message("assistant", "SUMMARY"), Usage(self.usage, 5))
        step = self.turns[turn] if turn < len(self.turns) else "done"
        if isinstance(step, str):
            return Completion(Message("assistant", step), Usage(self.usage, 5))
        return Completion(Message("assistant", "", tool_calls=tuple(step)), Usage(self.usage, 5))

    def close(self) -> None:
        pass


def run(model, sandbox, tmp_path, *, budget=Budget(), guards=Guards(), **kwargs):
    agent = Agent(model, sandbox, policy=Policy.default(), budget=budget, journal=Journal(tmp_path / "j.json"),
                  guards=guards, **kwargs)
    return agent.run("fix it")


def test_runs_tools_until_the_model_stops(tmp_path):
    box = MemorySandbox({"a.py": "x = 1\n"})
    model = ScriptModel([[call("read_file", {"path": "a.py"})],
                         [call("edit_file", {"path": "a.py", "old": "x = 1", "new": "x = 2"}, 1)],
                         "fixed"])
    state, end = run(model, box, tmp_path)
    assert end.stop_reason == "model_stopped"
    assert box.files["a.py"] == b"x = 2\n"
    c = state.counters
    assert (c.steps, c.tool_calls, c.tool_errors, c.denied_calls) == (3, 2, 0, 0)
    assert (c.input_tokens, c.output_tokens) == (30, 15)
    assert state.messages[3] == Message("tool", "x = 1\n", tool_call_id="c0")


@pytest.mark.parametrize("bad", [
    call("read_file", "{not json"),
    call("read_file", {"file": "a.py"}),
    call("launch_rockets", {}),
    call("edit_file", {"path": "a.py", "old": "nope", "new": "x"}),
    call("bash", {"command": 42}),
])
def test_malformed_calls_are_counted_tool_errors_not_crashes(tmp_path, bad):
    box = MemorySandbox({"a.py": "x = 1\n"})
    state, end = run(ScriptModel([[bad], "ok"]), box, tmp_path)
    assert end.stop_reason == "model_stopped"
    assert state.counters.tool_errors == 1
    assert state.messages[3].content.startswith("error:")


def test_denied_call_is_counted_and_never_runs(tmp_path):
    box = MemorySandbox()
    state, _ = run(ScriptModel([[call("bash", {"command": "rm -rf data"})], "ok"]), box, tmp_path)
    assert state.counters.denied_calls == 1
    assert box.commands == []
    assert state.messages[3].content.startswith("denied:")


def test_without_the_policy_guard_the_call_runs(tmp_path):
    box = MemorySandbox()
    run(ScriptModel([[call("bash", {"command": "rm -rf data"})], "ok"]), box, tmp_path,
        guards=Guards(permission_policy=False))
    assert box.commands == ["rm -rf data"]


def test_step_budget_ends_the_run(tmp_path):
    model = ScriptModel([[call("bash", {"command": f"echo {i}"}, i)] for i in range(10)])
    state, end = run(model, MemorySandbox(), tmp_path, budget=Budget(max_steps=3))
    assert end.stop_reason == "max_steps" and state.counters.steps == 3


def test_endless_repetition_ends_the_run(tmp_path):
    model = ScriptModel([[call("bash", {"command": "echo same"})] for _ in range(10)])
    state, end = run(model, MemorySandbox(), tmp_path)
    assert end.stop_reason == "repetition" and state.counters.steps == 4


def test_model_error_ends_the_run_as_model_error(tmp_path):
    class Broken(ScriptModel):
        def complete(self, *a, **k):
            raise ModelError("server said 500", provider="openai-compatible", base_url="http://x", status=500)

    _, end = run(Broken([]), MemorySandbox(), tmp_path)
    assert end.stop_reason == "model_error" and "500" in end.detail


def test_finish_tool_when_tool_choice_is_required(tmp_path):
    model = ScriptModel([[call("finish", {"summary": "done"})]])
    state, end = run(model, MemorySandbox(), tmp_path, tool_choice="required")
    assert end.stop_reason == "model_stopped" and end.detail == "finish_tool"


def test_context_budget_compacts_and_counts(tmp_path):
    box = MemorySandbox({f"m{i}.py": "x" * 2000 for i in range(6)})
    model = ScriptModel([[call("read_file", {"path": f"m{i}.py"}, i)] for i in range(6)] + ["done"], usage=0)
    state, _ = run(model, box, tmp_path, budget=Budget(context_tokens=1500))
    assert state.counters.compaction_events >= 1
    assert [r[0] for r in model.requests].count("compaction") == state.counters.compaction_events
    # After compaction the transcript restarts from the prompt plus the summary.
    assert any("SUMMARY" in m.content for m in state.messages if m.role == "user")
    # Agent turns keep counting across compactions.
    assert [r[1] for r in model.requests if r[0] == "agent"] == list(range(7))


def test_without_the_budget_guard_nothing_is_compacted(tmp_path):
    box = MemorySandbox({f"m{i}.py": "x" * 2000 for i in range(6)})
    model = ScriptModel([[call("read_file", {"path": f"m{i}.py"}, i)] for i in range(6)] + ["done"], usage=0)
    state, _ = run(model, box, tmp_path, budget=Budget(context_tokens=1500), guards=Guards(context_budget=False))
    assert state.counters.compaction_events == 0


class Killed(Exception):
    pass


def _killed_run(tmp_path, box):
    """Run until tool call 2 has changed the sandbox, then die before journaling its result."""
    turns = [[call("bash", {"command": "echo hi"}, 0)], [call("bash", {"command": "append row data.csv"}, 1)], "done"]

    def die(calls: int) -> None:
        if calls == 2:
            raise Killed

    with pytest.raises(Killed):
        run(ScriptModel(turns), box, tmp_path, on_tool_done=die)
    return turns


@pytest.mark.parametrize("reconcile, rows", [(True, b"row\n"), (False, b"row\nrow\n")])
def test_resume_reconciles_the_call_in_flight_from_the_sandbox(tmp_path, reconcile, rows):
    box = MemorySandbox()
    turns = _killed_run(tmp_path, box)
    assert box.files["data.csv"] == b"row\n"
    state, end = run(ScriptModel(turns), box, tmp_path, guards=Guards(resume_reconciliation=reconcile))
    assert end.stop_reason == "model_stopped"
    assert state.counters.resumes == 1
    assert box.files["data.csv"] == rows  # re-running the append blindly doubles it
    assert state.counters.tool_calls == 2


def test_resume_reruns_a_call_that_never_took_effect(tmp_path):
    box = MemorySandbox()
    turns = _killed_run(tmp_path, box)
    del box.files["data.csv"]  # as if the process died before the command ran
    state, _ = run(ScriptModel(turns), box, tmp_path)
    assert box.files["data.csv"] == b"row\n"


def test_context_overflow_ends_the_run_as_a_budget_stop_and_is_graded(tmp_path):
    class Overflowing(ScriptModel):
        def complete(self, *a, **k):
            raise ModelError("openai-compatible/smollm2 at http://x: HTTP 400 (Requested tokens (5000) exceed "
                             "context window of 4096)", provider="openai-compatible", base_url="http://x", status=400)

    _, end = run(Overflowing([]), MemorySandbox(), tmp_path)
    assert end.stop_reason == "context_overflow"


class SlowSandbox(MemorySandbox):
    """Every command times out having printed something partial."""

    def exec(self, command, *, timeout=None):
        self.commands.append((command, timeout))
        return ExecResult(124, "partial output\n", "half a line", timed_out=True)


def test_a_timed_out_command_keeps_no_timing_dependent_output(tmp_path):
    box = SlowSandbox()
    state, _ = run(ScriptModel([[call("bash", {"command": "sleep 99", "timeout": 5})], "ok"]), box, tmp_path)
    text = state.messages[3].content
    assert "timed out after 5 s" in text and "partial" not in text and "half a line" not in text


@pytest.mark.parametrize("asked, used", [(0, 120.0), (-3, 120.0), (0.01, 1.0), (5, 5.0), (10_000, 120.0)])
def test_the_models_timeout_is_clamped(tmp_path, asked, used):
    box = SlowSandbox()
    run(ScriptModel([[call("bash", {"command": "true", "timeout": asked})], "ok"]), box, tmp_path,
        budget=Budget(command_timeout=120.0))
    assert box.commands == [("true", used)]


class FinishingSandbox(MemorySandbox):
    """Every command finishes, whatever timeout it was given."""

    def exec(self, command, *, timeout=None):
        self.commands.append((command, timeout))
        return ExecResult(0, "done\n", "")


@pytest.mark.parametrize("recorded, used", [
    (None, 1.0),  # live, or nothing recorded: the model's own timeout
    ("exit code: 0\nstdout:\ndone\n", 120.0),  # it finished in the recorded run: a busy machine must not time it out
    ("exit code: 124 (timed out after 1 s; output of a timed-out command is not kept, since it depends on timing)", 1.0),
])
def test_replay_settles_a_commands_race_with_its_timeout_as_the_recording_did(tmp_path, recorded, used):
    asked = []
    box = FinishingSandbox()
    state, _ = run(ScriptModel([[call("bash", {"command": "python -m pytest", "timeout": 1})], "ok"]), box, tmp_path,
                   budget=Budget(command_timeout=120.0),
                   recorded_result=lambda turn, call_id: asked.append((turn, call_id)) or recorded)
    assert box.commands == [("python -m pytest", used)]
    assert asked == [(1, "c0")]  # by its id, and the turn whose request carries its result
    assert state.messages[3].content == "exit code: 0\nstdout:\ndone\n"  # the result itself is this run's
