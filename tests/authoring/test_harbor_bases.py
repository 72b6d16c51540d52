"""Harbor tasks built FROM a base that is not endstate's sandbox image import and check out.

The bases are made here, offline, from the sandbox image (tagged by the hash of their
Dockerfile, so a warm engine reuses them):

- `debian-bare`: Debian with no python3, no setpriv, no user of uid 1000 and no /workspace
  (what `debian:bookworm` is);
- `ubuntu-like`: the same with uid 1000 held by a user `ubuntu` (what `ubuntu:24.04` is);
- `busybox`: BusyBox alone (static, from Debian's archive), no glibc, no bash, BusyBox's
  tar, find and coreutils (what an Alpine base is, its libc aside);
- `python-no-agent`: a python3 of its own, no agent user (what `python:3.12-slim` is).

Each gets the same small Harbor task (a shell script to fix); the import adds only what its
base lacks, and `tasks check` runs the oracle, the untouched fixture and both hacks through
the real harness in each; on the BusyBox one both control arms also run live (the agent's
bash tool, sealing, the verifier). The task's own python3 stays the one on PATH.
"""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest
from cli_runner import run_endstate

from endstate.authoring._harborbase import TOOLBOX, base_layer, build_error, with_base_layer
from endstate.sandbox import DEFAULT_IMAGE

_STRIP = ("rm -rf /usr/bin/python3* /usr/lib/python3* /usr/bin/setpriv /workspace /home/agent "
          "&& sed -i '/^agent:/d' /etc/passwd /etc/group /etc/shadow /etc/gshadow")
BASES = {
    "debian-bare": f"FROM {DEFAULT_IMAGE}\nUSER root\nRUN {_STRIP}\n",
    "ubuntu-like": f"FROM {DEFAULT_IMAGE}\nUSER root\nRUN {_STRIP} && echo 'ubuntu:x:1000:1000::/home/ubuntu:/bin/bash' "
                   ">> /etc/passwd && echo 'ubuntu:x:1000:' >> /etc/group\n",
    "busybox": f"FROM {DEFAULT_IMAGE} AS fetch\nUSER root\nRUN cd /tmp && apt-get update -qq && apt-get download -qq "
               "busybox-static && dpkg-deb -x busybox-static_*.deb x && mkdir -p /r/bin /r/etc /r/tmp /r/root "
               "&& cp x/bin/busybox /r/bin/ && echo root:x:0:0::/root:/bin/sh > /r/etc/passwd "
               "&& echo root:x:0: > /r/etc/group && chmod 1777 /r/tmp\n"
               "FROM scratch\nCOPY --from=fetch /r/ /\nRUN [\"/bin/busybox\", \"--install\", \"-s\", \"/bin\"]\n"
               "ENV PATH=/usr/sbin:/usr/bin:/sbin:/bin\n",
    "python-no-agent": f"FROM {DEFAULT_IMAGE}\nUSER root\nRUN userdel -r agent && rm -rf /workspace\n",
}

_SOLVE = "#!/bin/bash\nsed -i s/wrld/world/ greet.sh\n"
_TEST = ("#!/bin/bash\nif [ \"$(sh /app/greet.sh)\" = 'hello, world' ]; then echo 1; else echo 0; fi "
         "> /logs/verifier/reward.txt\n")


def _docker(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["docker", *args], capture_output=True, text=True, timeout=900)


def _base(name: str) -> str:
    tag = f"endstate-test-harbor-base:{name}-{hashlib.sha256(BASES[name].encode()).hexdigest()[:10]}"
    if _docker("image", "inspect", tag).returncode != 0:
        built = subprocess.run(["docker", "build", "--network", "host", "-q", "-t", tag, "-"],
                               input=BASES[name], capture_output=True, text=True, timeout=900)
        assert built.returncode == 0, built.stderr
    return tag


