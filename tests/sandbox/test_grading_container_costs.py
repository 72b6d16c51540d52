"""What a grading container saves the engine, and what it must not give away.

Archives are unpacked inside the sandbox, through its channel, instead of by the engine
(which re-executes the whole daemon for every archive): the same files, owners and
modes land, a refused unpack falls back to the engine, and a grading container's extra
root rights stay with root. A grading container has a network namespace of its own, never
its agent's: what the agent left in one (a port in TIME_WAIT) is not there to read."""

from __future__ import annotations

import inspect

import pytest

from endstate.grading._pipeline import install_harness, prepare_grading_sandbox
from endstate.grading._testrun import HARNESS_DIR, REPORT_DIR
from endstate.sandbox import HOSTNAME, DockerSandbox, FileEntry, SandboxLimits

pytestmark = pytest.mark.docker

LIMITS = SandboxLimits(memory_mb=512, pids=128, cpus=1.0, command_timeout_s=30)

TREE = {
    "README.md": FileEntry(0o644, b"readme\n"),
    "bin/run.sh": FileEntry(0o755, b"#!/bin/sh\necho hi\n"),
    "bin/alias": FileEntry(0o777, b"", link="run.sh"),
    "pkg/deep/er/mod.py": FileEntry(0o644, b"x = 1\n"),
    "pkg/private.key": FileEntry(0o600, b"secret\n"),
    "dé jà/ü.txt": FileEntry(0o644, "ü\n".encode()),
    "empty": FileEntry(0o644, b""),
}
#: An end state may hold a link out of the workspace (the end-state checks fail it); staging
#: must still copy it as it is. (The engine refuses such a link below the folder it unpacks
#: into, so the agent's trees above hold none.)
ESCAPE = {"escape": FileEntry(0o777, b"", link="../etc")}

#: Every path below the folders the harness writes, with owner, mode, mtime, type, link and size.
#: The workspace's own mtime is left out: it is when the first file landed. The harness's runtime
#: (a read-only volume of a grading container, not unpacked by anyone) is left out too.
LISTING = ("find /workspace /opt -mindepth 0 -path /opt/endstate-runtime -prune -o "
           "-printf '%p %u %g %m %T@ %y %l %s\\n' | sort "
           "| sed 's|^\\(/workspace [^ ]* [^ ]* [^ ]*\\) [^ ]*|\\1|'")


def _unpacked(sandbox_image, monkeypatch, in_sandbox: bool):
    monkeypatch.setattr("endstate.sandbox._docker._IN_SANDBOX_TAR", in_sandbox)
    with DockerSandbox(sandbox_image, LIMITS, "test-unpack") as agent, \
            DockerSandbox(sandbox_image, LIMITS, "test-unpack-grade", grading=True) as grading:
        agent.ready()
        grading.ready()
        agent.put_tree(TREE)
        agent.put_tree({"pkg/deep/er/mod.py": FileEntry(0o755, b"x = 2\n"), "new/file": FileEntry(0o644, b"n\n")})
        install_harness(grading)
        grading.put_harness_trees({"/workspace": ({**TREE, **ESCAPE, "tests/test_h.py": FileEntry(0o644, b"def test(): pass\n")},
                                                  "root"),
                                   HARNESS_DIR: ({"changed.json": FileEntry(0o644, b"[]")}, "root")})
        return agent.exec(LISTING).stdout, grading.exec(LISTING).stdout, agent.get_tree(), grading.read_folder(
            "/workspace", max_bytes=1 << 20)


def test_what_the_sandbox_unpacks_is_what_the_engine_unpacks(sandbox_image, monkeypatch):
    ours, engines = _unpacked(sandbox_image, monkeypatch, True), _unpacked(sandbox_image, monkeypatch, False)
    assert ours == engines
    agent_listing, grading_listing, agent_tree, _ = ours
    assert "/workspace/pkg/private.key agent agent 644 946684800" in agent_listing  # archives carry 644 or 755
    assert "/workspace/bin/alias agent agent 777 946684800.0000000000 l run.sh" in agent_listing
    assert agent_tree["pkg/deep/er/mod.py"] == FileEntry(0o755, b"x = 2\n")
    assert "/workspace root root 755 d" in grading_listing and f"{REPORT_DIR} root root 1777" in grading_listing
    assert "/workspace/dé jà/ü.txt root root 644 946684800" in grading_listing
    assert "/workspace/escape root root 777 946684800.0000000000 l ../etc" in grading_listing


def test_the_engine_unpacks_nothing_a_sandbox_can_unpack(sandbox_image, monkeypatch):
    with DockerSandbox(sandbox_image, LIMITS, "test-unpack-quiet") as agent, \
            DockerSandbox(sandbox_image, LIMITS, "test-unpack-quiet-grade", grading=True) as grading:
        for box in (agent, grading):
            def refused(*args, **kwargs):
                raise AssertionError("the engine was asked to unpack")
            monkeypatch.setattr(box._client.api, "put_archive", refused)
        agent.ready()
        agent.put_tree(TREE)
        grading.ready()
        install_harness(grading)
        grading.put_harness_trees({"/workspace": (TREE, "root")})
        assert agent.read_file("bin/run.sh") == TREE["bin/run.sh"].data
        assert grading.exec("cat /workspace/README.md").stdout == "readme\n"


