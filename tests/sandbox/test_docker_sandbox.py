"""DockerSandbox against the real engine: isolation, limits, files, lifecycle."""

from __future__ import annotations

import time

import docker
import msgspec
import pytest

from endstate.errors import CommandWedged, SandboxError, SandboxUnavailable
from endstate.sandbox import DockerSandbox, FileEntry, SandboxHandle, SandboxLimits, machinery_fault

pytestmark = pytest.mark.docker

CAP = 64 * 1024
LIMITS = SandboxLimits(memory_mb=512, pids=128, cpus=1.0, command_timeout_s=30, output_cap_bytes=CAP)


@pytest.fixture(scope="module")
def box(sandbox_image: str):
    """One container shared by the tests that do not need a fresh one."""
    with DockerSandbox(sandbox_image, LIMITS, "test-docker") as sandbox:
        yield sandbox


@pytest.fixture
def agent_processes(as_root, box):
    """What the agent user still runs in the shared container."""
    return lambda: as_root(box.handle(), "ps -u agent -o pid=,args= || true")[1].strip()


def test_commands_run_as_agent_in_workspace_with_fixed_environment(box):
    result = box.exec('id -u; pwd; hostname; echo "$TZ $LANG $LC_ALL $PYTHONHASHSEED $HOME"')
    assert result.ok, result
    assert result.stdout.splitlines() == [
        "1000", "/workspace", "sandbox", "UTC C.UTF-8 C.UTF-8 0 /home/agent"
    ]


def test_exit_code_and_streams_are_kept_apart(box):
    result = box.exec("echo out; echo err >&2; exit 3")
    assert (result.exit_code, result.stdout, result.stderr) == (3, "out\n", "err\n")
    assert not result.ok and not result.timed_out and not result.truncated


def test_network_is_unreachable(box):
    connect = box.exec(
        "python3 -c 'import socket; socket.create_connection((\"1.1.1.1\", 53), timeout=3)'", timeout=10
    )
    assert connect.exit_code != 0
    assert "unreachable" in connect.stderr.lower()
    resolve = box.exec("python3 -c 'import socket; socket.getaddrinfo(\"deb.debian.org\", 80)'", timeout=10)
    assert resolve.exit_code != 0


def test_agent_cannot_write_outside_the_workspace(as_root, box):
    for path in ("/etc/x", "/usr/x", "/x", "/home/x", "/usr/lib/python3/dist-packages/x.py"):
        result = box.exec(f"echo hacked > {path}")
        assert result.exit_code != 0, path
        code, _ = as_root(box.handle(), f"test -e {path}")
        assert code != 0, f"{path} was written"
    assert box.exec("sudo true || su -c true").exit_code != 0


def test_detached_background_process_does_not_hold_the_command(agent_processes, box):
    result = box.exec("nohup sleep 30 >/dev/null 2>&1 & echo started", timeout=10)
    assert result.ok and result.duration_s < 5
    # nohup has been started, not necessarily exec'd into sleep yet: wait for it, boundedly.
    deadline = time.monotonic() + 10
    while "sleep 30" not in agent_processes() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert "sleep 30" in agent_processes()


def test_timeout_kills_the_command_and_all_its_children(agent_processes, box):
    result = box.exec(
        "(sleep 2; touch /workspace/late) & "
        "setsid bash -c 'while true; do sleep 0.1; done' & "
        "while true; do sleep 0.1; done",
        timeout=1,
    )
    assert result.timed_out and result.exit_code == 124 and not result.ok
    assert 0.9 < result.duration_s < 6
    assert agent_processes() == ""
    assert box.exec("echo still here").stdout == "still here\n"


def test_child_holding_the_output_open_runs_into_the_timeout(agent_processes, box):
    result = box.exec("sleep 60 & echo started", timeout=1)
    assert result.timed_out and result.stdout == "started\n"
    assert result.duration_s < 6
    assert agent_processes() == ""


