"""The tasks made by `tasks new` from real fixes check out as vendored, with no edit.

The larger suites (more-itertools about 880 tests, Python-Markdown 959) write reports past
the 64 KiB cap on command output (Markdown's JUnit XML: about 100 KB): this passes once test
reports are read as files (issue 9), and is the proof that a large report grades correctly.

The five others are one shape each of a real project as it comes (issue 20): a src
layout, a dependency whose import installs an import hook (installed offline from
wheels into the task's own image), unittest only, tests that write beside
themselves, and regression tests kept as data files.

`make test` checks one of them, the Markdown task (the large report, in about 9 CPU-seconds; a
more-itertools task's suite takes about 95, most of it one test's hundred threads contending for a
lock, and many times that on a loaded machine); a task in an image
of its own is checked there by tests/e2e/test_swebench_import.py and
tests/grading/test_hacks_project_pytest.py. The test marked `content` checks the six others
(`make check-tasks`, which CI runs after `make test`): whether each shipped task checks out is
a question about the suite's content.
"""

from __future__ import annotations

import pytest
from cli_runner import run_endstate
from e2e_helpers import ROOT, check_out, sample_and_the_others

from endstate.task import load_suite

pytestmark = [pytest.mark.docker, pytest.mark.slow]

TASKS_REAL = ROOT / "tasks-real"


def _commands(task) -> list[str]:
    return [spec.args["command"] for spec in task.manifest.graders if "command" in spec.args]


SAMPLE = ["bugfix-markdown-footnotes-html"]


def test_the_real_tasks_keep_the_shapes_tasks_new_read():
    tasks, errors = load_suite(TASKS_REAL)
    assert not errors and len(tasks) >= 7
    assert any(t.manifest.sandbox.dockerfile for t in tasks)  # one runs in its own image
    # The shapes, as tasks new read them from each project (no task was edited afterwards).
    commands = {t.id: _commands(t) for t in tasks}
    assert commands["bugfix-cachedmethod-class-access"][0].startswith("PYTHONPATH=src python -m unittest")
    assert commands["bugfix-parse-unused-alignment"][0] == "python -m unittest test_parse"
    assert commands["bugfix-markdown-footnotes-html"][1] == "python -m pytest -q tests/test_plugins.py"
    for own in ("bugfix-retry-on-exception-tuple", "bugfix-srt-open-universal-mode"):
        pinned = (TASKS_REAL / own / "image" / "requirements.txt").read_text()
        assert "--hash=sha256:" in pinned
    assert "six==" in (TASKS_REAL / "bugfix-retry-on-exception-tuple/image/requirements.txt").read_text()


@pytest.mark.parametrize("chosen", sample_and_the_others(sorted(t.id for t in load_suite(TASKS_REAL)[0]), SAMPLE))
def test_the_real_tasks_check_out(chosen):
    assert chosen
    ran = run_endstate("tasks", "check", "--suite", str(TASKS_REAL), *[a for t in chosen for a in ("--task", t)],
                       "-j", "2")
    check_out(ran)
    assert f"{len(chosen)} of {len(chosen)} task(s) check out" in ran.out
    assert ran.out.count("reference=solution") == len(chosen)
