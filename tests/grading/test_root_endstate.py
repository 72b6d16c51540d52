"""What a root end state can do to the harness grading it, beyond the programs it could shadow
(test_runtime.py) and the writes its services could try (test_services_sandbox.py). Each attack
below worked on the harness before the fix its test names:

- the task image's own ENV names a file the end state writes (BASH_ENV here; LD_PRELOAD,
  LD_LIBRARY_PATH and the locale's files are the same class): the harness's runner ran it as root,
  and a reward it wrote a moment later passed;
- the harness's processes read the image's locale data (the end state's to rewrite);
- a verifier running the end state wrote without bound to the container's own filesystem, the
  host's disk (a full one is read as the machinery's fault, and retried);
- a file the end state left beside the held-out ones in their folder reached the verifier;
- an end state whose /etc/passwd has no `root` made every later exec of the harness's fail
  (`docker exec -u root` looks the name up there), read as the services' doing.
"""

from __future__ import annotations

import io
import threading
import time
from pathlib import Path

import docker
import pytest

from endstate.grading import Outcome, Verdict, grade, prepare_grading_sandbox, resolve, seal_overlay, stage_holdout
from endstate.guards import Guards
from endstate.sandbox import DEFAULT_IMAGE, RUNTIME, SandboxLimits, build_image
from endstate.sandbox._layer import SystemChange, apply_change, harness_path
from endstate.sandbox._services import Process
from endstate.sandbox._tree import FileEntry, Tree

pytestmark = pytest.mark.docker

PATH = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}
#: Exits 0 and writes no reward: a FAIL, unless something else wrote one.
NO_REWARD = "#!/bin/bash\nsleep 3\nexit 0\n"
REWARD = "#!/bin/bash\nsleep 1\necho 1 > /logs/verifier/reward.txt\n"
_MIB = 1024 * 1024


def _image(env: dict[str, str]) -> str:
    """The sandbox image with `env` in its ENV (a task image's own settings), built where missing."""
    build_image(DEFAULT_IMAGE)
    tag = "endstate-test-env:" + "-".join(sorted(env)).lower().replace("_", "")
    lines = "".join(f"ENV {k}={v}\n" for k, v in env.items())
    docker.from_env().images.build(fileobj=io.BytesIO(f"FROM {DEFAULT_IMAGE}\n{lines}".encode()), tag=tag, rm=True)
    return tag


def _graded(name: str, *, change: SystemChange = SystemChange(), processes: list[Process] = (),
            test_sh: str = NO_REWARD, image: str = DEFAULT_IMAGE, tree: Tree | None = None,
            during=None, command_timeout_s: int = 60) -> tuple[Verdict, int]:
    """The verifier's verdict on a root end state that is `change`, `processes` and `tree` (a workspace),
    and what its grading container wrote to the host's disk; `during(container)` runs while it grades.
    A harness command the services stop is given up on `command_timeout_s` and a backstop later."""
    build_image(DEFAULT_IMAGE)
    engine = docker.from_env()
    verifier = resolve("endstate.grading:verifier", {"script": ".harbor/tests/test.sh", "timeout": 30})
    tree = tree or {"state": FileEntry(0o644, b"ready\n")}
    limits = SandboxLimits(agent_uid=0, command_timeout_s=command_timeout_s, workspace_mb=32)
    with prepare_grading_sandbox("docker", image, limits, name) as box:
        apply_change(box, change)
        grading = seal_overlay(tree, {"state": FileEntry(0o644, b"ready\n")}, box)
        stage_holdout(grading, {".harbor/tests/test.sh": FileEntry(0o755, test_sh.encode())}, [verifier])
        grading.processes = list(processes)
        watcher = threading.Thread(target=during, args=(engine.containers.get(box.container_id),)) if during else None
        if watcher:
            watcher.start()
        ((_, verdict),) = grade(grading, [verifier], Guards(end_state_checks=False))
        if watcher:
            watcher.join()
        (state,) = engine.api.containers(all=True, size=True, filters={"id": box.container_id})
    return verdict, state["SizeRw"]


