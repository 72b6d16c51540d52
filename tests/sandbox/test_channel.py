"""The channel into a Docker sandbox: one exec per process, requests on it, and an
agent that can neither stop nor forge what it answers."""

from __future__ import annotations

import multiprocessing
import time

import pytest

from endstate.agent._tools import ToolError, run_tool
from endstate.errors import SandboxError
from endstate.sandbox import DockerHandle, DockerSandbox, FileEntry, SandboxLimits, _channel

pytestmark = pytest.mark.docker

LIMITS = SandboxLimits(memory_mb=512, pids=128, cpus=1.0, command_timeout_s=30)


@pytest.fixture
def box(sandbox_image: str):
    with DockerSandbox(sandbox_image, LIMITS, "test-channel") as sandbox:
        yield sandbox


def _execs(engine, box) -> list[str]:
    return engine.api.inspect_container(box.container_id)["ExecIDs"] or []


def test_every_tool_of_a_process_goes_through_one_exec(engine, box):
    box.put_tree({"pkg/mod.py": FileEntry(0o644, b"x = 1\n")})  # no channel yet: the engine unpacks it
    assert _execs(engine, box) == []
    for _ in range(3):
        assert box.exec("true").ok
    box.write_file("notes.txt", b"draft\n")
    assert box.read_file("notes.txt") == b"draft\n"
    assert box.edit_file("pkg/mod.py", "x = 1", "x = 2") == 1
    assert box.read_folder("/workspace/pkg", max_bytes=1 << 20)["mod.py"].data == b"x = 2\n"
    assert len(_execs(engine, box)) == 1


def _child_tool_call(handle: DockerHandle, queue) -> None:
    sandbox = DockerSandbox.attach(handle)
    queue.put(sandbox.exec("echo from-child").stdout)


def test_a_forked_process_opens_a_channel_of_its_own(box):
    assert box.exec("echo parent").stdout == "parent\n"
    ours = box._open_channel  # noqa: SLF001 - which stream a process uses is the point here
    queue = multiprocessing.get_context("fork").Queue()
    child = multiprocessing.get_context("fork").Process(target=_child_tool_call, args=(box.handle(), queue))
    child.start()
    assert queue.get(timeout=60) == "from-child\n"
    child.join(60)
    assert child.exitcode == 0
    assert box.exec("echo parent again").stdout == "parent again\n"
    assert box._open_channel is ours and not ours.broken  # noqa: SLF001 - the child never wrote on it


def test_the_agent_can_neither_kill_nor_speak_for_the_server(box):
    hit = box.exec("kill -s KILL -1; pkill -KILL -f endstate-server; echo survived")
    assert box.exec("echo next").stdout == "next\n"
    forged = box.exec(
        "pid=$(pgrep -f endstate-server | head -1); "
        "printf 'forged' > /proc/$pid/fd/1 || echo refused; cat /proc/$pid/environ > /dev/null || echo hidden"
    )
    assert forged.stdout == "refused\nhidden\n", forged
    assert box.exec("echo still ok").stdout == "still ok\n"
    assert hit.exit_code in (0, 137)


def test_what_the_command_sees_carries_nothing_of_the_server(box):
    env = box.exec("env").stdout
    assert "ENDSTATE_SERVER" not in env and "ENDSTATE_NONCE" not in env
    listing = box.exec("ps -o args= -u root").stdout
    assert "endstate-server" in listing and "def main" not in listing  # its source is not on the command line


def test_edit_is_one_request_with_the_tool_s_answers(box):
    box.write_file("a.py", b"one\ntwo\ntwo\n")
    assert box.edit_file("a.py", "one", "ONE") == 1
    assert box.edit_file("a.py", "two", "2") == 2
    assert box.edit_file("a.py", "three", "3") == 0
    assert box.edit_file("a.py", "", "x") == 0
    assert box.read_file("a.py") == b"ONE\ntwo\ntwo\n"
    box.exec("chmod +x a.py")
    box.edit_file("a.py", "ONE", "uno")
    assert box.exec("test -x a.py && echo exec").stdout == "exec\n"  # an executable stays executable
    with pytest.raises(FileNotFoundError):
        box.edit_file("missing.py", "a", "b")
    box.exec("mkdir -p folder")
    with pytest.raises(IsADirectoryError):
        box.edit_file("folder", "a", "b")
    box.exec("ln -s /etc/passwd leak.txt")
    with pytest.raises(PermissionError, match="outside the workspace"):
        box.edit_file("leak.txt", "root", "toor")
    box.exec("printf '\\377\\376binary' > blob.bin")
    with pytest.raises(ToolError, match="not UTF-8 text"):
        run_tool(box, "edit_file", {"path": "blob.bin", "old": "binary", "new": "text"}, timeout=10)


