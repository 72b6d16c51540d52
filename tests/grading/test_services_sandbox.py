"""A root task's services run beside the harness in the grading container, as root.

They are walled off what the score rests on: a service that tries every write (the reward, the
staged verifier, the harness's folders and programs, through /proc, by a new bind) changes none
and sees none of them, while what it keeps its state in stays writable. And what they do to the
harness is the end state's: a service that stops the harness's command server (its command then
never returns) or kills it fails the run as tampering, decided by freezing the container and
looking, never by trying again; it is never an error the runner retries or `--resume` runs anew."""

from __future__ import annotations

import docker
import pytest

from endstate.grading import Outcome, Verdict, grade, prepare_grading_sandbox, resolve, seal_overlay, stage_holdout
from endstate.guards import Guards
from endstate.sandbox import DEFAULT_IMAGE, SandboxLimits, build_image
from endstate.sandbox._services import Process
from endstate.sandbox._tree import FileEntry

pytestmark = pytest.mark.docker

TEST_SH = "#!/bin/bash\nsleep 1\necho 1 > /logs/verifier/reward.txt\n"
#: The wall's verifier waits for the service to have tried everything (its log is in /var, which both see), and
#: passes only if nothing it tried worked (else it says what did).
WALL_TEST_SH = ("#!/bin/bash\nfor i in $(seq 1 200); do grep -qs done /var/log/wall.log && break; sleep 0.2; done\n"
                "[ \"$(cat /var/log/wall.log)\" = \"$(printf 'started\\ndone')\" ] || { cat /var/log/wall.log; exit 1; }\n"
                "echo 1 > /logs/verifier/reward.txt\n")
PATH = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}
#: Every place a service might write to pass: each write that works, and each hidden file it sees, is logged.
TRY_EVERY_WRITE = r"""
log=/var/log/wall.log; echo started > $log
targets="/logs/verifier/reward.txt /workspace/.harbor/tests/test.sh /workspace/.harbor/tests/extra /tests/x
/opt/endstate/x /opt/endstate/verifier-tmp/x /opt/endstate-toolbox/x /usr/local/bin/python3 /usr/bin/x /etc/x /x"
for i in $(seq 1 5); do
  for t in $targets; do (echo 1 > "$t") 2>/dev/null && echo "wrote $t" >> $log; done
  for t in /workspace/.harbor/tests/test.sh /logs/verifier /opt/endstate/harness; do
    [ -e "$t" ] && echo "saw $t" >> $log
  done
  for p in /proc/[0-9]*; do
    (echo 1 > "$p/root/logs/verifier/reward.txt") 2>/dev/null && echo "wrote through $p/root" >> $log
    (echo 1 > "$p/root/workspace/.harbor/tests/test.sh") 2>/dev/null && echo "wrote through $p/root" >> $log
  done
  for f in / /workspace /opt /logs; do mount --bind "$f" /mnt 2>/dev/null && echo "bound $f" >> $log; done
  mount -o remount,rw / 2>/dev/null && echo "remounted /" >> $log
  [ $i = 1 ] && ! dd if=/dev/zero of=/var/fill bs=1M count=100 2>/dev/null && rm /var/fill
  sleep 0.1
done
echo done >> $log
"""


def _service(signal: str) -> Process:
    """A root service that sends `signal` to the harness's command server, again and again."""
    script = f"while :; do pkill -{signal} -f endstate-serve[r]; sleep 0.2; done"  # [r]: never itself
    return Process(["bash", "-c", script], "/", 0, 0, PATH, exe="/usr/bin/bash")


def _graded(service: Process, name: str, test_sh: str = TEST_SH, timeout: float = 3,
            command_timeout_s: int = 30) -> Verdict:
    """The verifier's verdict with `service` running; a harness command it stops is given up on
    `command_timeout_s` and a backstop later."""
    engine = docker.from_env()
    verifier = resolve("endstate.grading:verifier", {"script": ".harbor/tests/test.sh", "timeout": timeout})
    build_image(DEFAULT_IMAGE)  # a no-op when it is current
    tree = {"state": FileEntry(0o644, b"ready\n")}
    limits = SandboxLimits(agent_uid=0, command_timeout_s=command_timeout_s, workspace_mb=32)
    with prepare_grading_sandbox("docker", DEFAULT_IMAGE, limits, name) as box:
        grading = seal_overlay(tree, tree, box)
        stage_holdout(grading, {".harbor/tests/test.sh": FileEntry(0o755, test_sh.encode())}, [verifier])
        grading.processes = [service]
        ((_, verdict),) = grade(grading, [verifier], Guards(end_state_checks=False))
        (state,) = engine.api.containers(all=True, size=True, filters={"id": box.container_id})
    assert state["SizeRw"] < 64 * 1024 * 1024, state  # what the services wrote never reached the host's disk
    return verdict


def test_a_root_service_that_tries_every_write_reaches_nothing_the_verifier_reads():
    service = Process(["bash", "-c", TRY_EVERY_WRITE], "/", 0, 0, PATH, exe="/usr/bin/bash")
    verdict = _graded(service, "wall", WALL_TEST_SH, timeout=60)
    assert verdict.outcome is Outcome.PASS, verdict  # ran to its end, and nothing it tried worked


@pytest.mark.parametrize("signal", ["STOP", "KILL"])
def test_a_service_that_stops_or_kills_the_harness_fails_as_tampering(signal):
    verdict = _graded(_service(signal), f"services-{signal.lower()}", command_timeout_s=10)
    assert verdict.outcome is Outcome.FAIL and verdict.tampering, verdict
    assert "the end state's services interfered with the harness" in verdict.reason, verdict
    if signal == "STOP":  # seen stopped by the channel's watch, never waited for until the deadline
        assert "the harness's command server or its runner is stopped (" in verdict.reason, verdict