#: Commands of every shape the runner handles: exit codes, both streams, output written after the
#: command itself has ended, a detached process that lets go of the output, and silence.
SHAPES = [
    ("true", 0, "", ""),
    ("echo hi; echo err >&2; exit 3", 3, "hi\n", "err\n"),
    ("python3 -c 'import sys; print(2 + 2); sys.exit(7)'", 7, "4\n", ""),
    ("(sleep 0.05; echo late) & echo early", 0, "early\nlate\n", ""),
    ("nohup sleep 0.3 >/dev/null 2>&1 & echo detached", 0, "detached\n", ""),
    ("sleep 0.02; printf x >&2", 0, "", "x"),
]


def test_many_commands_of_every_shape_come_back_whole_and_in_time(agent_processes, box):
    for round in range(25):
        for command, code, out, err in SHAPES:
            result = box.exec(command, timeout=10)
            assert (result.exit_code, result.stdout, result.stderr, result.timed_out) == (code, out, err, False), \
                (round, command, result)
            assert result.duration_s < 5, (round, command, result)
    box.exec("sleep 0.4")  # the last detached sleep ends
    assert agent_processes() == ""


def test_both_watchers_firing_at_once_still_say_why(box):
    """The disk watch and the watchdog fire together on a command that fills the workspace and holds
    the output open: the ceiling is named (it is checked first), never a runner that died."""
    from endstate.errors import WorkspaceFull

    with DockerSandbox(box.image, SandboxLimits(workspace_mb=32, command_timeout_s=30), "test-both") as small:
        with pytest.raises(WorkspaceFull, match="ceiling of 32 MiB"):
            small.exec("sleep 60 & head -c 40M /dev/zero > big; sleep 0.4", timeout=0.5)
        assert small.exec("rm big; echo served").stdout == "served\n"


def test_a_command_that_closes_its_output_and_runs_on_runs_into_the_timeout(agent_processes, box):
    result = box.exec("echo before; exec >&- 2>&-; sleep 60", timeout=1)
    assert result.timed_out and result.exit_code == 124 and result.stdout == "before\n"
    assert result.duration_s < 6
    assert agent_processes() == ""


def test_a_command_killing_every_process_of_its_user_still_times_out(agent_processes, box):
    """A loop of `kill -9 -1` as the agent kills all else the agent owns, and would kill a killer
    that had become the agent: the command would outlive its deadline and its task read as a fault
    of the machinery (unscored) instead of a timeout. The killer cannot be signalled by the agent."""
    result = box.exec("(while :; do kill -9 -1 2>/dev/null; done) & sleep 100", timeout=2)
    assert result.timed_out and result.exit_code == 124
    assert result.duration_s < 8
    assert agent_processes() == ""
    assert box.exec("echo still here").stdout == "still here\n"


def test_fork_bomb_is_contained_by_the_pids_limit(agent_processes, box):
    result = box.exec(":(){ :|:& };:", timeout=3)
    assert result.timed_out
    assert result.duration_s < 15
    assert box.exec("echo alive").stdout == "alive\n"
    assert agent_processes() == ""


def test_huge_output_is_capped_per_stream(box):
    result = box.exec("yes | head -c 50000000; head -c 100000 /dev/zero | tr '\\0' e >&2")
    assert result.ok and result.truncated
    assert result.stdout.startswith("y\ny\n")
    assert result.stdout.endswith(f"\n[endstate: output truncated: {50_000_000 - CAP} bytes dropped]\n")
    assert len(result.stdout) < CAP + 100
    assert result.stderr.startswith("e" * CAP + "\n[endstate: output truncated: ")
    assert result.stderr.endswith(f"{100_000 - CAP} bytes dropped]\n")


def test_output_at_the_cap_is_not_marked(box):
    result = box.exec(f"head -c {CAP} /dev/zero")
    assert not result.truncated and len(result.stdout) == CAP


def test_put_and_get_tree_round_trip(box):
    tree = {
        "rt/bin/run.sh": FileEntry(0o755, b"#!/bin/sh\necho ran\n"),
        "rt/data.bin": FileEntry(0o644, bytes(range(256)) * 3),
        "rt/deep/er/empty.txt": FileEntry(0o644, b""),
    }
    box.put_tree(tree)
    back = {p: e for p, e in box.get_tree().items() if p.startswith("rt/")}
    assert back == tree
    assert box.exec("rt/bin/run.sh").stdout == "ran\n"
    owners = box.exec("stat -c '%U %a' rt/bin/run.sh rt/data.bin rt/deep/er").stdout.split("\n")
    assert owners[:3] == ["agent 755", "agent 644", "agent 755"]
    assert box.exec("echo more >> rt/data.bin && rm rt/deep/er/empty.txt").ok