def test_a_refused_unpack_falls_back_to_the_engine(sandbox_image, monkeypatch):
    calls = []
    with DockerSandbox(sandbox_image, LIMITS, "test-unpack-refused") as box:
        box.ready()
        real = box._client.api.put_archive
        monkeypatch.setattr(box._client.api, "put_archive", lambda *a, **k: calls.append(a[1]) or real(*a, **k))
        # The agent user may not write into a folder it made read-only; the engine may.
        box.exec("mkdir locked && echo old > locked/f && chmod 555 locked")
        box.put_tree({"locked/f": FileEntry(0o644, b"new\n"), "locked/g": FileEntry(0o644, b"g\n")})
        assert box.exec("cat locked/f locked/g").stdout == "new\ng\n" and calls == ["/workspace"]
        # An agent container's root may not give files away: root-owned harness trees go through the engine.
        box.put_harness_trees({HARNESS_DIR: ({"run.py": FileEntry(0o644, b"r\n")}, "root"), REPORT_DIR: ({}, "agent")})
        assert box.exec(f"stat -c '%U' {HARNESS_DIR}/run.py {REPORT_DIR}").stdout == "root\nagent\n"
        assert calls == ["/workspace", "/"]


def test_only_a_grading_containers_root_may_give_files_away(engine, sandbox_image):
    with DockerSandbox(sandbox_image, LIMITS, "test-caps") as agent, \
            DockerSandbox(sandbox_image, LIMITS, "test-caps-grade", grading=True) as grading:
        assert engine.api.inspect_container(agent.container_id)["HostConfig"]["CapAdd"] == ["SETUID", "SETGID"]
        assert sorted(engine.api.inspect_container(grading.container_id)["HostConfig"]["CapAdd"]) == [
            "CHOWN", "FOWNER", "NET_ADMIN", "SETGID", "SETUID", "SYS_ADMIN"]
        grading.ready()
        install_harness(grading)
        grading.put_harness_trees({"/workspace": ({"src.py": FileEntry(0o644, b"x = 1\n")}, "root")})
        # What tests run as holds none of it: not even chmod of a root file, or chown of its own.
        tried = grading.exec("chmod 666 /workspace/src.py; chown agent /workspace/src.py; echo hack >> /workspace/src.py;"
                             f" touch {REPORT_DIR}/mine && chown root {REPORT_DIR}/mine; stat -c '%U %a' /workspace/src.py")
        assert tried.stdout.strip() == "root 644" and tried.stderr.count("Operation not permitted") == 3
        # Nor what SYS_ADMIN opens in the engine's seccomp profile: every command there runs under a filter.
        for attempt in ("unshare --user true", "unshare --user --map-root-user --net true", "unshare --net true"):
            refused = grading.exec(attempt)
            assert refused.exit_code != 0 and "Operation not permitted" in refused.stderr, (attempt, refused)
        # Root reads no file its mode refuses (no DAC_OVERRIDE): a spoiled report still reads as missing.
        grading.exec(f"echo spoiled > {REPORT_DIR}/gone.xml && chmod 000 {REPORT_DIR}/gone.xml")
        assert sorted(grading.read_folder(REPORT_DIR, max_bytes=1 << 20)) == ["mine"]


def test_no_channel_is_opened_only_to_unpack(engine, sandbox_image, monkeypatch):
    """An exec costs the engine about what an unpack does: a process that holds no channel
    into the sandbox (the run, making the next task's sandbox) leaves the fixture to the engine."""
    calls = []
    with DockerSandbox(sandbox_image, LIMITS, "test-unpack-ahead") as box:
        real = box._client.api.put_archive
        monkeypatch.setattr(box._client.api, "put_archive", lambda *a, **k: calls.append(a[1]) or real(*a, **k))
        box.put_tree(TREE)
        assert calls == ["/workspace"] and not engine.api.inspect_container(box.container_id)["ExecIDs"]
        assert box.read_file("README.md") == b"readme\n"
        box.put_tree({"README.md": FileEntry(0o644, b"again\n")})  # the channel is open now
        assert calls == ["/workspace"] and box.read_file("README.md") == b"again\n"


def _netns(box) -> str:
    return box.exec("readlink /proc/self/ns/net").stdout.strip()


#: A connection the agent opened and closed itself on loopback: its port stays in TIME_WAIT in
#: the namespace for a minute after every process of the agent is dead (a kernel-state channel).
_TIME_WAIT = ("python3 -c \"import socket; s = socket.socket(); s.bind(('127.0.0.1', 47011)); s.listen(); "
              "c = socket.create_connection(('127.0.0.1', 47011)); a, _ = s.accept(); c.close(); a.close()\"")
