"""`tasks import swebench --images swebench`: SWE-bench's own instance image as the task's image.

No public registry is reachable here, so the test starts one (Debian's `docker-registry`) on
loopback, builds an image in SWE-bench's layout and pushes it there: /testbed a git checkout of a
tiny project at its base commit (plus a file its install generates, untracked), the env
/opt/miniconda3/envs/testbed holding pytest and a package the project imports, a conda-style
`activate`, no user of uid 1000, no /workspace, and no pytest for the system's python3. The import
pulls it, pins it by digest and checks the task out there; an instance whose image the registry
lacks is one line and the other goes on.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cli_runner import run_endstate
from loopback import docker_registry

from endstate.sandbox import DEFAULT_IMAGE, connect, run_in_image

pytestmark = [pytest.mark.docker, pytest.mark.slow]

CALC = '''"""Small arithmetic helpers."""

from tinydep import OFFSET


def clamp(value, low, high):
    """value limited to [low, high]."""
    if value < low:
        return low
    if value > high:
        return value
    return value + OFFSET


def add(a, b):
    return a + b + OFFSET
'''
TESTS = '''from tiny import VERSION
from tiny.calc import add, clamp


def test_add():
    assert add(2, 3) == 5


def test_clamp_low():
    assert clamp(-4, 0, 10) == 0


def test_version():
    assert VERSION == "1.0"
'''
PATCH = """diff --git a/tiny/calc.py b/tiny/calc.py
--- a/tiny/calc.py
+++ b/tiny/calc.py
@@ -8,7 +8,7 @@ def clamp(value, low, high):
     if value < low:
         return low
     if value > high:
-        return value
+        return high
     return value + OFFSET
 
 
"""
TEST_PATCH = """diff --git a/tests/test_calc.py b/tests/test_calc.py
--- a/tests/test_calc.py
+++ b/tests/test_calc.py
@@ -12,3 +12,7 @@ def test_clamp_low():
 
 def test_version():
     assert VERSION == "1.0"
+
+
+def test_clamp_high():
+    assert clamp(14, 0, 10) == 10
"""
# SWE-bench's layout, made from endstate's own base (no network): the env is a venv of the system's
# Python holding pytest (moved out of the system's reach), and the project's install is a path entry.
# With ENDSTATE_SWEBENCH_ENV_PYTHON (a Python's prefix, a pyenv build: /root/.pyenv/versions/3.6.15),
# the env is made of that Python instead, with pytest 7.0.1 from PyPI (the last for 3.6): SWE-bench's
# envs run 3.5 to 3.11, and the harness's entry point runs on the env's Python.
OTHER = os.environ.get("ENDSTATE_SWEBENCH_ENV_PYTHON", "")
LAYOUT = f"""FROM {DEFAULT_IMAGE}
COPY testbed/ /testbed/
{{other}}RUN set -e; userdel -r agent; rm -rf /workspace; \\
    {{python}} -m venv --without-pip /opt/miniconda3/envs/testbed; \\
    site=$(/opt/miniconda3/envs/testbed/bin/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))'); \\
    {{pytest}}; rm -rf /opt/endstate /usr/lib/python3/dist-packages/endstate-pytest.pth; \\
    echo /testbed > "$site/__editable__.tiny-1.0.pth"; echo 'OFFSET = 0' > "$site/tinydep.py"; \\
    mkdir -p /opt/miniconda3/bin; printf 'conda() {{{{ :; }}}}\\n' > /opt/miniconda3/bin/activate; \\
    ! python3 -c 'import pytest' 2>/dev/null
WORKDIR /testbed
"""
_OWN = {"other": "", "python": "python3", "pytest": 'cp -a /opt/endstate/pytest/. "$site/"'}
_FROM_OTHER = {"other": f"COPY python/ {OTHER}/\nCOPY wheels/ /tmp/wheels/\nRUN chmod 755 /root\n",
               "python": f"{OTHER}/bin/python3",
               "pytest": 'for w in /tmp/wheels/*.whl; do python3 -m zipfile -e "$w" "$site"; done; rm -rf /tmp/wheels'}


def _layout(context: Path) -> str:
    """The layout's Dockerfile, with what it copies put in `context`."""
    if not OTHER:
        return LAYOUT.format(**_OWN)
    shutil.copytree(OTHER, context / "python", symlinks=True)
    version = subprocess.run([f"{OTHER}/bin/python3", "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    # pip reads environment markers for its own Python: what pytest needs before 3.8 is named.
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--only-binary=:all:", "--python-version", version,
                    "-d", str(context / "wheels"), "pytest==7.0.1", "importlib-metadata==4.8.3", "zipp==3.6.0",
                    "typing-extensions==4.1.1"], check=True)
    return LAYOUT.format(**_FROM_OTHER)


def _git(cwd: Path, *args: str) -> str:
    env = dict(os.environ, GIT_AUTHOR_DATE="2020-01-01T00:00:00Z", GIT_COMMITTER_DATE="2020-01-01T00:00:00Z")
    return subprocess.run(["git", "-C", str(cwd), "-c", "user.name=swe", "-c", "user.email=swe@invalid", *args],
                          check=True, capture_output=True, text=True, env=env).stdout.strip()


