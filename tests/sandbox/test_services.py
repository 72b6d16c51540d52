"""The agent's services, read in its container and started again in the grading container as they ran.

What starts one again is what the kernel says started it: its executable (/proc/PID/exe) and argv,
its environment as the agent set it (less only the values of the harness's own secrets), its user,
groups and working folder. A daemon that rewrote its command line into a title is never started
from the title's first word; one that cannot be started again says why.
"""

from __future__ import annotations

import pytest

from endstate.sandbox import SandboxLimits, agent_processes, open_sandbox, start_sealed
from endstate.sandbox._services import Process, _kept

HARNESS_KEY = "sk-harness-0123456789abcdef"


def test_a_service_keeps_its_own_secret_looking_variables_and_loses_the_harness_s_values():
    env = {"PATH": "/usr/bin", "GREET_TOKEN": "tok-greet-42", "REDIS_PASSWORD": "x", "ENDSTATE_NONCE": "n",
           "COPIED": f"Bearer {HARNESS_KEY}", "SHORT": "1"}
    assert _kept(env, [HARNESS_KEY, "1"]) == {"GREET_TOKEN": "tok-greet-42", "PATH": "/usr/bin",
                                               "REDIS_PASSWORD": "x", "SHORT": "1"}


def test_a_service_that_cannot_start_again_is_named_without_reaching_the_container():
    gone = Process(["mystery"], "/", 0, 0, exe="/usr/bin/perl", unrestartable="it rewrote its command line")
    assert start_sealed_lines(gone) == ["mystery: it rewrote its command line"]
    assert gone.line().endswith("(not restartable: it rewrote its command line)")


def start_sealed_lines(process: Process) -> list[str]:
    from endstate.sandbox._services import start_processes

    return start_processes(None, "", [process], [])  # never asks the engine: nothing to start


def _proc(engine, box, pattern: str) -> dict:
    """What the kernel says of the one process whose command line matches `pattern`, read as its user."""
    container = engine.containers.get(box.container_id)
    found = container.exec_run(["pgrep", "-f", pattern], user="root").output.decode().split()
    assert len(found) == 1, (pattern, found)
    pid = found[0]
    uid = container.exec_run(["stat", "-c", "%u:%g", f"/proc/{pid}"], user="root").output.decode().strip()
    read = container.exec_run(["bash", "-c", f"tr '\\0' '\\n' < /proc/{pid}/cmdline; echo ==; "
                               f"tr '\\0' '\\n' < /proc/{pid}/environ; echo ==; readlink /proc/{pid}/cwd; "
                               f"grep ^Groups: /proc/{pid}/status"], user=uid).output.decode()
    argv, env, rest = read.split("==\n")
    cwd, groups = rest.splitlines()
    return {"uid": int(uid.split(":")[0]), "argv": argv.splitlines(), "env": dict(line.split("=", 1) for line in env.splitlines()),
            "cwd": cwd, "groups": groups.split()[1:]}


@pytest.mark.docker
def test_services_start_again_as_they_ran(sandbox_image, engine):
    limits = SandboxLimits(agent_uid=0, command_timeout_s=60)
    with open_sandbox("docker", limits=limits) as box:
        made = box.exec(
            "groupadd -g 990 extra && groupadd -g 991 svc && useradd -r -u 991 -g svc -G extra svc && cd /var/lib; "
            # A service run with a token of its own and a variable that copies the harness's key.
            f"GREET_TOKEN=tok-greet-42 LEAK={HARNESS_KEY} setpriv --reuid=svc --regid=svc --init-groups "
            "nohup python3 -c 'import time; time.sleep(600)  # greet-service' >/dev/null 2>&1 & "
            # A daemon that rewrites its command line into a title, as nginx does; and one whose title names nothing.
            "nohup perl -e '$0 = \"svcd: master process /usr/bin/perl -e sleep(600)\"; sleep 600' >/dev/null 2>&1 & "
            "nohup perl -e '$0 = \"mystery\"; sleep 600' >/dev/null 2>&1 & sleep 1")
        assert made.exit_code == 0, made
        sealed = {" ".join(p.argv): p for p in agent_processes(box, [HARNESS_KEY])}
    service = sealed["python3 -c import time; time.sleep(600)  # greet-service"]
    assert (service.uid, service.gid, service.groups, service.cwd) == (991, 991, [990, 991], "/var/lib")
    assert service.exe.startswith("/usr/bin/python3") and service.env["GREET_TOKEN"] == "tok-greet-42"
    assert "LEAK" not in service.env and not any(k.startswith("ENDSTATE") for k in service.env)
    titled = sealed["/usr/bin/perl -e sleep(600)"]
    assert titled.exe == "/usr/bin/perl" and not titled.unrestartable
    mystery = next(p for p in sealed.values() if p.unrestartable)
    assert "mystery" in mystery.unrestartable and "/usr/bin/perl" in mystery.unrestartable

    with open_sandbox("docker", limits=limits, grading=True) as grading:
        unstarted = start_sealed(grading, sorted(sealed.values(), key=lambda p: p.argv))
        assert len(unstarted) == 1 and unstarted[0].startswith("mystery:"), unstarted
        ran = _proc(engine, grading, "greet-service")
        assert ran["argv"] == service.argv and ran["cwd"] == "/var/lib" and ran["uid"] == 991
        assert ran["groups"] == ["990", "991"] and ran["env"]["GREET_TOKEN"] == "tok-greet-42"
        assert "LEAK" not in ran["env"]
        assert _proc(engine, grading, "^/usr/bin/perl -e sleep")["uid"] == 0  # up again from its title's words