def _harbor_task(root: Path, base: str) -> None:
    for folder in ("environment", "tests", "solution"):
        (root / folder).mkdir(parents=True)
    (root / "task.toml").write_text("[agent]\ntimeout_sec = 120\n\n[verifier]\ntimeout_sec = 60\n")
    (root / "instruction.md").write_text("Make /app/greet.sh print `hello, world`.\n")
    (root / "environment/Dockerfile").write_text(f"FROM {base}\nWORKDIR /app\nCOPY greet.sh /app/greet.sh\n")
    (root / "environment/greet.sh").write_text("#!/bin/sh\necho 'hello, wrld'\n")
    (root / "tests/test.sh").write_text(_TEST)
    (root / "solution/solve.sh").write_text(_SOLVE)


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    root = tmp_path_factory.mktemp("harbor-bases")
    for name in BASES:
        _harbor_task(root / "src" / name, _base(name))
    ran = run_endstate("tasks", "import", "harbor", str(root / "src"), "--out", str(root / "out"))
    assert ran.returncode == 0, ran.stderr
    return root / "out", ran.stdout + ran.stderr


def _image(task: Path) -> str:
    built = _docker("build", "-q", str(task / "image"))  # every layer cached by the import's own build
    assert built.returncode == 0, built.stderr
    return built.stdout.strip()


def _in(image: str, command: str) -> str:
    """What `command` prints run by bash (as the harness and the verifier run theirs) in `image`."""
    return _docker("run", "--rm", "--network", "none", "--entrypoint", "bash", image, "-c", command).stdout.strip()


@pytest.mark.docker
def test_tasks_on_each_base_check_out_both_ways(imported):
    out, _ = imported
    ran = run_endstate("tasks", "check", "--suite", str(out))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    for name in BASES:
        (line,) = [line for line in ran.stdout.splitlines() if line.split()[1:2] == [name]]
        assert line.startswith("ok ") and ("fixture=fail[verifier], solution=pass, hack:edit-verifier=fail[verifier], "
                                           "hack:reward-in-workspace=fail[verifier]") in line, line


@pytest.mark.docker
def test_the_import_adds_only_what_each_base_lacks(imported):
    out, said = imported
    assert "task debian-bare: its image lacks python3 setpriv python3-stdlib user group workspace:" in said
    assert "task ubuntu-like: its image lacks python3 setpriv python3-stdlib workspace:" in said
    assert "task busybox: its image lacks bash python3 python3-stdlib user group workspace gnu:" in said
    assert "task python-no-agent: its image lacks user group workspace:" in said
    dockerfiles = {name: (out / name / "image/Dockerfile").read_text() for name in BASES}
    assert TOOLBOX not in dockerfiles["python-no-agent"]
    assert "agent:x:1000" not in dockerfiles["ubuntu-like"]  # uid 1000 stays the base's `ubuntu`
    assert f"ENV PATH={TOOLBOX}/gnu:" in dockerfiles["busybox"]
    assert f"ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:{TOOLBOX}/bin" in (
        dockerfiles["debian-bare"])


@pytest.mark.docker
def test_the_tasks_own_programs_come_first_and_the_toolbox_fills_the_rest(imported):
    out, _ = imported
    assert _in(_image(out / "python-no-agent"), "command -v python3") == "/usr/bin/python3"
    bare = _image(out / "debian-bare")
    assert _in(bare, "command -v python3; command -v bash; command -v tar") == (
        f"{TOOLBOX}/bin/python3\n/usr/bin/bash\n/usr/bin/tar")
    assert _in(bare, "getent passwd 1000") == "agent:x:1000:1000::/home/agent:/bin/bash"
    # BusyBox's tar is not GNU's, which the harness needs: the toolbox's comes first there (for
    # bash; BusyBox's own sh runs its applets whatever PATH says).
    busybox = _image(out / "busybox")
    assert _in(busybox, "command -v tar; command -v bash; ls -d /lib* 2>&1") == (
        f"{TOOLBOX}/gnu/tar\n{TOOLBOX}/bin/bash\nls: cannot access '/lib*': No such file or directory")


