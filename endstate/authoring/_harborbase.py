"""What endstate needs inside a Harbor task's container, added to a base that lacks it.

The harness runs, in every task container: `python3 -I -S` (its command server and the
seccomp wrapper, stdlib only, ctypes included), `bash` (the runner and the file tools),
`setpriv` (to become the agent), GNU `tar`, `find` and coreutils (`head`, `wc`, `cat`,
`realpath`, `stat`, `touch`, ...), a user of uid 1000 (the agent), and `/workspace`.
endstate's sandbox image has all of it; `debian:bookworm`, `ubuntu:24.04` or
`python:3.12-slim` lack some (the agent user, python3, ...).

The import probes the task's built image for each; where something is missing it adds
a layer of its own on top of the task's image, built with the network on:

- the **toolbox**: those programs copied from endstate's sandbox image into
  `/opt/endstate-toolbox`, with the libraries they load, glibc's own dynamic loader, and
  Python's standard library, each program's loader and library path rewritten (`patchelf`,
  from Debian's archive) to point there, so they run on any Linux base of the engine's
  architecture whatever its libc (or none) and never touch the task's own libraries. Its
  `bin` is put **last** on PATH: a program the task has (its python3, its bash) is always
  the one found, by the harness and the verifier alike; the toolbox only fills what is
  missing. Where the base's tar, find or coreutils are not GNU's (BusyBox), a folder of
  the toolbox with those alone (never python3 or bash) comes first instead;
- the agent user (uid 1000, `agent`) where no user holds that uid (a user that does,
  `ubuntu` on ubuntu:24.04, is kept: the harness names uids only), and `/workspace`.

Nothing of the task's image is replaced. `/opt/endstate-toolbox` is never sealed
(`/opt/endstate*` is endstate's).
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable

from endstate.sandbox import DEFAULT_IMAGE, HARNESS_PROGRAMS, TOOLBOX_BUILD

__all__ = ["NEEDED", "base_layer", "build_error", "missing", "toolbox_stage", "with_base_layer"]

TOOLBOX = "/opt/endstate-toolbox"
#: The programs the harness runs in a task container (the toolbox carries each).
NEEDED = HARNESS_PROGRAMS
_STAGE = "endstate-toolbox"
_DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

# Prints one word per thing missing; run with /bin/sh (its absence means all is missing).
_PROBE = ("for p in " + " ".join(NEEDED) + "; do command -v \"$p\" >/dev/null 2>&1 || echo \"$p\"; done; "
          "python3 -I -S -c 'import ctypes, select, json' >/dev/null 2>&1 || echo python3-stdlib; "
          "grep -q '^[^:]*:[^:]*:1000:' /etc/passwd 2>/dev/null || echo user; "
          "grep -q '^[^:]*:[^:]*:1000:' /etc/group 2>/dev/null || echo group; "
          "[ -d /workspace ] || echo workspace; "
          "{ tar --version | grep -q GNU && find --version | grep -q GNU && realpath --version | grep -q GNU; } "
          ">/dev/null 2>&1 || echo gnu")



def missing(tag: str, docker: Callable[..., subprocess.CompletedProcess]) -> list[str]:
    """What of the harness's needs the image `tag` lacks: programs of NEEDED, `python3-stdlib`,
    `user` and `group` (uid/gid 1000), `workspace`; everything when it has no /bin/sh."""
    ran = docker("run", "--rm", "--network", "none", "--user", "0", "--entrypoint", "/bin/sh", tag, "-c", _PROBE)
    if ran.returncode != 0 and not ran.stdout.strip():
        return [*NEEDED, "python3-stdlib", "user", "group", "workspace", "sh"]
    return ran.stdout.decode().split()


def _path(tag: str, docker: Callable[..., subprocess.CompletedProcess]) -> str:
    inspected = docker("image", "inspect", "--format", "{{json .Config.Env}}", tag)
    env = json.loads(inspected.stdout.decode() or "null") or []
    return next((e.split("=", 1)[1] for e in env if e.startswith("PATH=")), _DEFAULT_PATH)


def toolbox_stage(sandbox_image: str) -> str:
    """The build stage that makes the toolbox, put before the task's own first FROM."""
    gnu = [p for p in NEEDED if p not in ("bash", "python3")]
    script = TOOLBOX_BUILD % {"toolbox": TOOLBOX, "programs": " ".join(NEEDED), "gnu": " ".join(gnu)}
    return (f"# -- added by `endstate tasks import harbor`: the programs endstate runs in the task's container\n"
            f"FROM {sandbox_image} AS {_STAGE}\nUSER root\nRUN {json.dumps(['bash', '-c', script])}\n\n")


def base_layer(lacks: list[str], tag: str, docker: Callable[..., subprocess.CompletedProcess]) -> str:
    """The steps that follow the task's own: the toolbox last on PATH, the agent user, /workspace."""
    tools = any(need not in ("user", "group", "workspace") for need in lacks)
    bash = f"{TOOLBOX}/bin/bash" if tools else "/bin/sh"
    steps = ["", "# -- added by `endstate tasks import harbor`: what endstate runs in the container and the",
             "# agent user, where the task's image lacks them (" + " ".join(lacks) + "); last on PATH.", "USER root"]
    if tools:
        first = f"{TOOLBOX}/gnu:" if "gnu" in lacks else ""  # GNU tar, find, coreutils before BusyBox's
        steps += [f"COPY --from={_STAGE} {TOOLBOX} {TOOLBOX}", f"ENV PATH={first}{_path(tag, docker)}:{TOOLBOX}/bin"]
    made = []
    if "group" in lacks:
        made.append("echo agent:x:1000: >> /etc/group")
    if "user" in lacks:
        shell = "/bin/bash" if "bash" not in lacks else f"{TOOLBOX}/bin/bash"
        made.append(f"echo agent:x:1000:1000::/home/agent:{shell} >> /etc/passwd && mkdir -p /home/agent "
                    "&& chown 1000:1000 /home/agent")
    made.append("mkdir -p /workspace && chown 1000:1000 /workspace")
    steps.append("RUN " + json.dumps([bash, "-c", " && ".join(made)]))
    if "sh" in lacks:
        steps.append(f'SHELL ["{TOOLBOX}/bin/bash", "-c"]')
    return "\n".join(steps) + "\n"


def with_base_layer(dockerfile: str, lacks: list[str], tag: str,
                    docker: Callable[..., subprocess.CompletedProcess]) -> str:
    """`dockerfile` with the toolbox stage before its first FROM (when programs are missing) and
    endstate's layer after its last step."""
    layer = base_layer(lacks, tag, docker)
    if f"COPY --from={_STAGE}" not in layer:
        return dockerfile + layer
    lines = dockerfile.splitlines(keepends=True)
    first = next(i for i, line in enumerate(lines) if line.split()[:1] and line.split()[0].upper() == "FROM")
    return "".join([*lines[:first], toolbox_stage(DEFAULT_IMAGE), *lines[first:]]) + layer


def build_error(stderr: str) -> str:
    """The line of a failed build's output that says why: the last the failing step printed, and
    its exit code (the engine ends with "The command '<the step's text>' returned a non-zero code")."""
    lines = [line.strip() for line in re.sub(r"\x1b\[[0-9;]*m", "", stderr).splitlines() if line.strip()]
    code = re.search(r"returned a non-zero code: (\d+)$", lines[-1]) if lines else None
    if not code:
        return lines[-1] if lines else "(nothing)"
    start = max((i for i, line in enumerate(lines) if line.startswith("The command '")), default=len(lines) - 1)
    return (f"{lines[start - 1]} (" if start else "(") + f"a RUN step exited {code[1]})"
