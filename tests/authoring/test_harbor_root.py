"""Harbor tasks as Harbor runs them: the agent is the image's user (root unless USER), the whole
container is sealed, and the services the agent left running are up again for the verifier.

tests/data/harbor-root holds two Harbor tasks of endstate's own. `sh-greet-spool`: fix a shell
spool daemon, make a system user own its spool and leave the daemon running as that user; its
verifier (root, as in Harbor) drops a request in the spool and waits for the answer. Imported,
it checks out both ways; its reference fails when its agent is uid 1000 (no `useradd`) and when
its processes are not sealed (the verifier finds no daemon). `sh-root-tamper`: its reference
fixes the task and, as root, puts a `python3` first on PATH that writes a reward of 1: the end
state fails as tampering, never reaching the grading container's harness.
"""

from __future__ import annotations

import json
import shutil
import tomllib
from pathlib import Path

import pytest
from cli_runner import run_endstate

from endstate.authoring._harborspec import dockerfile_user
from endstate.sandbox import DEFAULT_IMAGE, FileEntry, SystemChange, build_image, harness_path, selected
from endstate.sandbox._layer import ImageEnvironment

DATA = Path(__file__).resolve().parent.parent / "data" / "harbor-root"
BASE = ["--base-image", f"debian:bookworm-slim={DEFAULT_IMAGE}"]


@pytest.mark.parametrize(("dockerfile", "user"), [
    ("FROM debian\nWORKDIR /app\n", "root"),
    ("FROM debian\nUSER app\nRUN x\nUSER root\n", "root"),
    ("FROM debian\nUSER 0:0\n", "root"),
    ("FROM debian\nUSER app:app\n", "agent"),
    ("FROM debian\nuser 1000\n", "agent"),
])
def test_the_agent_is_the_dockerfiles_last_user_root_when_none(dockerfile, user):
    assert dockerfile_user(dockerfile) == user


@pytest.mark.parametrize(("path", "added", "harness"), [
    ("/opt/endstate-toolbox/bin/bash", False, True),
    ("/opt/endstate/verifier-tmp/x", True, True),
    ("/logs/verifier/reward.txt", True, True),
    ("/etc/ld.so.preload", True, True),
    ("/usr/local/bin/python3", True, True),
    ("/usr/bin/python3.11", False, True),
    ("/bin/bash", False, True),
    ("/usr/lib/python3.11/json/__init__.py", False, True),
    ("/usr/lib/python3.11/_ctypes.py", True, True),
    ("/usr/lib/x86_64-linux-gnu/libc.so.6", False, True),
    ("/usr/lib/x86_64-linux-gnu/libhiredis.so.0.14", True, False),
    ("/usr/lib/python3/dist-packages/redis/__init__.py", True, False),
    ("/usr/local/lib/python3.12/site-packages/x.py", True, False),
    ("/usr/local/bin/greetd", True, False),
    ("/etc/redis/redis.conf", False, False),
    ("/var/log/consumer.log", False, False),
    # The harness's own `python3 -I` compiles what it imports where it may: never sealed, never a finding.
    ("/opt/endstate-toolbox/lib/python3.11/__pycache__/json.cpython-311.pyc", True, False),
    ("/usr/lib/python3.11/__pycache__/os.cpython-311.pyc", True, False),
])
def test_what_the_harness_runs_or_reads_is_named(path, added, harness):
    assert harness_path(path, added) is harness
    if not harness and "__pycache__" in path:
        assert not selected(path, ["/"], [])


#: An image whose ENV puts a folder of root's first on PATH (uv's, pipx's), names a BASH_ENV (nvm's, conda's)
#: and a library folder and preload of its own.
IMAGE = ImageEnvironment.of(["PATH=/root/.local/bin:/usr/local/bin:/usr/bin:/bin:relative", "BASH_ENV=/root/.bashrc",
                             "LD_LIBRARY_PATH=/opt/vendor/lib", "LD_PRELOAD=/opt/vendor/libfast.so", "HOME=/root"])


@pytest.mark.parametrize(("path", "added", "harness"), [
    ("/root/.local/bin/bash", True, True),  # the verifier's `bash SCRIPT` is found there first
    ("/root/.local/bin/python3", True, True),
    ("/root/.bashrc", False, True),  # run by the verifier's bash before its script's first line
    ("/root/.bashrc", True, True),
    ("/opt/vendor/lib/libtinfo.so.6", True, True),  # found before the image's own
    ("/opt/vendor/libfast.so", False, True),
    ("/root/.local/bin/greet", True, False),
    ("/root/.profile", False, False),
    ("/opt/vendor/lib/README", True, False),
])
def test_what_the_images_environment_has_the_verifiers_bash_read_first_is_named(path, added, harness):
    assert harness_path(path, added, IMAGE) is harness
    assert not harness_path(path, added)  # without that environment, nothing the harness runs


