"""`endstate tasks check` on a suite of one's own: a grader module beside task.toml is
imported with no PYTHONPATH, and a task without probe/ gets a one-line warning."""

from __future__ import annotations

import shutil

import pytest
from cli_runner import run_endstate
from e2e_helpers import TASKS

pytestmark = pytest.mark.docker

GRADER = '''from endstate.grading import Verdict


def fix_in(sandbox, path, needle):
    """The fixed file holds the needle (and the fixture's does not)."""
    if needle in sandbox.fixture_text(path):
        return Verdict.error(f"{path} already holds {needle!r} in the fixture")
    return Verdict.ok() if needle in sandbox.read_text(path) else Verdict.fail(f"{path} lacks {needle!r}")
'''


def test_own_grader_beside_the_task_checks_out_and_a_missing_probe_is_warned(tmp_path):
    suite = tmp_path / "my-suite"
    task = suite / "bugfix-lru-eviction"
    shutil.copytree(TASKS / "bugfix-lru-eviction", task, ignore=shutil.ignore_patterns("probe", "__pycache__"))
    (task / "lru_graders.py").write_text(GRADER)
    needle = "elif len(self._data) >= self._capacity"
    assert needle in (task / "solution" / "cachekit" / "lru.py").read_text()
    manifest = task / "task.toml"
    manifest.write_text(manifest.read_text() + '\n[[graders]]\nname = "lru_graders:fix_in"\n'
                        f'args = {{ path = "cachekit/lru.py", needle = "{needle}" }}\n')
    ran = run_endstate("tasks", "check", "--suite", str(suite), "-j", "1", cwd=tmp_path, unset=["PYTHONPATH"])
    assert ran.code == 0, ran.out + ran.err
    assert "1 of 1 task(s) check out" in ran.out
    assert "fix_in" in ran.out  # the fixture row failed on the task's own grader among others
    warnings = [line for line in ran.err.splitlines() if "warning" in line]
    assert warnings == [line for line in ran.err.splitlines() if "no probe/" in line] and len(warnings) == 1
    assert "task bugfix-lru-eviction has no probe/" in warnings[0] and "probe/expected.json" in warnings[0]
    assert "Traceback" not in ran.err
