"""Impossible twins for real, in Docker: the halves of a held-out run never show a test
process a twin beside its original, and code that rewrites everything the test process
writes about itself is still caught."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from calc_project import BUGGY, FIXED, calc_graders, calc_trees, files

from endstate.grading import Outcome, grade, prepare_grading_sandbox, seal_overlay, stage_holdout
from endstate.grading._testrun import SCRATCH_DIR
from endstate.guards import Guards
from endstate.sandbox import DEFAULT_IMAGE, SandboxLimits, build_image

pytestmark = pytest.mark.docker

ROOT = Path(__file__).resolve().parents[2]
HOLDOUT = b"""# HELD-OUT-MARK
from calc.ops import double


def test_seven():
    assert double(7) == 14


def test_zero():
    assert double(0) == 0


def test_negative():
    assert double(-3) < 0


def test_list():
    assert [double(n) for n in (1, 2)] == [2, 4]
"""

# Code under test that looks everywhere a test process can read or write for copies of the
# held-out file, leaves every copy it found wherever a later process could look, and notes
# in its working folder (its run's scratch copy) how many different versions it saw.
OBSERVER = b"""
import glob as _glob, hashlib as _hashlib, json as _json, os as _os

_seen = {}
for _pattern in ("/workspace/**", "/opt/endstate/**", "/tmp/**", "/var/tmp/**", "/dev/shm/**", "/home/agent/**",
                 "/run/lock/**"):
    for _path in _glob.glob(_pattern, recursive=True):
        try:
            with open(_path, "rb") as _file:
                _data = _file.read()
        except OSError:
            continue
        if _data.startswith(b"# HELD-OUT-MARK"):
            _seen[_hashlib.sha256(_data).hexdigest()] = _data
for _folder in ("/tmp", "/var/tmp", "/dev/shm", "/home/agent", "/run/lock", _os.getcwd()):
    for _digest, _data in _seen.items():
        try:
            with open(_os.path.join(_folder, "kept-" + _digest[:16]), "wb") as _file:
                _file.write(_data)
        except OSError:
            pass
with open("observed-%d.json" % _os.getpid(), "w") as _file:
    _json.dump(sorted(_seen), _file)
"""


FIXTURE, HOLD = calc_trees(holdout=HOLDOUT)
TESTS_PASS, HOLDOUT_PASS = calc_graders(visible=1, held_out=4)


@pytest.fixture(scope="module", autouse=True)
def _built():
    build_image(DEFAULT_IMAGE)  # a no-op when it is current


def _observe(code: bytes, graders: list, guards: Guards = Guards(end_state_checks=False)):
    """Grade the fixed end state with `code` appended to it: its grading state, the verdicts by
    grader, what the last process left in its scratch copy (by file name) and the notes of every
    process (each `observed-*` file, decoded), read from each scratch copy just before the harness
    drops it with what the run wrote there."""
    copies: list[dict] = []
    with prepare_grading_sandbox("docker", DEFAULT_IMAGE, SandboxLimits(command_timeout_s=60), "twins") as box:
        release = box.release_folders

        def read_then_release(folders):
            copies.extend(box.read_folder(f, max_bytes=1 << 22) for f in folders if f.startswith(SCRATCH_DIR + "/"))
            release(folders)

        box.release_folders = read_then_release
        grading = seal_overlay(dict(FIXTURE, **files({"calc/ops.py": FIXED + code})), FIXTURE, box, guards)
        stage_holdout(grading, HOLD)
        verdicts = dict(grade(grading, graders, guards))
    left = {path.rpartition("/")[2]: entry for path, entry in copies[-1].items()}
    notes = [json.loads(entry.data) for copy in copies for path, entry in copy.items()
             if path.rpartition("/")[2].startswith("observed-")]
    return grading, verdicts, left, notes


#: The halves run with nothing wiped between them, in the grading container's own namespaces (the
#: `process-isolation` mutant with the wipe off too).
UNISOLATED = Guards(end_state_checks=False, half_isolation=False, process_isolation=False)
#: Nothing wiped, but each process in namespaces of its own.
UNWIPED = Guards(end_state_checks=False, half_isolation=False)


def test_the_second_half_never_sees_the_first_halfs_files_whatever_the_first_left():
    grading, verdicts, left, observed = _observe(OBSERVER, [TESTS_PASS, HOLDOUT_PASS])
    assert verdicts["holdout"].outcome is Outcome.PASS, verdicts
    assert "passed (and its 4 impossible twin(s) did not, as expected)" in verdicts["holdout"].reason
    # Each process saw one version of the held-out file: the one it runs, in which each test is
    # either real or a twin, never both.
    assert observed and all(len(seen) == 1 for seen in observed), observed
    last = grading.twin_plan.halves[1 - grading.twin_plan.first]["tests_holdout/test_more.py"].data
    assert left[f"kept-{__import__('hashlib').sha256(last).hexdigest()[:16]}"].data == last


def test_without_the_wipe_and_the_namespaces_the_observer_would_see_both_halves():
    """The test above can fail: skip the wipe between the halves and share the container's namespaces,
    and the first half's copies reach the second."""
    observed = _observe(OBSERVER, [HOLDOUT_PASS], UNISOLATED)[3]
    assert max(len(seen) for seen in observed) == 2, observed


