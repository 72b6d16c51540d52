"""A pytest plugin: replay a task suite as pytest items, one per task.

    pytest --endstate-suite tasks --endstate-replay cassettes/scripted-reference

collects one item per task (its id is the task id, so `-k` selects tasks), replays
the selected tasks offline through the library, and fails an item with its failing
grader's reason or the divergence report. The usual results folder is written too.
Without `--endstate-suite` the plugin does nothing: no collection changes, and none of
endstate's heavier modules is imported.

The selected tasks run together, in parallel (`--endstate-jobs`), when the first
item is set up; each item then reports its own task's result.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

__all__ = ["SuiteDirectory", "TaskItem", "TaskFailed"]

_RUN = pytest.StashKey["_SuiteRun"]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("endstate", "endstate: replay a task suite, one item per task")
    group.addoption("--endstate-suite", metavar="DIR", default=None,
                    help="Folder of endstate tasks to collect, one item per task (turns the plugin on).")
    group.addoption("--endstate-replay", metavar="DIR", default=None,
                    help="Cassette folder to replay offline (required with --endstate-suite).")
    group.addoption("--endstate-model", metavar="SPEC", default=None,
                    help="Model the cassettes were recorded with (default: read from the cassettes).")
    group.addoption("--endstate-agent", metavar="NAME", default=None,
                    help="Agent the cassettes were recorded with: a shipped agent or an agent file "
                    "(default: endstate's own loop).")
    group.addoption("--endstate-match", choices=["strict", "sequence"], default="strict",
                    help="strict: by request hash (default); sequence: recorded answers in order.")
    group.addoption("--endstate-jobs", metavar="N", type=int, default=1, help="Tasks run in parallel (default 1).")
    group.addoption("--endstate-out", metavar="DIR", default=None,
                    help="Results folder (default: runs/<model-slug>).")
    group.addoption("--endstate-sandbox", choices=["auto", "docker", "local"], default="auto",
                    help="Sandbox backend (default auto).")
    group.addoption("--endstate-image", metavar="TAG", default=None, help="Sandbox image (default: endstate's own).")
    group.addoption("--endstate-record-mode", choices=["none", "once", "new_episodes", "all"], default="none",
                    help="none: replay (default); once: record the tasks without a cassette; new_episodes: live "
                    "from each cassette's first divergence; all: record every task (these need --endstate-model).")
    group.addoption("--endstate-executor", choices=["local", "ray"], default="local",
                    help="Run tasks here or on a Ray cluster (default local).")
    group.addoption("--endstate-ray-address", metavar="HOST:PORT", default=None, help="Ray cluster to join.")


#: The options that mean something only with --endstate-suite, by their dest.
_NEEDS_SUITE = ("replay", "model", "agent", "out", "image", "ray_address")


def pytest_configure(config: pytest.Config) -> None:
    suite = config.getoption("endstate_suite")
    if not suite:  # an option of the plugin given alone would be ignored and the project's tests run instead
        given = [name for name in _NEEDS_SUITE if config.getoption(f"endstate_{name}")]
        if given:
            flag = "--endstate-" + given[0].replace("_", "-")
            raise pytest.UsageError(f"{flag} needs --endstate-suite DIR (the folder of tasks to replay)")
        return
    suite_dir = Path(suite).resolve()
    if not suite_dir.is_dir():
        raise pytest.UsageError(f"--endstate-suite {suite}: no such folder of tasks")
    if not any((folder / "task.toml").is_file() for folder in suite_dir.iterdir()):
        if (suite_dir / "task.toml").is_file():
            raise pytest.UsageError(f"--endstate-suite {suite} is a task folder, not a suite of them: "
                                    f"pass the folder it is in, {suite_dir.parent}")
        raise pytest.UsageError(f"--endstate-suite {suite}: no task in it (a task is a folder holding task.toml)")
    replay = config.getoption("endstate_replay")
    if not replay:
        raise pytest.UsageError("--endstate-suite needs --endstate-replay DIR (the cassettes to replay offline)")
    if not Path(replay).is_dir():
        raise pytest.UsageError(f"--endstate-replay {replay}: no such folder of cassettes")
    if config.getoption("endstate_record_mode") != "none" and not config.getoption("endstate_model"):
        raise pytest.UsageError(f"--endstate-record-mode {config.getoption('endstate_record_mode')} records: "
                                "pass --endstate-model, the model to record")
    if config.getoption("endstate_jobs") < 1:
        raise pytest.UsageError("--endstate-jobs must be at least 1")
    config.stash[_RUN] = _SuiteRun(config, suite_dir)
    # Asked for the suite alone, pytest collects the suite alone (not the project's testpaths);
    # next to explicit paths, the suite is collected as well.
    if config.args_source is pytest.Config.ArgsSource.ARGS:
        config.args = [*config.args, str(suite_dir)]
    else:
        config.args = [str(suite_dir)]


@pytest.hookimpl(tryfirst=True)
def pytest_collect_directory(path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    run = parent.config.stash.get(_RUN, None)
    if run is None or path != run.suite:
        return None
    return SuiteDirectory.from_parent(parent, path=path)


def pytest_report_header(config: pytest.Config) -> str | None:
    run = config.stash.get(_RUN, None)
    if run is None:
        return None
    return f"endstate: suite {run.suite}, replaying {config.getoption('endstate_replay')}"


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    run = config.stash.get(_RUN, None)
    if run is not None and run.out is not None:
        for task_id, done in sorted(run.provenance.items()):
            terminalreporter.write_line(f"endstate: {task_id}: {done}")
        if (run.out / "results.json").is_file():  # a run refused before it began wrote none
            terminalreporter.write_line(f"endstate results: {run.out / 'results.json'}")


class TaskFailed(Exception):
    """A task that did not pass; its message is the whole report."""


class SuiteDirectory(pytest.Directory):
    """The suite folder: one item per task folder, nothing collected inside them."""

    def collect(self) -> list[pytest.Item]:
        return [TaskItem.from_parent(self, name=folder.name, path=folder / "task.toml")
                for folder in sorted(self.path.iterdir()) if (folder / "task.toml").is_file()]


class TaskItem(pytest.Item):
    """One task of the suite; passes when the task passes."""

    def setup(self) -> None:
        self.config.stash[_RUN].run_for(self)

    def runtest(self) -> None:
        problem = self.config.stash[_RUN].problem_of(self.name)
        if problem:
            raise TaskFailed(problem)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, TaskFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"endstate task {self.name}"


class _SuiteRun:
    """The session's one run of the selected tasks, and what became of each."""

    def __init__(self, config: pytest.Config, suite: Path) -> None:
        self.config = config
        self.suite = suite
        self.out: Path | None = None
        self.ran = False
        self.problems: dict[str, str] = {}
        #: With a record mode: what was done with each task's cassette.
        self.provenance: dict[str, str] = {}

    def option(self, name: str) -> Any:
        return self.config.getoption(f"endstate_{name}")

    def problem_of(self, task_id: str) -> str:
        return _in_pytest(self.problems.get(task_id, ""))

    def run_for(self, item: TaskItem) -> None:
        if self.ran:
            return
        self.ran = True
        selected = [i.name for i in item.session.items if isinstance(i, TaskItem)]
        try:
            self._run(selected)
        except Exception as exc:  # the run itself could not happen: every task says why
            from endstate.errors import EndstateError

            why = str(exc) if isinstance(exc, EndstateError) else f"{type(exc).__name__}: {exc}"
            for task_id in selected:
                self.problems.setdefault(task_id, f"the suite did not run: {why}")

    def _run(self, selected: list[str]) -> None:
        from endstate.agents import find_agent
        from endstate.cassettes import RunMode
        from endstate.errors import UserError
        from endstate.models import RunSettings
        from endstate.run import RunConfig, RunOutcome, model_slug, prepare_replay, resolve_graders, suite_runner
        from endstate.sandbox import DEFAULT_IMAGE
        from endstate.task import load_task

        tasks = []
        for task_id in selected:
            try:
                task = load_task(self.suite / task_id)
                resolve_graders(task)
                tasks.append(task)
            except UserError as exc:
                self.problems[task_id] = f"the task does not load: {exc}"
        replay = Path(self.option("replay"))
        model = self.option("model") or _recorded_model(replay, [t.id for t in tasks])
        recording = self.option("record_mode") != "none"  # the replay folder is also where it records
        config = RunConfig(model=model, settings=RunSettings(), sandbox=self.option("sandbox"),
                           image=self.option("image") or DEFAULT_IMAGE, jobs=self.option("jobs"),
                           mode=RunMode.RECORD if recording else RunMode.REPLAY, cassettes=str(replay),
                           match=self.option("match"),
                           overwrite=recording, record_mode=self.option("record_mode") if recording else "",
                           agent=_agent_name(self.option("agent")))
        if not recording:
            # The settings a replay asks with are the recording's, as `endstate eval --replay` takes them:
            # a recording at another temperature, seed or tool choice is replayed, not diverged from. A
            # task whose cassette is unusable still runs, to fail with the harness's reason.
            _, config, _ = prepare_replay(tasks, config)
        # The folder `endstate eval` would write by default: an installed agent's name first, so its run
        # never lands on the run of endstate's own loop with the same model.
        agent = find_agent(config.agent)
        self.out = Path(self.option("out") or Path("runs") / ((f"{agent.name}-" if agent else "") + model_slug(model)))
        run_suite = suite_runner(self.option("executor"), self.option("ray_address"))
        result = run_suite(tasks, config, self.out, suite_root=self.suite)
        for task in result.tasks:
            if recording and task.provenance:
                self.provenance[task.task_id] = task.provenance.describe()
            if task.outcome != RunOutcome.PASS:
                self.problems[task.task_id] = _explain(task, self.out)


