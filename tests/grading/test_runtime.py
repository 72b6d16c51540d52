"""A root end state cannot run code in the harness that grades it: whatever it changed of the image
(Python's start-up, a program on the image's PATH), the harness runs from its own runtime, a
read-only mount (see endstate/sandbox/_runtime.py). Both first end states below wrote the reward
through a program the harness ran as root before the verifier, and passed, when the harness ran the
image's Python and found its programs on the image's PATH; each plant is one the tamper list never
named. The third lists a library of its own in /etc/ld.so.preload while its verifier runs it, as
root, after sealing (so no tamper check sees it): the runtime's loader read that list, and every
program the harness started afterwards wrote the reward."""

from __future__ import annotations

import base64
import gzip
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


#: A shared library whose constructor writes a reward of 1 (no libc: raw x86-64 system calls), gzipped. Built with
#: `gcc -Os -shared -fPIC -nostdlib -fno-asynchronous-unwind-tables -Wl,-z,max-page-size=4096 -Wl,-z,noseparate-code
#: -Wl,--build-id=none -s` from the C in tasks-root/sh-greet-spool/hacks/preload-for-the-harness/trajectory.toml.
PRELOADED = gzip.decompress(base64.b64decode(
    "H4sIAAAAAAACA+1YP28TMRR/d+mV0KJcF6QiCHRBBRWcXkQlhFREKdAMXYCFAalyem5zUu8i+VxIJiaGDJUy9gPwARgjBlTBwM7A"
    "N+ALIIHKQvElz6nPahQqwYL8k3y/+z37+c+zl/dePVx/5DoOKBTgLhwrgHvI3Rnddhs8+T0H0/2xHozGjJtnwHkyv0nZDksDfXg5"
    "z0Unz8rPRT/w0X7FYCfPRZSPv4pwEv4c6rhPpN/EKfapL+9o+rQYzo/6LU600ssi8H5Fft+9kbba3vKCNKx3Dnyv1vlUe33QKvey"
    "sbW9pRv9jg++F3zuFTJT54vvfazsNLfTygvGo62I8QpnLykPiWgJCKbAwsLCwsLCwsLCwsLiv4PKpy4Y+dZFyOdd338dNTN+huNV"
    "rttFrXLKFuopIw2dRp5FPoO8b+Snqv+soX8eDdZ3/lEc1lZX78xde8DqEU3mgiqpksWbwa2FkNWD6m5wHU0AJG2kggtaB7Kd7JIG"
    "TRtAwnaStuMBCw6Esx2aCSCCyXyS8GZIBQXCGhtbnMYMSJREYoNyTtt9LxpHm0A2m3HMEvFXzpPF+4eMmSo3qHtTfAmO6wh6/BXO"
    "4xyuca+KZ4d1ksGdmPdXxj7XeCddoz4AcLK+KtuE5q/eyb6xvrl/Za9otRX9nSu+P2b9JbRVUX9z8lwe4a94Gf/dUfUfA2b812Qr"
    "YQxz9ZbSyeOLBj/Fsyv/YV3Iz2+0YPipes9zHLI4oiA0P+b8jr62hnn0Z2Pi/xvX47MnkBMAAA=="
))
#: The end state's program its verifier runs, as root: the library listed for every program loaded after it.
PLANT_PRELOAD = b"#!/bin/sh\necho /usr/local/lib/libplant.so > /etc/ld.so.preload\n"
#: Runs the end state's program, then writes a reward of 0 with a shell builtin (no program loaded after it).
TEST_SH_PLANTING = b"#!/bin/bash\n/usr/local/bin/plant\necho 0 > /logs/verifier/reward.txt\nexit 0\n"


def _python_zip() -> bytes:
    """`python311.zip`, first on the image Python's sys.path and absent from the image: an `encodings`."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("encodings/__init__.py", ENCODINGS)
    return buffer.getvalue()


def _graded(image: str, change: SystemChange, name: str, *, test_sh: bytes = TEST_SH,
            guards: Guards = Guards(end_state_checks=False)) -> Verdict:
    """The verifier's verdict on an end state that is `change` (applied as a sealed root end state is)."""
    verifier = resolve("endstate.grading:verifier", {"script": ".harbor/tests/test.sh", "timeout": 30})
    tree = {"state": FileEntry(0o644, b"ready\n")}
    limits = SandboxLimits(agent_uid=0, command_timeout_s=60)
    with prepare_grading_sandbox("docker", image, limits, name, guards=guards) as box:
        apply_change(box, change)
        grading = seal_overlay(tree, tree, box)
        stage_holdout(grading, {".harbor/tests/test.sh": FileEntry(0o755, test_sh)}, [verifier])
        ((_, verdict),) = grade(grading, [verifier], guards)
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


def test_a_library_the_verifier_lists_for_preloading_never_loads_in_the_harness():
    build_image(DEFAULT_IMAGE)
    change = SystemChange(files={"/usr/local/lib/libplant.so": FileEntry(0o644, PRELOADED),
                                 "/usr/local/bin/plant": FileEntry(0o755, PLANT_PRELOAD)})
    assert not any(harness_path(path, added=True) for path in change.files)
    verdict = _graded(DEFAULT_IMAGE, change, "runtime-preload", test_sh=TEST_SH_PLANTING)
    assert verdict.outcome is Outcome.FAIL and "reward 0" in verdict.reason, verdict
    # The plant works: on a runtime whose loader reads the image's list (the mutant's), the harness writes 1.
    verdict = _graded(DEFAULT_IMAGE, change, "runtime-preload-read", test_sh=TEST_SH_PLANTING,
                      guards=Guards(end_state_checks=False, runtime_config_blind=False))
    assert verdict.outcome is Outcome.PASS, verdict