#: Run by every bash started with the image's BASH_ENV: once the verifier's command starts (the runner's
#: fifth argument), a reward a moment later, written as whoever runs it.
BASH_ENV_HOOK = (b'case "$5" in *test.sh*) (sleep 1.5; echo 1 > /logs/verifier/reward.txt) </dev/null >/dev/null 2>&1 & '
                 b';; esac\n')


def test_a_file_the_images_environment_names_never_runs_in_the_harness():
    image = _image({"BASH_ENV": "/etc/endstate-test-bashenv"})
    assert not harness_path("/etc/endstate-test-bashenv", added=True)  # no name the tamper list could hold
    change = SystemChange(files={"/etc/endstate-test-bashenv": FileEntry(0o644, BASH_ENV_HOOK)})
    verdict, _ = _graded("root-bash-env", change=change, image=image)
    assert verdict.outcome is Outcome.FAIL and "without writing" in verdict.reason, verdict


def _runtime_maps(container) -> set[str]:
    """Every file mapped by a process of the harness's (its program the runtime's, and holding SYS_ADMIN, which
    a command never does) while the verifier runs."""
    script = (f"for p in /proc/[0-9]*; do case $(readlink $p/exe) in {RUNTIME}/*) "
              "read -r _ bounding < <(grep CapBnd $p/status); (( 0x$bounding & (1 << 21) )) || continue; "
              "while read -r _ _ _ _ inode path; do [ \"$inode\" != 0 ] && echo \"$path\"; done < $p/maps;; "
              "esac; done 2>/dev/null | sort -u")
    deadline, seen = time.monotonic() + 20, set()
    while time.monotonic() < deadline and not any("setpriv" in p or "bash" in p for p in seen):
        ran = container.exec_run([f"{RUNTIME}/bin/bash", "-c", script], user="0",
                                 environment={"PATH": f"{RUNTIME}/bin", "LC_ALL": "C", "LOCPATH": f"{RUNTIME}/none"})
        seen |= set(ran.output.decode().split())
        time.sleep(0.2)
    return seen


def test_the_harness_maps_no_file_of_the_image():
    """Its loader, libraries, Python, locale: none is a file of the image (the end state's to change)."""
    maps: set[str] = set()
    verdict, _ = _graded("root-maps", test_sh=REWARD, during=lambda c: maps.update(_runtime_maps(c)))
    assert verdict.outcome is Outcome.PASS, verdict
    assert any(path.endswith("/bin/python3") for path in maps), maps
    assert [path for path in maps if not path.startswith(RUNTIME + "/")] == []


#: /etc/passwd without a `root`: uid 0 is still there, named otherwise.
PASSWD = (b"admin:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"
          b"nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n")


def test_the_harness_never_looks_itself_up_in_the_end_states_passwd():
    assert not harness_path("/etc/passwd", added=False)
    change = SystemChange(files={"/etc/passwd": FileEntry(0o644, PASSWD)})
    service = Process(["sleep", "1000"], "/", 0, 0, PATH, exe="/usr/bin/sleep")
    verdict, _ = _graded("root-passwd", change=change, processes=[service], test_sh=REWARD)
    assert verdict.outcome is Outcome.PASS, verdict


def test_what_a_root_verifier_writes_never_reaches_the_hosts_disk():
    """The verifier (and the end state's code it runs) writes 300 MiB into /usr/local, /var/lib and right
    into /: each write past the workspace's ceiling (32 MiB here, all together) fails, the host's disk
    untouched; the verifier carries on (a full disk is the end state's to meet, never the machinery's)."""
    test_sh = ("#!/bin/bash\nfor f in /usr/local/fill /var/lib/fill /fill; do\n"
               "  dd if=/dev/zero of=$f bs=1M count=300 2>/dev/null\ndone\n"
               "echo 1 > /logs/verifier/reward.txt\n")
    verdict, written = _graded("root-disk", test_sh=test_sh)
    assert verdict.outcome is Outcome.PASS, verdict
    assert written < 16 * _MIB, written