def test_get_tree_keeps_files_and_links_as_links(box):
    box.exec("mkdir -p gt && echo a > gt/a && ln -s a gt/link && ln -s /etc/passwd gt/out && mkfifo gt/fifo"
             " && ln gt/a gt/hard")
    tree = {p: e for p, e in box.get_tree().items() if p.startswith("gt/")}
    assert sorted(tree) == ["gt/a", "gt/hard", "gt/link", "gt/out"]  # the fifo is not a file
    assert tree["gt/link"] == FileEntry.symlink("a") and tree["gt/out"] == FileEntry.symlink("/etc/passwd")
    assert tree["gt/hard"].data == tree["gt/a"].data == b"a\n"


def test_a_stopped_sandbox_keeps_its_files_and_runs_nothing(sandbox_image):
    with DockerSandbox(sandbox_image, SandboxLimits(command_timeout_s=30), "stop") as stopped:
        stopped.exec("echo kept > kept.txt && (nohup sleep 600 >/dev/null 2>&1 &)")
        stopped.stop()
        assert stopped.get_tree()["kept.txt"].data == b"kept\n"
        with pytest.raises(SandboxError):
            stopped.exec("true")


def test_harness_files_are_read_only_to_the_agent_user(sandbox_image):
    with DockerSandbox(sandbox_image, LIMITS, "harness") as box:
        _harness_files_checks(box)


def _harness_files_checks(box):
    box.put_harness_tree({"ro/file.txt": FileEntry(0o644, b"harness\n")}, owner="root")
    result = box.exec("echo x > ro/file.txt; echo y > ro/new.txt; rm -f ro/file.txt; cat ro/file.txt")
    assert result.stdout == "harness\n" and "Permission denied" in result.stderr
    box.put_harness_tree({}, at="/opt/endstate/report", owner="agent")
    assert box.exec("echo r > /opt/endstate/report/r && echo x > /opt/endstate/nope").exit_code != 0
    assert box.read_path("/opt/endstate/report/r", max_bytes=10) == b"r\n"
    with pytest.raises(SandboxError):
        box.read_path("/opt/endstate/report/r", max_bytes=1)


def test_several_harness_trees_land_in_one_write_with_their_own_owners(engine, sandbox_image):
    with DockerSandbox(sandbox_image, LIMITS, "harness-many") as box:
        box.put_harness_trees({"/workspace": ({"t/test_a.py": FileEntry(0o644, b"a\n")}, "root"),
                               "/opt/endstate/harness": ({"run.py": FileEntry(0o644, b"r\n")}, "root"),
                               "/opt/endstate/report": ({}, "agent")})
        listing = box.exec("stat -c '%n %U %a' /workspace /workspace/t /workspace/t/test_a.py /opt /opt/endstate "
                           "/opt/endstate/harness /opt/endstate/harness/run.py /opt/endstate/report").stdout
        assert listing.splitlines() == [
            "/workspace root 755", "/workspace/t root 755", "/workspace/t/test_a.py root 644", "/opt root 755",
            "/opt/endstate root 755", "/opt/endstate/harness root 755", "/opt/endstate/harness/run.py root 644",
            "/opt/endstate/report agent 755"]
        assert box.exec("echo r > /opt/endstate/report/r && echo x > /opt/endstate/harness/x").exit_code != 0
        assert box.exec("cat /opt/endstate/report/r").stdout == "r\n"