#: Local port 47011 (0xB7A3) in any state in /proc/net/tcp.
_SEEN = "grep -ci ':B7A3 ' /proc/net/tcp || true"


def test_a_grading_container_never_joins_its_agents_network_namespace(engine, sandbox_image):
    with DockerSandbox(sandbox_image, LIMITS, "test-netns") as agent:
        assert agent.exec(_TIME_WAIT).exit_code == 0 and int(agent.exec(_SEEN).stdout) >= 1
        agent.stop()  # as before sealing: no process of the agent survives; the namespace's state does
        with install_grading(sandbox_image) as grading:
            assert engine.api.inspect_container(grading.container_id)["HostConfig"]["NetworkMode"] == "none"
            assert _netns(grading) != ""
            assert int(grading.exec(_SEEN).stdout) == 0  # nothing the agent left in its namespace
            assert grading.exec("hostname").stdout.strip() == HOSTNAME  # what every sandbox is called
    assert "beside" not in inspect.signature(prepare_grading_sandbox).parameters


def install_grading(sandbox_image):
    return prepare_grading_sandbox("docker", sandbox_image, LIMITS, "test-netns")


def test_a_grading_container_reached_from_its_handle_still_unpacks_as_root(sandbox_image, monkeypatch):
    calls = []
    with DockerSandbox(sandbox_image, LIMITS, "test-attach-grade", grading=True) as made, \
            DockerSandbox(sandbox_image, LIMITS, "test-attach-agent") as agent:
        real = made._client.api.put_archive  # one client per process: the attached boxes use it too
        monkeypatch.setattr(made._client.api, "put_archive", lambda *a, **k: calls.append(a[0]) or real(*a, **k))
        for box in (DockerSandbox.attach(made.handle()), DockerSandbox.attach(agent.handle())):
            box.ready()
            box.put_harness_trees({HARNESS_DIR: ({"run.py": FileEntry(0o644, b"r\n")}, "root")})
            assert box.exec(f"stat -c '%U' {HARNESS_DIR}/run.py").stdout == "root\n"
        assert calls == [agent.container_id]  # the grading container unpacked it itself


#: The signals a command ignores, as a bitmask (bit N-1 is signal N): SIGPIPE is 13, SIGXFSZ 25.
_IGNORED = "grep '^SigIgn' /proc/self/status | cut -f2"


def test_a_grading_containers_commands_start_with_the_signals_a_shell_gives_them(sandbox_image):
    """The filter's wrapper is a Python program, and Python ignores SIGPIPE and SIGXFSZ; an exec
    keeps them ignored. A pipeline such as `yes | head` then printed 'Broken pipe' under grading."""
    with DockerSandbox(sandbox_image, LIMITS, "test-signals-grade", grading=True) as grading, \
            DockerSandbox(sandbox_image, LIMITS, "test-signals-agent") as agent:
        for box in (grading, agent):
            ignored = int(box.exec(_IGNORED).stdout.strip(), 16)
            assert not ignored & (1 << 12) and not ignored & (1 << 24), f"{box.container_id[:12]}: {ignored:#x}"
            piped = box.exec("yes alpha | head -n 2")
            assert (piped.exit_code, piped.stdout, piped.stderr) == (0, "alpha\nalpha\n", "")


def _engine_calls(client, monkeypatch) -> list[str]:
    """Every engine API call the process's shared client makes from here on, as "METHOD /path"
    (the API version and container ids left out)."""
    import re

    calls: list[str] = []
    real = client.api.send

    def send(request, **kwargs):
        path = re.sub(r"^/v[0-9.]+|[0-9a-f]{64}", "", request.path_url.split("?")[0])
        calls.append(f"{request.method} {path}")
        return real(request, **kwargs)

    monkeypatch.setattr(client.api, "send", send)
    return calls


def test_a_sandboxs_life_asks_the_engine_only_what_it_must(sandbox_image, monkeypatch):
    """Create, start, one command, close: the image's id comes with the container's own inspect
    and the harness's runtime volume is looked up once per process, not per grading container."""
    with DockerSandbox(sandbox_image, LIMITS, "test-calls-first", grading=True):
        pass  # the process's first grading container finds the runtime volume
    box = DockerSandbox(sandbox_image, LIMITS, "test-calls-agent")
    assert box.describe()["image_id"] == box._client.images.get(sandbox_image).id
    calls = _engine_calls(box._client, monkeypatch)
    with DockerSandbox(sandbox_image, LIMITS, "test-calls-grade", grading=True) as grading:
        assert grading.exec("true").ok and grading.image_id == box.image_id
    assert box.exec("true").ok
    box.close()
    life = ["POST /containers/create", "GET /containers//json", "POST /containers//attach",
            "POST /containers//start", "POST /containers//exec", "POST /exec//start"]
    assert calls == [*life, "DELETE /containers/", *life[-2:], "DELETE /containers/"]