def test_a_root_verifier_makes_what_it_needs_right_in_var_home_and_run():
    """Folders holding the engine's mounts (/var/tmp, /home/agent, /run/lock) are bounded like the rest, not
    left read-only: an honest verifier making a site in /var, a user with a home and a folder in /run passes."""
    test_sh = ("#!/bin/bash\nset -e\nmkdir /var/www && echo ok > /var/www/index.html\nuseradd -m bob\n"
               "mkdir /run/app && test -d /home/bob && test -d /var/tmp && test -d /home/agent\n"
               "echo 1 > /logs/verifier/reward.txt\n")
    verdict, written = _graded("root-var", test_sh=test_sh)
    assert verdict.outcome is Outcome.PASS, verdict
    assert written < 16 * _MIB, written


def test_files_the_end_state_left_beside_the_held_out_ones_never_reach_the_verifier():
    """A verifier that includes what its folder holds (a header, a conftest.py) gets its own files alone."""
    test_sh = ("#!/bin/bash\ncd \"$(dirname \"$0\")\"\nls -A | sort > /logs/verifier/seen\n"
               "[ \"$(ls -A)\" = test.sh ] && echo 1 > /logs/verifier/reward.txt\n")
    tree = {"state": FileEntry(0o644, b"ready\n"), ".harbor/tests/conftest.py": FileEntry(0o644, b"# planted\n")}
    verdict, _ = _graded("root-beside", test_sh=test_sh, tree=tree)
    assert verdict.outcome is Outcome.PASS, verdict


#: Found by test_ring.c's `#include "ring.h"` before the project's (its own folder comes first): its
#: `main` is the program's, the held-out test's is renamed away.
BESIDE_RING_H = b'#include_next "ring.h"\nint main(void) { return 0; }\n#define main held_out_main\n'


def test_a_header_left_beside_a_shipped_tasks_held_out_test_never_reaches_it():
    """tasks-harbor/c-ring-buffer with its bug left in, and a ring.h beside the held-out test_ring.c:
    it passed before (the verifier compiled the test against it)."""
    from endstate.checks._check import grade_tree
    from endstate.run._runner import resolve_graders
    from endstate.task import load_task

    build_image(DEFAULT_IMAGE)
    task = load_task(Path(__file__).resolve().parents[2] / "tasks-harbor" / "c-ring-buffer")
    tree = {**task.fixture(), ".harbor/tests/ring.h": FileEntry(0o644, BESIDE_RING_H)}
    verdicts = grade_tree(task, resolve_graders(task), task.fixture(), tree, task.holdout(), "docker", DEFAULT_IMAGE)
    assert ("verifier", Outcome.FAIL) in [(name, outcome) for name, outcome, _ in verdicts], verdicts


#: Written by whatever Python of the image's starts with its site (a .pth) or its environment (PYTHONSTARTUP,
#: a sitecustomize on PYTHONPATH): a reward, a moment later.
PY_HOOK = ("import os, subprocess; subprocess.Popen(['sh', '-c', 'sleep 1.5; echo 1 > /logs/verifier/reward.txt'], "
           "start_new_session=True)\n")


def test_no_python_of_the_image_starts_in_the_harness():
    """A .pth in the image's site folder, and a sitecustomize and a start-up file the image's ENV names:
    any Python of the image the harness started (with its site, or its environment) would write a reward."""
    image = _image({"PYTHONPATH": "/etc/pyhook", "PYTHONSTARTUP": "/etc/pyhook/startup.py"})
    hook = FileEntry(0o644, PY_HOOK.encode())
    files = {"/usr/local/lib/python3.11/dist-packages/zz-hook.pth": FileEntry(0o644, b"import zz_hook\n"),
             "/usr/local/lib/python3.11/dist-packages/zz_hook.py": hook,
             "/etc/pyhook/sitecustomize.py": hook, "/etc/pyhook/startup.py": hook}
    assert not any(harness_path(path, added=True) for path in files)
    verdict, _ = _graded("root-python-hooks", change=SystemChange(files=files), image=image)
    assert verdict.outcome is Outcome.FAIL and "without writing" in verdict.reason, verdict