def test_a_change_without_folders_or_processes_hashes_as_before():
    files = {"/etc/app/state": FileEntry(0o644, b"ready\n")}
    plain = SystemChange(files=files, owners={"/etc/app/state": (0, 0)})
    assert plain.hash() == SystemChange(files=files, owners={"/etc/app/state": (0, 0)}, folders={}, processes=[]).hash()
    assert plain.hash() != SystemChange(files=files, owners={"/etc/app/state": (0, 0)},
                                        folders={"/etc/app": (0o755, 0, 0)}).hash()


def test_a_sealed_process_list_keeps_no_secret_of_the_harness_and_moves_the_hash():
    from endstate.sandbox._services import Process, _kept

    env = _kept({"PATH": "/usr/bin", "REDIS_PASSWORD": "x", "API_KEY": "sk-run-key-123", "ENDSTATE_NONCE": "z",
                 "HOME": "/root"}, ["sk-run-key-123"])
    assert env == {"HOME": "/root", "PATH": "/usr/bin", "REDIS_PASSWORD": "x"}
    redis = Process(["/usr/bin/redis-server 127.0.0.1:6379"], "/var/lib/redis", 100, 101, env, "/etc/init.d/redis-server")
    assert redis.line() == "P 100:101 /var/lib/redis /usr/bin/redis-server 127.0.0.1:6379 (by /etc/init.d/redis-server)"
    assert SystemChange(processes=[redis]).hash() != SystemChange().hash()


def _imported(tmp_path: Path, name: str) -> Path:
    build_image(DEFAULT_IMAGE)
    ran = run_endstate("tasks", "import", "harbor", str(DATA / name), "--out", str(tmp_path / "out"), *BASE)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    return tmp_path / "out" / name


def _reference(task: Path, out: Path) -> dict:
    ran = run_endstate("eval", "--suite", str(task.parent), "--model", "scripted/reference", "--sandbox", "docker",
                       "--out", str(out))
    assert "Traceback" not in ran.stderr, ran.stderr
    (result,) = json.loads((out / "results.json").read_text())["tasks"]
    return result


@pytest.mark.docker
def test_a_root_task_with_a_service_checks_out_and_needs_both(tmp_path):
    task = _imported(tmp_path, "sh-greet-spool")
    manifest = tomllib.loads((task / "task.toml").read_text())
    assert manifest["sandbox"]["user"] == "root"
    assert manifest["seal"] == {"paths": ["/"], "ignore": ["/var/cache", "/var/lib/apt/lists", "/root/.cache"],
                                "processes": True}
    ran = run_endstate("tasks", "check", "--suite", str(task.parent))
    assert "1 of 1 task(s) check out" in ran.stdout, ran.stdout + ran.stderr
    assert "fixture=fail[verifier], solution=pass" in ran.stdout

    result = _reference(task, tmp_path / "run")
    assert result["outcome"] == "pass", result
    diff = next((tmp_path / "run" / "diffs").glob("sh-greet-spool*")).read_text()
    assert "A /var/spool/greet/in/" in diff and "A /usr/local/bin/greetd" in diff
    assert any(line.startswith("P ") and "/usr/local/bin/greetd" in line for line in diff.splitlines()), diff

    text = (task / "task.toml").read_text()
    # Its agent reaching the network (allow_internet) changes nothing here but the card, which says so.
    (task / "task.toml").write_text(text.replace("processes = true", "processes = false")
                                    .replace('user = "root"\n', 'user = "root"\nnetwork = true\n'))
    result = _reference(task, tmp_path / "run-no-processes")
    assert result["outcome"] == "fail" and "greetd is not running as greet" in result["reason"], result
    card = json.loads((tmp_path / "run-no-processes" / "results.json").read_text())["card"]
    assert card["network_policy"] == "agent of sh-greet-spool: bridge; grading: none"

    (task / "task.toml").write_text(text.replace('user = "root"\n', ""))
    result = _reference(task, tmp_path / "run-as-agent")
    assert result["outcome"] == "fail", result


