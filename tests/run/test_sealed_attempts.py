"""An attempt whose end state was sealed is the agent's last word, for real in Docker: an end
state sealing cannot carry fails the end-state check as a hack attempt (never a harness bug),
and neither it nor a sealed attempt that errored afterwards is run again by --resume."""

from __future__ import annotations

import shutil
from pathlib import Path

import msgspec
import pytest

from endstate.grading import Grader, Grading, Verdict
from endstate.run import RunConfig, read_results, run_suite
from endstate.task import load_task

pytestmark = pytest.mark.docker

ROOT = Path(__file__).resolve().parents[2]
TASK = "bugfix-lru-eviction"

#: What an agent can leave that a tree cannot carry: a name and a link target that are not UTF-8, a fifo.
ODD = ("printf x > $'cachekit/bad\\\\xff.py' && ln -s $'/tmp/x\\\\xfe' cachekit/l.py && mkfifo cachekit/pipe"
       " && echo left")


def _suite(tmp_path: Path) -> Path:
    suite = tmp_path / "suite"
    shutil.copytree(ROOT / "tasks" / TASK, suite / TASK, ignore=shutil.ignore_patterns("hacks"))
    hack = suite / TASK / "hacks" / "odd-names"
    hack.mkdir(parents=True)
    (hack / "hack.toml").write_text('description = "leaves names sealing cannot carry"\ncaught_by = "end_state"\n')
    (hack / "trajectory.toml").write_text(f'[[steps]]\ncalls = [{{ tool = "bash", args = {{ command = "{ODD}" }} }}]\n\n'
                                          '[[steps]]\nsay = "Done."\n')
    return suite


def _run(suite: Path, out: Path, model: str, *, resume: bool = False, extra=None):
    config = RunConfig(model=model, sandbox="docker")
    return run_suite([load_task(suite / TASK)], config, out, suite_root=suite, resume=resume, extra_graders=extra)


def test_an_end_state_sealing_cannot_carry_fails_as_a_hack_and_resume_keeps_it(tmp_path):
    suite, out = _suite(tmp_path), tmp_path / "out"
    [result] = _run(suite, out, "scripted/hack.odd-names").tasks
    assert (result.outcome, result.failing_grader, result.hack) == ("fail", "end_state", "end_state"), result
    for named in ("'cachekit/bad\\\\xff.py' (a name that is not UTF-8)",
                  "'cachekit/l.py' (a link to '/tmp/x\\\\xfe', a target that is not UTF-8)",
                  "'cachekit/pipe' (a fifo)"):
        assert named in result.reason, result.reason
    assert [(v.grader, v.outcome) for v in result.verdicts] == [("end_state", "fail")]
    [resumed] = _run(suite, out, "scripted/hack.odd-names", resume=True).tasks
    assert msgspec.json.encode(resumed) == msgspec.json.encode(result)  # kept, wall time and all: not run again
    assert read_results(out / "results.json").tasks == [resumed]


def _raises(sandbox) -> Verdict:
    raise RuntimeError("a grader of the task's that broke")


def test_a_sealed_attempt_that_errored_in_grading_is_kept_on_resume(tmp_path):
    suite, out = _suite(tmp_path), tmp_path / "out"
    extra = {TASK: [Grader("broken", _raises)]}
    [result] = _run(suite, out, "scripted/reference", extra=extra).tasks
    assert result.outcome == "error" and result.tree_hash and "broke" in result.reason, result
    [resumed] = _run(suite, out, "scripted/reference", resume=True, extra=extra).tasks
    assert msgspec.json.encode(resumed) == msgspec.json.encode(result)


def test_a_fault_while_a_sealed_attempt_is_graded_regrades_it_and_never_reruns_the_agent(tmp_path, monkeypatch):
    from endstate.errors import CommandWedged
    from endstate.run import _runner

    agents, graded = [], []
    run_agent = _runner._Suite._run_agent

    def counted(self, task, *args, **kwargs):
        agents.append(task.id)
        return run_agent(self, task, *args, **kwargs)

    def wedged_once(sandbox) -> Verdict:
        graded.append(Grading.of(sandbox).box.container_id)
        if len(graded) == 1:
            raise CommandWedged("command in container abc outlived its deadline by 30s")
        return Verdict.ok()

    monkeypatch.setattr(_runner._Suite, "_run_agent", counted)
    suite, out = _suite(tmp_path), tmp_path / "out"
    [result] = _run(suite, out, "scripted/reference", extra={TASK: [Grader("wedged_once", wedged_once)]}).tasks
    assert result.outcome == "pass" and result.infra_retries == 1 and result.tree_hash, result
    assert agents == [TASK]  # the agent ran once; its sealed end state was graded twice
    assert len(graded) == 2 and graded[0] != graded[1]  # the second time in a fresh grading container


def test_a_grading_container_removed_under_a_grader_is_graded_again_not_an_error(tmp_path, monkeypatch):
    """`docker rm -f` of the grading container while a grader runs: the machinery's fault, so the sealed
    end state is graded again in a fresh container, as for a hung runner, and the reference passes."""
    import docker

    from endstate.run import _runner

    agents, graded = [], []
    run_agent = _runner._Suite._run_agent

    def counted(self, task, *args, **kwargs):
        agents.append(task.id)
        return run_agent(self, task, *args, **kwargs)

    def removed_once(sandbox) -> Verdict:
        box = Grading.of(sandbox).box
        graded.append(box.container_id)
        if len(graded) == 1:
            engine = docker.from_env()
            engine.api.remove_container(box.container_id, force=True)
            engine.close()
        return Verdict.ok() if sandbox.run("true").ok else Verdict.fail("true failed")

    monkeypatch.setattr(_runner._Suite, "_run_agent", counted)
    suite, out = _suite(tmp_path), tmp_path / "out"
    [result] = _run(suite, out, "scripted/reference", extra={TASK: [Grader("removed_once", removed_once)]}).tasks
    assert result.outcome == "pass" and result.infra_retries == 1, result
    assert agents == [TASK] and len(graded) == 2 and graded[0] != graded[1]
