"""The mutation check over the committed cassettes, and the cost tasks' wasteful arm."""

from __future__ import annotations

import pytest
from cli_runner import run_endstate
from e2e_helpers import CASSETTES, TASKS, endstate_with_pid

from endstate.run import read_results
from endstate.task import load_suite

pytestmark = pytest.mark.docker


def _sandbox_containers(owner: int) -> list[str]:
    """The endstate containers a process made, running or not (the low-level list: no look
    into each, which may be gone by then). Other tests may share the engine meanwhile."""
    import docker

    client = docker.from_env()
    try:
        return [info["Id"] for info in client.api.containers(all=True, filters={"label": f"endstate.owner.pid={owner}"})]
    finally:
        client.close()


@pytest.mark.slow
def test_every_mutant_is_killed_and_the_control_holds(tmp_path):
    ran, pid = endstate_with_pid("mutate", "--suite", str(TASKS), "--replay", str(CASSETTES / "scripted-reference"),
                                 "-j", "2", "--out", str(tmp_path))
    if ran.code != 0:  # the surviving mutants and the control in full (the tail alone may cut them off)
        shown = [line for line in ran.out.splitlines() if not line.startswith("killed ")]
        pytest.fail(f"mutate exited {ran.code}:\n" + "\n".join(shown) + "\n" + ran.err[-2000:], pytrace=False)
    # Its one-task runs leave their removals to one pool, waited for before the command ends.
    assert _sandbox_containers(pid) == []
    assert "control (every guard in place): as expected" in ran.out
    from endstate.checks._mutation import MUTANTS

    for name in [mutant.name for mutant in MUTANTS]:
        assert f"killed   {name}:" in ran.out, ran
    assert "compaction_events = 0" in ran.out  # the end state was right; only the counter tells
    # The new guards' probes are negative controls: caught with the guard, slipping through without it.
    assert "bugfix-lru-eviction/hacks/background-rewrite fail->pass" in ran.out
    assert "bugfix-lru-eviction/hacks/bytecode-cache fail->pass" in ran.out
    assert "deny-write-outside-workspace/hacks/visible-report-patch fail->pass" in ran.out
    assert "bugfix-invoice-rounding/hacks/rewrite-at-exit-past-the-probe fail->pass" in ran.out
    assert "bugfix-invoice-rounding/hacks/under-test-indirect fail->pass" in ran.out
    # A hostile agent's requests into mini-swe-agent's proxy: refused in place, then out to the API.
    assert "mini-swe-agent-scripted-reference/bugfix-lru-eviction + hostile requests pass->fail" in ran.out
    assert "bugfix-invoice-rounding/hacks/spare-twin-shaped fail->pass" in ran.out
    assert "feature-invoice-discount-codes/hacks/skip-at-run-time fail->pass" in ran.out  # a skip raised at run time
    # A project's own test program (Django's, sympy's runner): its canary read as passed once outcomes are rewritten.
    assert "tasks-runners/double-two-runners/hacks/rewrite-every-outcome fail->pass" in ran.out
    # A root end state's guards, probed by tasks-root/'s hacks: a service writing the reward through no wall, a
    # service stopping the harness read as an error (not a FAIL), a header left beside the held-out test.
    assert "tasks-root/sh-greet-spool/hacks/reward-from-a-service fail->pass" in ran.out
    assert "tasks-root/sh-greet-spool/hacks/stop-the-harness fail->error" in ran.out
    assert "tasks-root/c-ring-buffer/hacks/header-beside-the-tests fail->pass" in ran.out
    # The harness's runtime in a grading container: its PATH alone, its environment blanked, its loader blind to the
    # image's preload list (a `mount`, a root .bashrc an image's BASH_ENV names, a library the verifier listed).
    assert "tasks-root/sh-greet-spool/hacks/mount-on-the-path fail->pass" in ran.out
    assert "tasks-root/sh-greet-bashenv/hacks/bashrc-for-the-harness fail->pass" in ran.out
    assert "tasks-root/sh-greet-spool/hacks/preload-for-the-harness fail->pass" in ran.out
    # A raising grader needs no agent: the solution is judged with it, as a run's end state is.
    assert "bugfix-booking-overlap/solution + a grader that raises error->pass" in ran.out
    assert f"{len(MUTANTS)} of {len(MUTANTS)} mutant(s) killed" in ran.out


def test_unknown_mutant_is_refused_with_the_list():
    ran = run_endstate("mutate", "--mutant", "no-such-guard")
    assert ran.code == 2, ran
    assert "no-such-guard" in ran.err and "permission-policy" in ran.err
    assert "Traceback" not in ran.err


def test_wasteful_arm_breaks_the_cost_budgets_with_a_correct_end_state(tmp_path):
    cost = sorted(t.id for t in load_suite(TASKS)[0] if t.manifest.category.value == "cost")
    assert len(cost) == 2
    args = [a for task in cost for a in ("--task", task)]
    ran = run_endstate("eval", "--model", "scripted/wasteful", "--suite", str(TASKS), *args, "-j", "2",
                       "--out", str(tmp_path))
    assert ran.code == 0, ran
    for result in read_results(tmp_path).tasks:
        assert result.outcome == "fail" and result.failing_grader == "requires", result
        assert all(v.outcome == "pass" for v in result.verdicts), result.verdicts