#: Once the verifier has come and gone, stops every process of the harness's runtime, again and again.
STOP_AFTER = (f"while ! pgrep -f 'bash .harbor/tests/test.s[h]' >/dev/null; do sleep 0.05; done; "
              f"while pgrep -f 'bash .harbor/tests/test.s[h]' >/dev/null; do sleep 0.01; done; "
              f"while :; do pkill -STOP -f '^{RUNTIME}/bin/[p]ython3'; sleep 0.01; done")


def test_a_service_that_stops_the_harness_once_the_verifier_ended_fails_as_tampering():
    """The verifier's FAIL (no reward) stays a FAIL however the harness is stopped after it: reading the
    reward, undoing the bounds. The service races the harness's last few commands (a loaded machine's
    pgrep can miss them all: the plain FAIL is then right), so it gets three tries to land its stop;
    every try must be a FAIL."""
    verdicts = []
    for attempt in range(3):
        service = Process(["bash", "-c", STOP_AFTER], "/", 0, 0, PATH, exe="/usr/bin/bash")
        verdict, _ = _graded(f"root-stop-after-{attempt}", processes=[service],
                             test_sh="#!/bin/bash\nsleep 1\nexit 0\n", command_timeout_s=15)
        verdicts.append(verdict)
        assert verdict.outcome is Outcome.FAIL, verdicts
        if verdict.tampering:
            break
        assert "without writing" in verdict.reason, verdicts  # the stop missed: the verifier's own FAIL
    assert verdicts[-1].tampering and "interfered" in verdicts[-1].reason, verdicts


def test_a_service_that_stops_the_services_starter_fails_as_tampering():
    """The first service stops the program starting the others (it waited for ever: the engine's stream
    was read by a poll without a timeout); the harness sees it stopped within seconds, and keeps a deadline."""
    stopper = Process(["bash", "-c", "while :; do pkill -STOP -f \"The agent's service[s]\"; sleep 0.01; done"],
                      "/", 0, 0, PATH, exe="/usr/bin/bash")
    sleepers = [Process(["sleep", f"{1000 + i}"], "/", 0, 0, PATH, exe="/usr/bin/sleep") for i in range(12)]
    verdict, _ = _graded("root-stop-starter", processes=[stopper, *sleepers], test_sh=REWARD)
    assert verdict.outcome is Outcome.FAIL and verdict.tampering, verdict
    # seen stopped while its stream was silent, not waited for until the deadline
    assert "can never return: it is stopped (" in verdict.reason, verdict


#: A `pgrep` the end state put first on the PATH (no service of its left running): run as root by the verifier,
#: it stops the harness's command server and its runner, then answers as pgrep would.
STOPPING_PGREP = (b"#!/bin/bash\nfor p in $(ps -eo pid=,args= | grep -E 'endstate-serve[r]|nonce=[$]ENDSTATE_NONCE' "
                  b"| awk '{print $1}'); do kill -STOP $p; done\nexit 1\n")


def test_a_program_the_verifier_runs_that_stops_the_harness_fails_as_tampering_with_no_service_left():
    """A FAIL the end state turns into a wedged harness is its FAIL, decided at once (the harness sees its
    processes stopped), never an error the runner retries and leaves unscored."""
    change = SystemChange(files={"/usr/local/bin/pgrep": FileEntry(0o755, STOPPING_PGREP)})
    test_sh = "#!/bin/bash\npgrep -f greetd >/dev/null || { echo 0 > /logs/verifier/reward.txt; exit 0; }\n"
    verdict, _ = _graded("root-stopping-pgrep", change=change, test_sh=test_sh, command_timeout_s=10)
    assert verdict.outcome is Outcome.FAIL and verdict.tampering, verdict
    assert "the end state, run as root by the verifier, interfered with the harness" in verdict.reason, verdict
