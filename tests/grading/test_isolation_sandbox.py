"""Each process of the end state starts from fresh kernel state, in Docker for real: what one
graded test process leaves in the kernel (a loopback connection's TIME_WAIT entry, System V and
POSIX IPC objects, files in the temporary places, a moved pid counter) is not there for the next,
with or without the wipe between them; and the test user gains nothing from the namespaces."""

from __future__ import annotations

import pytest

from endstate.grading import prepare_grading_sandbox, seal_overlay, stage_holdout
from endstate.grading._testrun import WIPE, run_tests, start_warm_runner
from endstate.guards import Guards
from endstate.sandbox import DEFAULT_IMAGE, FileEntry, SandboxLimits, build_image

pytestmark = pytest.mark.docker

PORT = 47123
#: The first process: every kind of kernel state it can leave for a later one.
LEAVE = f"""
import ctypes, os, socket, subprocess, sys

PORT = {PORT}


def test_leave():
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", PORT))
    listener.listen(64)
    for _ in range(20):  # the side that closes first keeps TIME_WAIT for a minute
        client = socket.create_connection(("127.0.0.1", PORT))
        server, _ = listener.accept()
        client.close()
        server.close()
    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.shmget(0x5EED, 4096, 0o1000 | 0o666) >= 0  # IPC_CREAT
    assert libc.mq_open(b"/endstate-mark", 0o2 | 0o100, 0o666, None) >= 0
    for folder in ("/tmp", "/var/tmp", "/dev/shm", "/home/agent", "/run/lock"):
        with open(os.path.join(folder, "endstate-mark"), "w") as mark:
            mark.write("left")
    for _ in range(300):  # moves the pid counter
        subprocess.run(["true"])
"""
#: The next process: each test passes only where nothing of the first is there.
LOOK = f"""
import os


def _listed(table):
    with open(table) as lines:
        return lines.read()


def test_no_time_wait_entry():
    assert ":%04X" % {PORT} not in _listed("/proc/net/tcp")


def test_no_system_v_object():
    keys = [int(row.split()[0]) for row in _listed("/proc/sysvipc/shm").splitlines()[1:]]
    assert 0x5EED not in keys


def test_no_message_queue():
    assert not os.path.exists("/dev/mqueue/endstate-mark")


def test_no_file_in_a_temporary_place():
    assert [f for f in ("/tmp", "/var/tmp", "/dev/shm", "/home/agent", "/run/lock")
            if os.path.exists(os.path.join(f, "endstate-mark"))] == []


def test_the_pid_counter_starts_afresh():
    assert int(_listed("/proc/loadavg").split("/")[-1].split()[1]) < 300
"""
LOOKS = ("test_no_time_wait_entry", "test_no_system_v_object", "test_no_message_queue",
         "test_no_file_in_a_temporary_place", "test_the_pid_counter_starts_afresh")
#: What the test user may try with the container's SYS_ADMIN in the engine's seccomp profile.
ESCAPE = """
import ctypes, errno, os

libc = ctypes.CDLL(None, use_errno=True)


def _refused(result):
    return result == -1 and ctypes.get_errno() in (errno.EPERM, errno.ENOSYS)


def test_no_user_namespace():
    assert _refused(libc.unshare(0x10000000))  # CLONE_NEWUSER


def test_no_other_namespace():
    assert _refused(libc.unshare(0x40000000 | 0x00020000))  # CLONE_NEWNET | CLONE_NEWNS


def test_no_namespace_by_clone():
    assert _refused(libc.syscall(56, 0x10000000 | 17, 0, 0, 0, 0))  # clone(CLONE_NEWUSER | SIGCHLD)


def test_no_mount():
    assert _refused(libc.mount(b"none", b"/tmp", b"tmpfs", 0, None))


def test_no_joining_a_namespace():
    fd = os.open("/proc/1/ns/net", os.O_RDONLY) if os.access("/proc/1/ns/net", os.R_OK) else -1
    assert fd == -1 or _refused(libc.setns(fd, 0))


def test_loopback_is_up():
    import socket
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        socket.create_connection(listener.getsockname()).close()
"""
TREE = {"tests/test_leave.py": FileEntry(0o644, LEAVE.encode()), "tests/test_look.py": FileEntry(0o644, LOOK.encode()),
        "tests/test_escape.py": FileEntry(0o644, ESCAPE.encode())}


@pytest.fixture(scope="module", autouse=True)
def _built():
    build_image(DEFAULT_IMAGE)  # a no-op when it is current


def _runs(commands: list[str], guards: Guards, *, warm: bool, prelude: str = ""):
    with prepare_grading_sandbox("docker", DEFAULT_IMAGE, SandboxLimits(command_timeout_s=120), "isolation") as box:
        grading = seal_overlay(dict(TREE), {}, box, guards)
        stage_holdout(grading, {})
        if warm:
            start_warm_runner(grading)
        return [run_tests(grading, command, prelude=prelude) for command in commands]


def _outcomes(run) -> dict[str, str]:
    return {name: outcome for _, name, outcome in run.cases}


@pytest.mark.parametrize("warm", [True, False], ids=["warm", "cold"])
def test_nothing_one_test_process_leaves_in_the_kernel_reaches_the_next(warm):
    leave, look = _runs(["python -m pytest -q tests/test_leave.py", "python -m pytest -q tests/test_look.py"],
                        Guards(), warm=warm)
    assert _outcomes(leave) == {"test_leave": "passed"}, leave.output_tail
    assert _outcomes(look) == dict.fromkeys(LOOKS, "passed"), look.output_tail


def test_without_namespaces_of_its_own_a_later_process_reads_what_the_first_left():
    """The test above can fail: with the guard off, even the wipe between the two runs leaves the
    TIME_WAIT entries and the pid counter where the first process put them."""
    leave, look = _runs(["python -m pytest -q tests/test_leave.py", "python -m pytest -q tests/test_look.py"],
                        Guards(process_isolation=False), warm=True, prelude=WIPE)
    assert _outcomes(leave) == {"test_leave": "passed"}, leave.output_tail
    seen = _outcomes(look)
    assert seen["test_no_time_wait_entry"] == "failure" and seen["test_the_pid_counter_starts_afresh"] == "failure"


@pytest.mark.parametrize("warm", [True, False], ids=["warm", "cold"])
def test_the_test_user_gains_nothing_from_the_grading_containers_capabilities(warm):
    (run,) = _runs(["python -m pytest -q tests/test_escape.py"], Guards(), warm=warm)
    assert run.cases and {outcome for _, _, outcome in run.cases} == {"passed"}, (run.cases, run.output_tail)
