"""A root end state cannot run code in the harness that grades it: whatever it changed of the image
(Python's start-up, a program on the image's PATH), the harness runs from its own runtime, a
read-only mount (see endstate/sandbox/_runtime.py). Both end states below wrote the reward through
a program the harness ran as root before the verifier, and passed, when the harness ran the image's
Python and found its programs on the image's PATH; each plant is one the tamper list never named."""

from __future__ import annotations

import io
import zipfile

import pytest

from endstate.grading import Outcome, Verdict, grade, prepare_grading_sandbox, resolve, seal_overlay, stage_holdout
from endstate.guards import Guards
from endstate.sandbox import DEFAULT_IMAGE, SandboxLimits, build_image
from endstate.sandbox._layer import SystemChange, apply_change, harness_path
from endstate.sandbox._tree import FileEntry

pytestmark = pytest.mark.docker

#: Exits 0 and writes no reward: a FAIL, unless something else wrote one.
TEST_SH = b"#!/bin/bash\nsleep 3\nexit 0\n"
#: Writes the reward as root, then carries on as the real `encodings` (builtins are not up yet: posix only).
ENCODINGS = b"""import posix as _p
try:
    _p.mkdir("/logs/verifier")
except OSError:
    pass
try:
    _f = _p.open("/logs/verifier/reward.txt", _p.O_WRONLY | _p.O_CREAT | _p.O_TRUNC, 0o644)
    _p.write(_f, b"1\\n")
    _p.close(_f)
except OSError:
    pass
__path__.append("/usr/lib/python3.11/encodings")
_f, _src = _p.open("/usr/lib/python3.11/encodings/__init__.py", _p.O_RDONLY), b""
while _chunk := _p.read(_f, 65536):
    _src += _chunk
_p.close(_f)
exec(compile(_src, "/usr/lib/python3.11/encodings/__init__.py", "exec"))
"""
#: A `mount` that, run as root by the harness to bound the verifier's folders, writes the reward a moment later.
PLANTED_MOUNT = b"""#!/bin/sh
( sleep 2; mkdir -p /logs/verifier; echo 1 > /logs/verifier/reward.txt ) </dev/null >/dev/null 2>&1 &
exec /usr/bin/mount "$@"
"""


def _python_zip() -> bytes:
    """`python311.zip`, first on the image Python's sys.path and absent from the image: an `encodings`."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("encodings/__init__.py", ENCODINGS)
    return buffer.getvalue()


def _graded(image: str, change: SystemChange, name: str) -> Verdict:
    """The verifier's verdict on an end state that is `change` (applied as a sealed root end state is)."""
    verifier = resolve("endstate.grading:verifier", {"script": ".harbor/tests/test.sh", "timeout": 30})
    tree = {"state": FileEntry(0o644, b"ready\n")}
    with prepare_grading_sandbox("docker", image, SandboxLimits(agent_uid=0, command_timeout_s=60), name) as box:
        apply_change(box, change)
        grading = seal_overlay(tree, tree, box)
        stage_holdout(grading, {".harbor/tests/test.sh": FileEntry(0o755, TEST_SH)}, [verifier])
        ((_, verdict),) = grade(grading, [verifier], Guards(end_state_checks=False))
    return verdict


def test_code_planted_in_the_image_pythons_start_up_never_runs_in_the_harness():
    build_image(DEFAULT_IMAGE)
    planted = {path: FileEntry(0o644, _python_zip()) for path in ("/usr/lib/python311.zip", "/lib/python311.zip")}
    assert not any(harness_path(path, added=True) for path in planted)  # not a name the tamper list holds
    verdict = _graded(DEFAULT_IMAGE, SystemChange(files={"/usr/lib/python311.zip": planted["/usr/lib/python311.zip"]}),
                      "runtime-python")
    assert verdict.outcome is Outcome.FAIL and "without writing" in verdict.reason, verdict


def test_a_program_shadowed_on_the_images_path_never_runs_in_the_harness():
    build_image(DEFAULT_IMAGE)
    assert not harness_path("/usr/local/bin/mount", added=True)  # the harness's `mount`: first on PATH, unlisted
    change = SystemChange(files={"/usr/local/bin/mount": FileEntry(0o755, PLANTED_MOUNT)})
    verdict = _graded(DEFAULT_IMAGE, change, "runtime-path")
    assert verdict.outcome is Outcome.FAIL and "without writing" in verdict.reason, verdict