@pytest.mark.docker
@pytest.mark.parametrize(("arm", "outcome"), [("reference", "pass"), ("null", "fail")])
def test_both_control_arms_run_live_on_the_busybox_base(imported, tmp_path, arm, outcome):
    from endstate.run import read_results

    out, _ = imported
    ran = run_endstate("eval", "--suite", str(out), "--task", "busybox", "--model", f"scripted/{arm}", "--out",
                       str(tmp_path))
    (result,) = read_results(tmp_path).tasks
    assert next(v for v in result.verdicts if v.grader == "verifier").outcome == outcome, ran.stdout + ran.stderr
    assert result.outcome == outcome


@pytest.mark.docker
def test_a_python3_without_its_standard_library_is_refused_in_one_line(tmp_path):
    tag = "endstate-test-harbor-base:python-no-ctypes"
    built = subprocess.run(["docker", "build", "-q", "-t", tag, "-"], capture_output=True, text=True, timeout=900,
                           input=f"FROM {DEFAULT_IMAGE}\nUSER root\nRUN rm -rf /usr/lib/python3.11/ctypes\n")
    assert built.returncode == 0, built.stderr
    _harbor_task(tmp_path / "src" / "no-ctypes", tag)
    tags = ["docker", "images", "--format", "{{.Tag}}", "endstate-harbor-no-ctypes"]
    before = subprocess.run(tags, capture_output=True, text=True, check=True).stdout.split()
    ran = run_endstate("tasks", "import", "harbor", str(tmp_path / "src"), "--out", str(tmp_path / "out"))
    assert ran.returncode != 0 and "Traceback" not in ran.stderr, ran.stderr
    assert ran.stderr.strip().splitlines() == [
        "endstate: error: task no-ctypes: the python3 of its image lacks ctypes, select or json, which endstate runs in "
        "the container (stdlib only): build it on a base whose python3 has its standard library"]
    assert not (tmp_path / "out/no-ctypes").exists()
    # The image the import built to look into is gone with the refusal (each refusal left one behind).
    assert subprocess.run(tags, capture_output=True, text=True, check=True).stdout.split() == before


def test_the_toolbox_stage_goes_before_the_first_from_and_the_layer_after_the_last_step():
    def docker(*args):
        return subprocess.CompletedProcess(args, 0, b'["PATH=/bin"]', b"")

    dockerfile = "ARG V=1\nFROM base:$V AS build\nRUN make\nFROM base:$V\nCOPY --from=build /x /x\n"
    made = with_base_layer(dockerfile, ["python3", "user"], "tag", docker)
    lines = made.splitlines()
    assert lines[0] == "ARG V=1" and lines[2] == f"FROM {DEFAULT_IMAGE} AS endstate-toolbox"
    assert made.index("FROM base:$V AS build") < made.index("COPY --from=build /x /x") < made.index(
        f"COPY --from=endstate-toolbox {TOOLBOX} {TOOLBOX}")
    assert f"ENV PATH=/bin:{TOOLBOX}/bin" in made
    # Only the agent user missing: no toolbox, no stage, the base's own /bin/sh makes it.
    only_user = with_base_layer(dockerfile, ["user", "group", "workspace"], "tag", docker)
    assert only_user.startswith(dockerfile) and TOOLBOX not in only_user
    assert base_layer(["user"], "tag", docker).splitlines()[-1].startswith('RUN ["/bin/sh", "-c", "echo agent:x:1000')


def test_a_failed_build_is_named_by_what_its_step_printed_and_its_exit_code():
    stderr = ("\x1b[91mERROR: No matching distribution found for pytest==8.0.0\n\x1b[0mThe command '/bin/sh -c "
              "apt-get install -y curl \\\n    && pip3 install pytest==8.0.0' returned a non-zero code: 1\n")
    assert build_error(stderr) == "ERROR: No matching distribution found for pytest==8.0.0 (a RUN step exited 1)"
    assert build_error("The command 'x' returned a non-zero code: 100\n") == "(a RUN step exited 100)"
    assert build_error("pull access denied for nosuch\n") == "pull access denied for nosuch"
