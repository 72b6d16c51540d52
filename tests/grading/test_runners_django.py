"""Django's real test runner (tests/runtests.py of Django 4.2's sdist from PyPI, one small test module)
run by the harness in a real grading sandbox, as the test user over a read-only tree, each id read
from its output as SWE-bench reads it."""

from __future__ import annotations

import io
import subprocess
import sys
import tarfile
import zipfile

import pytest

from endstate.grading import grade, prepare_grading_sandbox, resolve, seal_overlay, stage_holdout
from endstate.guards import Guards
from endstate.sandbox import DEFAULT_IMAGE, FileEntry, SandboxLimits
from endstate.task import UNGUARDED

pytestmark = pytest.mark.docker

#: Django's own dependencies (wheels), put on the program's PYTHONPATH from deps/.
WHEELS = ("asgiref==3.8.1", "sqlparse==0.5.1")
COMMAND = "PYTHONPATH=deps ./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 pagination.tests"
#: Ids as SWE-bench's datasets name them (Python 3.9's unittest; the sandbox's 3.11 adds `.name`), one a docstring.
IDS = ["test_paginator_iteration (pagination.tests.PaginationTests)",
       "Tests the paginator attributes using varying inputs.",
       "test_first_page (pagination.tests.ModelPaginationTests)"]


def _download(folder, *args: str) -> list:
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(folder), *args],
                   check=True, capture_output=True)
    return sorted(folder.iterdir())


def _kept(path: str) -> bool:
    """Django's package less its translations and static files, and of its tests what runtests.py reads
    and the one module run: what a run of `pagination.tests` needs, a fifth of the sdist."""
    if path.startswith("django/"):
        return "/static/" not in path and not path.endswith((".po", ".mo")) or "/locale/en/" in path
    return path in ("tests/runtests.py", "tests/test_sqlite.py", "tests/urls.py") or path.startswith("tests/pagination/")


@pytest.fixture(scope="module")
def django_tree(tmp_path_factory) -> dict[str, FileEntry]:
    folder = tmp_path_factory.mktemp("django")
    [sdist] = _download(folder / "sdist", "--no-binary", ":all:", "Django==4.2")
    tree = {}
    with tarfile.open(sdist) as archive:
        for member in archive.getmembers():
            path = member.name.split("/", 1)[-1]
            if member.isfile() and _kept(path):
                tree[path] = FileEntry(member.mode & 0o755 | 0o644, archive.extractfile(member).read())
    for wheel in _download(folder / "wheels", "--only-binary", ":all:", *WHEELS):
        with zipfile.ZipFile(io.BytesIO(wheel.read_bytes())) as archive:
            tree.update({f"deps/{name}": FileEntry(0o644, archive.read(name)) for name in archive.namelist()
                         if not name.endswith("/") and ".dist-info/" not in name})
    return tree


def _grader(tests: list[str]):
    return resolve("endstate.grading:tests_pass", {"command": COMMAND, "runner": "django", "tests": tests,
                                                   "min_tests": len(tests), "unguarded": list(UNGUARDED["django"])})


def test_djangos_own_runner_is_run_and_read_by_id_in_the_grading_sandbox(django_tree):
    paginator = django_tree["django/core/paginator.py"]
    broken = paginator.data.replace(b"hits = max(1, self.count - self.orphans)", b"hits = max(1, self.count)")
    assert broken != paginator.data
    graders = [_grader(IDS[::2]), _grader(IDS)]  # the orphans bug fails the attributes test alone
    with prepare_grading_sandbox("docker", DEFAULT_IMAGE, SandboxLimits(command_timeout_s=120), "django") as box:
        sealed = seal_overlay({**django_tree, "django/core/paginator.py": FileEntry(0o644, broken)}, django_tree, box,
                              Guards())
        stage_holdout(sealed, {})
        (_, unharmed), (_, harmed), *_ = grade(sealed, graders, Guards())
    assert unharmed.outcome.value == "pass" and "tests: 2 passed (read by " in unharmed.reason, unharmed.reason
    assert harmed.outcome.value == "fail", harmed.reason
    assert "1 of 3 did not pass: Tests the paginator attributes using varying inputs.: FAILED" in harmed.reason