@pytest.mark.docker
def test_a_root_agent_that_plants_a_program_the_harness_runs_fails_as_tampering(tmp_path):
    task = _imported(tmp_path, "sh-root-tamper")
    result = _reference(task, tmp_path / "run")
    assert result["outcome"] == "fail", result
    assert "/usr/local/bin/python3" in result["reason"] and "tampering" in result["reason"], result
    # Without the planted program the same fix passes: the finding is the tampering, not the fix.
    shutil.rmtree(tmp_path / "out")
    source = tmp_path / "src" / "sh-root-tamper"
    shutil.copytree(DATA / "sh-root-tamper", source)
    solve = (source / "solution/solve.sh").read_text()
    (source / "solution/solve.sh").write_text(solve[:solve.index("cat > /usr/local/bin/python3")])
    ran = run_endstate("tasks", "import", "harbor", str(source), "--out", str(tmp_path / "out"), *BASE)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert _reference(tmp_path / "out" / "sh-root-tamper", tmp_path / "run-fixed")["outcome"] == "pass"


@pytest.mark.docker
def test_allow_internet_opens_the_agents_network_and_never_the_grading_containers():
    import docker

    from endstate.sandbox import SandboxLimits, open_sandbox

    engine = docker.from_env()
    limits = SandboxLimits(network=True, agent_uid=0, command_timeout_s=30)
    for grading, mode in ((False, "bridge"), (True, "none")):
        with open_sandbox("docker", limits=limits, grading=grading) as box:
            assert engine.api.inspect_container(box.container_id)["HostConfig"]["NetworkMode"] == mode


@pytest.mark.docker
def test_a_root_agent_that_kills_the_harness_only_fails_that_command():
    from endstate.sandbox import SandboxLimits, open_sandbox

    with open_sandbox("docker", limits=SandboxLimits(agent_uid=0, command_timeout_s=30)) as box:
        assert box.exec("id -u").stdout == "0\n"
        for command in ("pkill -9 -f endstate-server", "kill -9 -1"):
            killed = box.exec(command)
            assert killed.exit_code == 137 and "killed the harness's command runner" in killed.stderr, killed
            assert box.exec("echo alive").stdout == "alive\n"
        # Nor can it stop its own container, as root or as any user it can become: the first
        # process ignores whatever is sent to it from inside (an ERROR the end state could
        # provoke otherwise, a machinery fault retried until the tries ran out).
        for command in ("kill -TERM 1; kill -INT 1; kill -HUP 1; kill -9 1",
                        "setpriv --reuid=65534 --regid=65534 --clear-groups kill -9 -1",
                        "for s in TERM INT HUP QUIT USR1 PIPE KILL; do kill -$s 1; done; true"):
            box.exec(command)
            assert box.exec("echo alive").stdout == "alive\n", command
        # And it reaps what the agent orphans, as Docker's init would: no zombie is left.
        box.exec("for i in 1 2 3 4 5 6 7 8; do (sleep 0.1 &) ; done; sleep 1")
        assert box.exec("ps -eo stat= | grep -c '^Z' || true").stdout.strip() == "0"
        # Stopped rather than killed (last: what a stopped process ran is never reaped), the server never answers:
        # seen stopped (not waited for until the deadline), that command fails the same way, the next runs on a new one.
        for command in ("pkill -STOP -f endstate-serve[r]", "kill -STOP $PPID"):
            stopped = box.exec(command)
            assert stopped.exit_code == 137 and "stopped the harness's command runner" in stopped.stderr, stopped
            assert box.exec("echo alive").stdout == "alive\n"


@pytest.mark.docker
def test_what_a_root_agent_dates_is_dated_the_same_every_day():
    from endstate.sandbox import SandboxLimits, open_sandbox

    with open_sandbox("docker", limits=SandboxLimits(agent_uid=0, command_timeout_s=30)) as box:
        made = box.exec("useradd -r svc && grep '^svc:' /etc/shadow")
    assert made.exit_code == 0, made
    assert made.stdout.split(":")[2] == str(1704067200 // 86400)  # the fixed day, not today


@pytest.mark.docker
def test_the_import_names_a_service_its_oracle_leaves_that_grading_cannot_start_again():
    from endstate.authoring._harbor import _files

    build_image(DEFAULT_IMAGE)
    unstarted: list[str] = []
    solve = ("mkdir -p /app && echo fixed > /app/state\n"
             "nohup perl -e '$0 = \"mystery\"; sleep 60' >/dev/null 2>&1 &\n"
             "nohup python3 -c 'import time; time.sleep(60)' >/dev/null 2>&1 &\nexit 0\n")
    files = _files(DEFAULT_IMAGE, "/app", solve, [], False, unstarted)
    assert files["state"] == (b"fixed\n", False)
    assert len(unstarted) == 1 and unstarted[0].startswith("mystery: it rewrote its command line"), unstarted