#: The options of `endstate eval` the harness's messages may name that this plugin spells --endstate-NAME.
_FLAG = re.compile(r"(?<![\w-])--(match|model|agent|sandbox|image|executor|ray-address|record-mode|out|jobs)\b")


def _in_pytest(text: str) -> str:
    """A message written for `endstate eval`, with its options as they are given to pytest."""
    return _FLAG.sub(r"--endstate-\1", text)


def _agent_name(agent: str | None) -> str:
    """The run's agent as `endstate eval --agent` names it: "" for endstate's own loop."""
    from endstate.agents import find_agent

    return agent if agent and find_agent(agent) is not None else ""


def _recorded_model(replay: Path, task_ids: list[str]) -> str:
    """The model the cassettes were recorded with, from the first one that reads."""
    from endstate.cassettes import cassette_file, load
    from endstate.errors import CassetteError, UserError

    first = None
    for task_id in task_ids:
        try:
            return load(cassette_file(replay, task_id)).header.model
        except CassetteError as exc:
            first = first or exc
    if task_ids and not any(cassette_file(replay, task_id).is_file() for task_id in task_ids):
        raise UserError(f"{replay} holds no cassette of these tasks (e.g. {cassette_file(replay, task_ids[0])}): "
                        "pass the folder `endstate record` wrote them to as --endstate-replay")
    raise UserError(f"no readable cassette in {replay} names its model ({first}): pass --endstate-model")


def _explain(task: Any, out: Path) -> str:
    """A failing task's report: outcome and reason first, then each grader's verdict."""
    head = f"{task.outcome}: " + (f"{task.failing_grader}: " if task.failing_grader else "") + (task.reason or "")
    lines = [head.rstrip()]
    if task.verdicts:
        lines.append("graders: " + ", ".join(f"{v.grader} {v.outcome}" for v in task.verdicts))
    from endstate.run import RunFolder

    transcript = RunFolder(out).transcript(task.task_id)
    if transcript.is_file():
        lines.append(f"transcript: {transcript}")
    return "\n".join(lines)