def test_read_and_write_files(box):
    box.write_file("rw/new/file.txt", b"hello\x00world")
    assert box.read_file("rw/new/file.txt") == b"hello\x00world"
    assert box.exec("cat rw/new/file.txt | wc -c").stdout.strip() == "11"
    box.exec("printf '#!/bin/sh\\necho 1\\n' > rw/tool.sh && chmod +x rw/tool.sh && ln -s tool.sh rw/alias")
    box.write_file("rw/tool.sh", b"#!/bin/sh\necho 2\n")
    assert box.exec("rw/tool.sh").stdout == "2\n", "rewriting a script keeps it executable"
    assert box.read_file("rw/alias") == b"#!/bin/sh\necho 2\n"
    with pytest.raises(FileNotFoundError):
        box.read_file("rw/missing")
    with pytest.raises(IsADirectoryError):
        box.read_file("rw/new")
    with pytest.raises(ValueError):
        box.write_file("../etc/passwd", b"x")


def test_describe_names_the_image_by_id(engine, box, sandbox_image):
    facts = box.describe()
    assert facts == {"backend": "docker", "image": sandbox_image, "image_id": engine.images.get(sandbox_image).id}
    assert facts["image_id"].startswith("sha256:")


def test_container_is_locked_down(engine, box):
    attrs = engine.containers.get(box.handle().container).attrs
    host = attrs["HostConfig"]
    assert host["NetworkMode"] == "none"
    assert host["PidsLimit"] == LIMITS.pids and host["Memory"] == LIMITS.memory_mb * 2**20
    assert host["CapDrop"] == ["ALL"] and "no-new-privileges" in host["SecurityOpt"]
    assert attrs["Config"]["Labels"]["endstate"] == "1"


def test_attach_from_a_handle_does_not_own(engine, box):
    handle = msgspec.json.decode(msgspec.json.encode(box.handle()), type=SandboxHandle)
    other = DockerSandbox.attach(handle)
    other.write_file("attached.txt", b"via handle")
    assert box.read_file("attached.txt") == b"via handle"
    assert other.exec("hostname").stdout == "sandbox\n"
    other.close()
    assert engine.containers.get(handle.container).status == "running"


def _exists(engine, container_id: str) -> bool:
    try:
        engine.containers.get(container_id)
    except docker.errors.NotFound:
        return False
    return True


def test_close_removes_the_container_and_is_idempotent(engine, sandbox_image):
    sandbox = DockerSandbox(sandbox_image, LIMITS, "test-close")
    container = sandbox.handle().container
    assert _exists(engine, container)
    sandbox.close()
    sandbox.close()
    assert not _exists(engine, container)


def test_exception_inside_with_removes_the_container(engine, sandbox_image):
    with pytest.raises(RuntimeError), DockerSandbox(sandbox_image, LIMITS, "test-raise") as sandbox:
        container = sandbox.handle().container
        raise RuntimeError("boom")
    assert not _exists(engine, container)


def test_dead_container_is_a_sandbox_error(engine, sandbox_image):
    with DockerSandbox(sandbox_image, LIMITS, "test-dead") as sandbox:
        engine.containers.get(sandbox.handle().container).kill()
        with pytest.raises(SandboxError):
            sandbox.exec("true")
        with pytest.raises(SandboxError):
            sandbox.read_file("anything")


def test_missing_image_says_how_to_build_it():
    with pytest.raises(SandboxUnavailable, match="endstate-no-such-image:0.*endstate image build"):
        DockerSandbox("endstate-no-such-image:0", LIMITS, "test-missing")


def test_a_runner_that_never_ends_is_killed_and_reported(engine, sandbox_image, monkeypatch):
    import endstate.sandbox._docker as docker_backend

    monkeypatch.setattr(docker_backend, "_RUNNER", "sleep 30")  # as if the watchdog failed
    monkeypatch.setattr(docker_backend, "_BACKSTOP_S", 1.0)
    with DockerSandbox(sandbox_image, LIMITS, "test-wedged") as sandbox:
        with pytest.raises(SandboxError, match="outlived its deadline") as raised:
            sandbox.exec("true", timeout=0.5)
        # What still ran, as the engine saw it before the kill: the clue to what held the command.
        assert "; still running: " in str(raised.value) and "root S sleep 30" in str(raised.value)
        # A fault of the machinery: the task is run again, never judged on it.
        assert isinstance(raised.value, CommandWedged)
        assert machinery_fault(raised.value).startswith("a sandbox's command runner hung (command in container ")
        assert engine.containers.get(sandbox.handle().container).status != "running"