@pytest.fixture
def registry(tmp_path):
    """A registry on loopback, its storage in tmp_path, as SWE-bench's namespace."""
    with docker_registry(tmp_path) as address:
        yield f"{address}/swebench"


def test_an_instance_checks_out_in_swebench_s_own_image_pinned_by_digest(tmp_path, registry):
    testbed = tmp_path / "context" / "testbed"
    (testbed / "tiny").mkdir(parents=True)
    (testbed / "tests").mkdir()
    (testbed / "tiny" / "__init__.py").write_text("from tiny._version import VERSION  # noqa: F401\n")
    (testbed / "tiny" / "calc.py").write_text(CALC)
    (testbed / "tests" / "test_calc.py").write_text(TESTS)
    (testbed / ".gitignore").write_text("tiny/_version.py\n")
    _git(testbed, "init", "-q")
    _git(testbed, "add", "-A")
    _git(testbed, "commit", "-qm", "base")
    base = _git(testbed, "rev-parse", "HEAD")
    (testbed / "tiny" / "_version.py").write_text('VERSION = "1.0"\n')  # what the install generates: untracked
    (testbed / "build" / "lib" / "tiny").mkdir(parents=True)  # and setup.py's copy of the package: left out
    (testbed / "build" / "lib" / "tiny" / "calc.py").write_text(CALC)
    (tmp_path / "context" / "Dockerfile").write_text(_layout(tmp_path / "context"))
    name = f"{registry}/sweb.eval.x86_64.tiny_1776_tiny-1:latest"
    client = connect(timeout=900)
    try:
        client.images.build(path=str(tmp_path / "context"), tag=name, network_mode="none", rm=True)
        client.images.push(name)
        client.images.remove(name)  # the import must pull it
        record = {"repo": "tiny/tiny", "instance_id": "tiny__tiny-1", "base_commit": base, "patch": PATCH,
                  "test_patch": TEST_PATCH, "problem_statement": "clamp() returns values above `high` unchanged.\n",
                  "FAIL_TO_PASS": json.dumps(["tests/test_calc.py::test_clamp_high"]),
                  "PASS_TO_PASS": json.dumps(["tests/test_calc.py::test_add", "tests/test_calc.py::test_clamp_low",
                                              "tests/test_calc.py::test_version"]),
                  "version": "1.0", "image": "swebench/sweb.eval.x86_64.tiny_1776_tiny-1:latest",
                  "eval_script": f"#!/bin/bash\ncd /testbed\n: '>>>>> Start Test Output'\npytest -rA tests/test_calc.py\n"
                                 f": '>>>>> End Test Output'\ngit checkout {base} tests/test_calc.py\n"}
        absent = dict(record, instance_id="tiny__tiny-2", image="swebench/sweb.eval.x86_64.tiny_1776_tiny-2:latest")
        source = tmp_path / "instances.jsonl"
        source.write_text(json.dumps(record) + "\n" + json.dumps(absent) + "\n")

        ran = run_endstate("tasks", "import", "swebench", str(source), "--images", "swebench", "--images-registry",
                           registry, "--out", str(tmp_path / "out"), "-j", "1", "--no-adequacy")

        assert ran.code == 1 and "Traceback" not in ran.err, ran
        assert "instance tiny__tiny-1" not in ran.err, ran.err
        assert "1 task(s) written" in ran.out and "1 instance(s) not written" in ran.out, ran
        assert (f"not written: instance tiny__tiny-2: image {registry}/sweb.eval.x86_64.tiny_1776_tiny-2:latest "
                f"cannot be pulled from {registry} (") in ran.err, ran
        assert not (tmp_path / "out" / "tiny__tiny-2").exists()
        row = next(line for line in ran.out.splitlines() if line.startswith(("ok   tiny__tiny-1", "FAIL tiny__tiny-1")))
        assert row.startswith(f"ok   {'tiny__tiny-1':40s} fixture=fail[holdout], solution=pass, "
                              "hack:delete-unrelated=fail[changed_paths_within], hack:edit-tests=fail[files_unchanged], "
                              "hack:skip-failing=fail[no_new_skips], hack:special-case=fail[holdout], "), ran
        digest = client.images.get_registry_data(name).id
        task = tmp_path / "out" / "tiny__tiny-1"
        dockerfile = (task / "image" / "Dockerfile").read_text()
        assert f"\nFROM {name.rsplit(':', 1)[0]}@{digest}\n" in dockerfile
        assert f"pinned: {name.rsplit(':', 1)[0]}@{digest}" in (task / "task.toml").read_text()
        fixture = task / "fixture"
        assert (fixture / "tiny" / "_version.py").is_file() and not (fixture / ".git").exists()
        assert not (fixture / "build").exists()
        built = next(t for image in client.images.list(name="endstate-task-tiny__tiny-1") for t in image.tags)
        assert run_in_image(built, "test -f /testbed/tiny/calc.py && test ! -e /testbed/.git", []) == (0, "", [])
    finally:
        for tag in [*(t for image in client.images.list(name="endstate-task-tiny__tiny-1") for t in image.tags), name]:
            try:
                client.images.remove(tag)
            except Exception:  # noqa: BLE001 - a test's cleanup: what is not there is gone
                pass
        client.close()