def test_namespaces_alone_keep_the_halves_apart():
    """With no wipe at all, each half's own temporary places and scratch copy still show it one version."""
    observed = _observe(OBSERVER, [HOLDOUT_PASS], UNWIPED)[3]
    assert observed and max(len(seen) for seen in observed) == 1, observed


def test_a_visible_only_test_process_can_read_no_held_out_file():
    """Graded by `tests_pass` alone, the visible tests run in a process of their own while the
    held-out files are staged: in /workspace and in the graded tree. Its scratch copy holds none,
    and /workspace in its namespaces is that copy: it finds none anywhere."""
    grading, verdicts, _, observed = _observe(OBSERVER, [TESTS_PASS])
    assert verdicts["tests_pass"].outcome is Outcome.PASS, verdicts
    assert observed == [[]], observed


def test_without_namespaces_a_visible_only_test_process_reads_the_held_out_file():
    """The test above can fail: in the grading container's own namespaces, /workspace holds them."""
    observed = _observe(OBSERVER, [TESTS_PASS], Guards(end_state_checks=False, process_isolation=False))[3]
    assert [len(seen) for seen in observed] == [1], observed


def _shipped_attack(task: str, hack: str) -> bytes:
    """The code a shipped live hack appends to the task's source."""
    steps = tomllib.loads((ROOT / "tasks" / task / "hacks" / hack / "trajectory.toml").read_text())["steps"]
    command = steps[0]["calls"][0]["args"]["command"]
    return command.split("<<'PYEOF'\n", 1)[1].rsplit("PYEOF", 1)[0].encode()


@pytest.mark.parametrize("task,hack", [("bugfix-lru-eviction", "rewrite-at-exit"),
                                       ("bugfix-invoice-rounding", "spare-canary"),
                                       ("bugfix-booking-overlap", "swap-bodies")])
def test_tampering_that_defeats_every_check_inside_the_process_is_caught_by_the_twins(task, hack):
    attack = _shipped_attack(task, hack)
    tree = dict(FIXTURE, **files({"calc/ops.py": BUGGY + attack}))

    def graded(twins: bool):
        guards = Guards(twins=twins)
        with prepare_grading_sandbox("docker", DEFAULT_IMAGE, SandboxLimits(command_timeout_s=60), "twins") as box:
            grading = seal_overlay(tree, FIXTURE, box, guards)
            stage_holdout(grading, HOLD)
            return dict(grade(grading, [TESTS_PASS, HOLDOUT_PASS], guards))

    caught = graded(True)
    assert caught["holdout"].outcome is Outcome.FAIL and "impossible twin" in caught["holdout"].reason, caught
    assert caught["end_state"].outcome is Outcome.PASS  # every name spelled indirectly: no tripwire sees it
    # Without twins the same end state passes everything: the canary, the guard and the tripwires are defeated.
    assert all(v.outcome is Outcome.PASS for v in graded(False).values())


# Code under test that keeps, in a POSIX message queue (a kernel object that outlives its
# process, in no folder a file wipe empties), the digest of every version of the held-out file
# any process saw, and notes in its working folder how many it has seen so far.
QUEUE_OBSERVER = b"""
import ctypes as _ct, glob as _glob, hashlib as _hashlib, json as _json, os as _os

_lib = _ct.CDLL(None, use_errno=True)
_lib.mq_open.restype = _ct.c_int
_lib.mq_receive.restype = _ct.c_ssize_t
_fd = _lib.mq_open(b"/observer", 0o2 | 0o100 | 0o4000, _ct.c_uint(0o600), None)
_seen, _buf = set(), _ct.create_string_buffer(16384)
while _fd >= 0:
    _n = _lib.mq_receive(_fd, _buf, 16384, None)
    if _n < 0:
        break
    _seen.add(_buf.raw[:_n])
for _path in _glob.glob("**/test_more.py", recursive=True):
    with open(_path, "rb") as _file:
        _seen.add(_hashlib.sha256(_file.read()).hexdigest().encode())
for _digest in _seen:
    _lib.mq_send(_fd, _digest, len(_digest), 0)
with open("observed-%d.json" % _os.getpid(), "w") as _file:
    _json.dump(len(_seen), _file)
"""


def test_a_message_queue_one_half_left_is_gone_before_the_next():
    # Each process saw only its own version of the held-out file: the queue was gone before it.
    assert set(_observe(QUEUE_OBSERVER, [HOLDOUT_PASS])[3]) == {1}


