"""Every place a process of the end state may write while it is graded holds a bounded amount,
for real in Docker: writing past it is ENOSPC for the end state, the grader that met it fails
(never an error), the harness's own later writes in that container go through, and nothing of
it reaches the container's writable layer (the host's disk)."""

from __future__ import annotations

import pytest

from endstate.grading import Outcome, grade, prepare_grading_sandbox, resolve, seal_overlay, stage_holdout
from endstate.grading._testrun import run_tests, start_warm_runner
from endstate.guards import Guards
from endstate.sandbox import DEFAULT_IMAGE, FileEntry, SandboxLimits, build_image
from endstate.sandbox._engine import shared_client

pytestmark = pytest.mark.docker

#: Small bounds, so that filling every place at once stays far below the memory limit.
LIMITS = SandboxLimits(command_timeout_s=120, workspace_mb=16, tmp_mb=8)
#: MiB a filler writes at most into one place: several times every bound above.
CAP = 160
#: What the container's writable layer may hold after all of it: the harness's own small files.
LAYER_MAX = 8 * 1024 * 1024

FILL = f"""
import errno, glob, os


def fill(folder, cap={CAP}):
    '''1 MiB files into folder until a write fails: the errno it met, None at the cap.'''
    chunk = b"x" * (1 << 20)
    for i in range(cap):
        try:
            with open(os.path.join(folder, f"fill-{{i}}"), "wb") as out:
                out.write(chunk)
        except OSError as exc:
            return exc.errno
    return None


def report_folder():
    return glob.glob("/opt/endstate/report/*")[0]
"""
PLACES = ("/tmp", "/var/tmp", "/dev/shm", "/home/agent", "/run/lock")
FILL_EVERYWHERE = f"""
import errno, os
from filler import fill


def test_every_place_a_test_process_may_write_is_bounded():
    met = {{place: fill(place) for place in (os.getcwd(), *{PLACES!r})}}
    assert met == dict.fromkeys(met, errno.ENOSPC)
"""
FILL_REPORT = """
from filler import fill, report_folder


def test_fill_the_report_folder():
    fill(report_folder())
"""
OK = "def test_ok():\n    assert 2 * 2 == 4\n"
TREE = {"tests/filler.py": FileEntry(0o644, FILL.encode()),
        "tests/test_fill_everywhere.py": FileEntry(0o644, FILL_EVERYWHERE.encode()),
        "tests/test_fill_report.py": FileEntry(0o644, FILL_REPORT.encode()),
        "tests/test_ok.py": FileEntry(0o644, OK.encode())}


@pytest.fixture(scope="module", autouse=True)
def _built():
    build_image(DEFAULT_IMAGE)  # a no-op when it is current


def _layer_bytes(box) -> int:
    (listed,) = shared_client().api.containers(all=True, filters={"id": box.container_id}, size=True)
    return listed["SizeRw"]


def _outcomes(run) -> dict[str, str]:
    return {name: outcome for _, name, outcome in run.cases}


@pytest.mark.parametrize("warm", [True, False], ids=["warm", "cold"])
def test_a_test_process_meets_enospc_everywhere_it_writes_and_later_runs_go_on(warm):
    with prepare_grading_sandbox("docker", DEFAULT_IMAGE, LIMITS, "bounded") as box:
        grading = seal_overlay(dict(TREE), {}, box, Guards())
        stage_holdout(grading, {})
        if warm:
            start_warm_runner(grading)
        everywhere, report, ok = (run_tests(grading, f"python -m pytest -q tests/{name}.py")
                                  for name in ("test_fill_everywhere", "test_fill_report", "test_ok"))
        layer = _layer_bytes(box)
    assert _outcomes(everywhere) == {"test_every_place_a_test_process_may_write_is_bounded": "passed"}, \
        everywhere.output_tail
    assert any("filled its report folder" in finding for finding in report.findings or []), report
    assert _outcomes(ok) == {"test_ok": "passed"}, ok.output_tail  # the harness's own writes went through
    assert layer < LAYER_MAX, f"{layer} bytes reached the container's writable layer"


FIXTURE = {"calc/__init__.py": FileEntry(0o644, b""),
           "calc/ops.py": FileEntry(0o644, b"def double(x):\n    return x + 1\n"),
           "tests/test_ops.py": FileEntry(0o644, b"from calc.ops import double\n\n\ndef test_two():\n"
                                                b"    assert double(2) == 4\n")}
HOLD = {"tests_holdout/test_more.py": FileEntry(0o644, b"from calc.ops import double\n\n\ndef test_seven():\n"
                                                       b"    assert double(7) == 14\n")}
#: A right fix that fills the report folder of whichever test process imports it.
FIX_THAT_FILLS = ("def double(x):\n    return x * 2\n\n\nimport sys\n"
                  "sys.path.insert(0, 'tests')\nfrom filler import fill, report_folder\nfill(report_folder())\n")


def test_a_fix_that_fills_its_report_folder_fails_each_grader_and_is_no_error():
    graders = [resolve("endstate.grading:tests_pass", {"command": "python -m pytest -q tests", "min_tests": 1}),
               resolve("endstate.grading:holdout", {"command": "python -m pytest -q tests_holdout", "min_tests": 1})]
    tree = {**FIXTURE, "calc/ops.py": FileEntry(0o644, FIX_THAT_FILLS.encode()),
            "tests/filler.py": FileEntry(0o644, FILL.encode())}
    with prepare_grading_sandbox("docker", DEFAULT_IMAGE, LIMITS, "bounded") as box:
        grading = seal_overlay(tree, FIXTURE, box)
        stage_holdout(grading, HOLD, graders)
        verdicts = dict(grade(grading, graders, Guards(end_state_checks=False)))
        layer = _layer_bytes(box)
    for name in ("tests_pass", "holdout"):
        assert verdicts[name].outcome is Outcome.FAIL, verdicts
        assert "report folder" in verdicts[name].reason, verdicts[name]
    assert layer < LAYER_MAX, f"{layer} bytes reached the container's writable layer"


#: A shell verifier that runs the end state, which fills every place the verifier may write.
VERIFIER = """#!/bin/bash
python3 /workspace/fill_all.py
echo 1 > /logs/verifier/reward.txt
"""
FILL_ALL = """
import os, sys
sys.path.insert(0, "/workspace/tests")
from filler import fill
for place in (os.environ["TMPDIR"], "/logs/verifier", "/opt/endstate/report", "/tmp", os.getcwd()):
    print(place, fill(place))
"""


def test_an_end_state_run_by_a_shell_verifier_fills_nothing_but_bounded_places():
    grader = resolve("endstate.grading:verifier", {"script": ".verifier/test.sh"})
    tree = {"tests/filler.py": FileEntry(0o644, FILL.encode()), "fill_all.py": FileEntry(0o644, FILL_ALL.encode())}
    hold = {".verifier/test.sh": FileEntry(0o755, VERIFIER.encode())}
    with prepare_grading_sandbox("docker", DEFAULT_IMAGE, LIMITS, "bounded") as box:
        grading = seal_overlay(tree, {}, box)
        stage_holdout(grading, hold, [grader])
        verdict = grader(grading.sealed)
        again = grader(grading.sealed)  # the bounded places were dropped: the harness writes them anew
        layer = _layer_bytes(box)
    for met in (verdict, again):  # the copy of the workspace grew past the agent's ceiling
        assert met.outcome is Outcome.FAIL and "grew past its ceiling" in met.reason, met
    assert layer < LAYER_MAX, f"{layer} bytes reached the container's writable layer"