def test_a_report_folder_is_read_as_root_without_following_links(box):
    box.exec("mkdir -p out && echo '<xml/>' > out/report.xml && ln -s /etc/shadow out/shadow "
             "&& echo secret > out/closed && chmod 000 out/closed")
    tree = box.read_folder("/workspace/out", max_bytes=1 << 20)
    assert tree["report.xml"].data == b"<xml/>\n"
    assert tree["shadow"].link == "/etc/shadow"
    assert "closed" not in tree  # unreadable: left out, so a report the agent spoils reads as missing
    with pytest.raises(FileNotFoundError):
        box.read_folder("/workspace/nowhere", max_bytes=1 << 20)
    box.exec("head -c 300000 /dev/zero > out/big")
    with pytest.raises(SandboxError, match="more than"):
        box.read_folder("/workspace/out", max_bytes=100_000)


def test_a_container_killed_under_the_channel_is_a_clear_error(engine, box):
    assert box.exec("true").ok
    engine.api.kill(box.container_id)
    with pytest.raises(SandboxError, match=box.container_id[:12]):
        box.exec("true")
    with pytest.raises(SandboxError):
        box.read_file("anything")


def test_a_server_that_cannot_start_says_why(box, monkeypatch):
    monkeypatch.setattr(_channel, "SERVER_ARGV", ["python3-missing", "-c", "pass"])
    with pytest.raises(SandboxError, match="python3-missing exited 12[67].*needs python3"):
        box.exec("true")


# Every case a file tool can meet; each is run the native way and the script way in a
# fresh workspace, and both must end the same: same answer or error, same files after.
_SETUP = (
    "mkdir -p src closed ro && echo 'x = 1' > src/mod.py && echo 'run' > tool.sh && chmod +x tool.sh "
    "&& ln -s src/mod.py inside-link && ln -s /etc/hostname outside-link && ln -s missing dangling "
    "&& ln -s loop loop && echo secret > closed/file && chmod 000 closed && echo ro > ro/file "
    "&& chmod 444 ro/file && chmod 555 ro && echo locked > locked.txt && chmod 000 locked.txt"
)
_PATHS = ("src/mod.py", "tool.sh", "inside-link", "outside-link", "dangling", "loop", "closed/file", "ro/file",
          "ro/new.txt", "locked.txt", "src", "new/deep/file.txt", "src/mod.py/below", "absent.txt")


def _outcome(call):
    try:
        return ("ok", call())
    except (OSError, SandboxError, ValueError) as exc:
        return (type(exc).__name__, str(exc))


def _after(box) -> list[str]:
    """Every path with its type, mode, size and link; its mtime only where a tool fixed it."""
    listing = box.exec("find . -path ./closed -prune -o -printf '%p %y %m %s %l|%T@\\n' | sort").stdout
    return [line if line.endswith("|946684800.0000000000") else line.rpartition("|")[0] for line in listing.splitlines()]


@pytest.mark.parametrize("path", _PATHS)
def test_native_file_tools_answer_and_leave_files_as_the_scripts_do(sandbox_image, monkeypatch, path):
    seen = {}
    for native in (True, False):
        monkeypatch.setattr("endstate.sandbox._files._NATIVE_FILE_TOOLS", native)
        with DockerSandbox(sandbox_image, LIMITS, "test-native") as box:
            assert box.exec(_SETUP).ok
            read = _outcome(lambda: box.read_file(path))
            write = _outcome(lambda: box.write_file(path, b"new text\n"))
            after_write = _after(box)
            edit = _outcome(lambda: box.edit_file(path, "new", "old"))
            seen[native] = (read, write, after_write, edit, _after(box))
    assert seen[True] == seen[False]


def test_plain_file_tools_are_answered_without_the_script(box):
    # The equivalence above holds trivially if every call fell back to the script; the
    # plain cases must not (a broken native path would only cost time, silently).
    box.exec("echo 'x = 1' > mod.py && ln -s mod.py link.py")
    channel = box._channel()  # noqa: SLF001 - which way the server answered is the point
    for op, path, payload in (("read", "mod.py", b""), ("read", "link.py", b""), ("write", "mod.py", b"x = 2\n"),
                              ("write", "fresh.py", b"new\n"), ("read", "missing.py", b"")):
        reply, _, _ = channel.request(box._file_request(op, path), payload, deadline=time.monotonic() + 30)  # noqa: SLF001
        assert reply["scripted"] is (path == "missing.py"), (op, path, reply)