def test_without_the_wipe_a_message_queue_carries_the_first_halfs_file_to_the_second():
    assert max(_observe(QUEUE_OBSERVER, [HOLDOUT_PASS], UNISOLATED)[3]) == 2


def test_a_message_queue_stays_in_its_processs_namespace_even_unwiped():
    assert max(_observe(QUEUE_OBSERVER, [HOLDOUT_PASS], UNWIPED)[3]) == 1


# Lists every folder and follows every link, reads a byte of every file the test user may open
# (but /proc and /sys), and prints the container's clock before and after, in nanoseconds.
READ_EVERYTHING = r"""python3 - <<'PYEOF'
import os, time
print(time.time_ns())
for root, dirs, names in os.walk("/"):
    dirs[:] = [d for d in dirs if os.path.join(root, d) not in ("/proc", "/sys")]
    for name in names + dirs:
        path = os.path.join(root, name)
        try:
            os.stat(path)
            if os.path.isfile(path):
                with open(path, "rb") as f:
                    f.read(1)
        except OSError:
            pass
time.sleep(0.01)
print(time.time_ns())
PYEOF"""

# Lists, without reading or listing anything first, every path whose access time falls in
# [$1, $2]: each folder's own entry is looked at before the folder is listed.
TRACES_BETWEEN = r"""python3 - "$@" <<'PYEOF'
import os, stat, sys
start, end = int(sys.argv[1]), int(sys.argv[2])
found, folders = [], ["/"]
if start <= os.lstat("/").st_atime_ns <= end:
    found.append("/")
while folders:
    folder = folders.pop()
    try:
        names = os.listdir(folder)
    except OSError:
        continue
    for name in names:
        path = os.path.join(folder, name)
        if path in ("/proc", "/sys"):
            continue
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if start <= st.st_atime_ns <= end:
            found.append(path)
        if stat.S_ISDIR(st.st_mode):
            folders.append(path)
print("\n".join(sorted(found)))
PYEOF"""


def _traces(restage: bool) -> list[str]:
    with prepare_grading_sandbox("docker", DEFAULT_IMAGE, SandboxLimits(command_timeout_s=120), "atime") as box:
        grading = seal_overlay(FIXTURE, FIXTURE, box)
        stage_holdout(grading, HOLD)
        read = box.exec(READ_EVERYTHING)
        assert read.exit_code == 0, read
        start, end = read.stdout.split()
        if restage:  # what happens as root before every test process that could be told anything
            box.put_harness_trees({"/workspace": (HOLD, "root")})
        found = box.exec(f"set -- {start} {end}\n" + TRACES_BETWEEN)
        assert found.exit_code == 0, found
        return found.stdout.split()


def test_what_a_test_process_read_leaves_no_trace_for_the_next():
    """Reading changes a file's access time where the harness has not set it ahead: one bit a
    test process could leave per file for the next (the first reads of the real held-out tests,
    say). Everything the harness writes, and what the container holds beyond the image, gets an
    access time in the future, which no read changes; /dev (a tmpfs the engine mounts without
    relatime) is set again with every write of the harness, that is before every test process."""
    assert _traces(restage=True) == []


def test_without_the_harness_writing_in_between_a_trace_remains():
    """The test above can fail: /dev updates an access time on every look, so before the harness
    writes again what the reader looked at there still says when."""
    assert "/dev" in _traces(restage=False)


#: A visible test that fails if any file it can read starts as a held-out file does.
LOOKS_FOR_HELD_OUT = b"""import glob


def test_no_held_out_file_anywhere():
    found = []
    places = ("/workspace", "/opt/endstate", "/tmp", "/var/tmp", "/dev/shm", "/home/agent", "/run/lock", "/logs")
    for path in (p for place in places for p in glob.glob(place + "/**", recursive=True)):
        try:
            with open(path, "rb") as file:
                found += [path] if file.read(15) == b"# HELD-OUT-MARK" else []
        except OSError:
            pass
    assert found == []
"""


@pytest.mark.parametrize("warm", [True, False], ids=["warm", "cold"])
def test_a_visible_only_run_started_warm_or_cold_finds_no_held_out_file(warm):
    from endstate.grading._testrun import run_tests, start_warm_runner

    tree = dict(FIXTURE, **files({"calc/ops.py": FIXED, "tests/test_look.py": LOOKS_FOR_HELD_OUT}))
    with prepare_grading_sandbox("docker", DEFAULT_IMAGE, SandboxLimits(command_timeout_s=120), "visible") as box:
        grading = seal_overlay(tree, FIXTURE, box, Guards())
        stage_holdout(grading, HOLD)
        if warm:
            start_warm_runner(grading)
        run = run_tests(grading, "python -m pytest -q tests", visible_only=True)
    assert {name: outcome for _, name, outcome in run.cases} == {"test_two": "passed",
                                                                 "test_no_held_out_file_anywhere": "passed"}, run
