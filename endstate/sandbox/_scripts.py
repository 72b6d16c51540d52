"""What runs inside a Docker sandbox: the root shell every command runs in (the *runner*),
the file tools' scripts, and the commands that pack and unpack archives there.

A command runs in a small root shell, the *runner*, which:

- starts the command as user `agent` (uid 1000) through `setpriv`;
- copies at most `output_cap_bytes` of each stream and counts the rest
  (`head -c`, then `wc -c`), so a flood never crosses the socket;
- arms a watchdog that, at the deadline, sends SIGKILL to every process the
  agent user owns (`kill -1` with the agent's uid as its effective uid only, so
  that none of them may signal it back). It is forked before the command starts
  and only `exec`s afterwards, so it still fires when a fork bomb has used up
  the pids limit;
- limits the size of any file the command writes (`ulimit -f`), and watches
  the workspace's size while it runs (`du`, twice a second): past the ceiling
  every process of the agent user is killed and `exec` raises WorkspaceFull;
- notes whether the container's memory cgroup killed a process meanwhile (OOM);
- ends both streams with a trailer carrying a per-command nonce, which the
  agent cannot read (it travels in the root shell's environment), so the
  trailer cannot be forged from inside. The trailer also carries the
  workspace's size, measured after the command, at no extra round trip.

The file tools run as the agent user too (`read_file`, `write_file`, `edit_file`): they
see what the agent may see, and refuse any path that resolves out of the workspace. The
server does the plain case itself in a child that has become the agent user, and hands
every other case to the tool's shell script, which words the errors.
"""

from __future__ import annotations

from importlib import resources
from typing import NamedTuple

from endstate.sandbox._base import SANDBOX_ENV, WORKDIR
from endstate.sandbox._runtime import HARNESS_ENV, RUNTIME_PATH, runtime_python
from endstate.sandbox._tree import FROZEN_ATIME

__all__ = ["AGENT_UID", "RESTRICT", "ROOT_AGENT_CAPS", "ROOT_AGENT_ENV", "RunnerStatus", "as_agent", "first_process", "parse_status"]

AGENT_UID = 1000
#: A root agent's capabilities (a Harbor task's): Docker's defaults less raw sockets, devices and KILL
#: (the container's first process ignores what it is sent from inside). The runner bounds root's
#: commands to them.
ROOT_AGENT_CAPS = ["CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "NET_BIND_SERVICE", "SETFCAP", "SETPCAP", "SYS_CHROOT",
                   "AUDIT_WRITE"]
#: A root agent's environment: the sandbox's, and a fixed day (2024-01-01) for what writes "today"
#: into the files a root agent changes (useradd's /etc/shadow, archives, builds), so that a run's end
#: state is the same from one day to the next (not 0: shadow reads that as "change the password").
ROOT_AGENT_ENV = {**SANDBOX_ENV, "SOURCE_DATE_EPOCH": "1704067200"}
#: How long past a command's own deadline we wait for the runner before deciding
#: the sandbox itself is broken.
_BACKSTOP_S = 30.0

# $1 = output cap in bytes, $2 = milliseconds allowed, $3 = largest file in 1 KiB blocks,
# $4 = workspace ceiling in bytes, $5 = the command.
# fd 5 is the exec's real stderr; the runner's own chatter goes to /dev/null.
#
# Nothing here waits on a background process with `wait`, and no signal or trap
# ends anything: the runner waits on its command in the foreground, then reads a pipe
# (fds 8, 9) to its end of file. The writers of that pipe are the two output copiers,
# the watchdog and the disk watch; the copiers also hold the pipe (fds 6, 7) whose end
# of file tells both watchers to stop, which comes once no process writes the command's
# output any more, the runner included (it holds fds 3 and 4 until its command has
# ended). So the status line is printed only after both trailers, and the watchdog fires
# both on a command that closes its output and runs on, and on a process of the agent's
# that holds the output open past the command. The watchdog never forks (a fork bomb may
# have used up the pids limit): it sleeps in `read -t` and, at the deadline, `exec`s into
# the killer below.
#: The words the runner's watchers leave in its status line when they fired (runner.sh has
#: them as @WATCHDOG_FIRED@ and @DISK_WATCH_FIRED@, filled in from here).
_WATCHDOG_FIRED = 99
_DISK_WATCH_FIRED = 98


def _script(name: str) -> str:
    """One of the shell scripts in scripts/ (package data), its @NAME@ constants filled in."""
    text = (resources.files("endstate.sandbox") / "scripts" / name).read_text(encoding="utf-8")
    for key, value in (("WATCHDOG_FIRED", _WATCHDOG_FIRED), ("DISK_WATCH_FIRED", _DISK_WATCH_FIRED),
                       ("ATIME", FROZEN_ATIME)):
        text = text.replace(f"@{key}@", str(value))
    return text


class RunnerStatus(NamedTuple):
    """The runner's trailers, read: what each stream dropped past the cap, and the status line."""

    out_dropped: int
    err_dropped: int
    exit_code: int
    watchdog_fired: bool
    disk_watch_fired: bool
    workspace_bytes: int
    oom_kills: int


def parse_status(out_tail: bytes, err_tail: bytes) -> RunnerStatus | None:
    """What follows the nonce on each stream, or None when the runner did not end as it does.

    stdout: ` <dropped>\n`; stderr: ` <dropped>\n<nonce> status <code> <watchdog> <disk watch>
    <workspace bytes> <oom kills>\n` (the last line of runner.sh)."""
    out, words = out_tail.split(), err_tail.split()
    if len(out) != 1 or len(words) != 8 or words[2] != b"status":
        return None
    try:
        numbers = [int(word) for word in (out[0], words[0], *words[3:])]
    except ValueError:
        return None
    out_dropped, err_dropped, code, watchdog, disk_watch, used, oom = numbers
    return RunnerStatus(out_dropped, err_dropped, code, watchdog == _WATCHDOG_FIRED, disk_watch == _DISK_WATCH_FIRED,
                        used, oom)


_RUNNER = _script("runner.sh")
#: The seccomp filter a grading container's commands run under (see restrict.py): a Python program
#: for `python3 -I -S -c RESTRICT ARGV...`, which installs it and runs ARGV.
RESTRICT = _script("restrict.py")
_LIFELINE = _script("lifeline.py")


def first_process(agent_uid: int, *, runtime: bool = False) -> tuple[list[str], bool]:
    """The container's first process and whether Docker's init runs above it. It reads the
    stream its maker holds until end of file. Under an agent user it is root's `cat` (the agent
    cannot signal it); under a root agent, who can become any user, it is pid 1 itself, which
    ignores every signal sent from inside and reaps orphans as Docker's init would. `runtime`:
    from the harness's runtime (a grading container's), not the image."""
    # The runtime's, in the harness's own environment (see _runtime), not the container's.
    whole = [f"{RUNTIME_PATH}/env", "-i", *(f"{k}={v}" for k, v in HARNESS_ENV.items())] if runtime else []
    if agent_uid:
        return [*whole, f"{RUNTIME_PATH}/cat" if runtime else "cat"], True
    return [*whole, *(runtime_python() if runtime else ["python3", "-I", "-S"]), "-c", _LIFELINE], False


_MIB = 1024 * 1024

# Runs as the agent user. $1 = the workspace path asked for. Exit 3: it resolves out
# of the workspace; 4: it is a folder; 2: there is no such file. Otherwise cat's own.
#: Ends a file tool's output, so output the engine lost is told from an empty file.
_EOF = b"[endstate-eof-5c1e]"

_READ = _script("read_file.sh")

# Runs as the agent user, the new bytes on stdin. $1 = the workspace path, $2 = the
# fixed mtime. Writes through a link that stays inside the workspace; a file that was
# executable stays so; a new file is 0644.
_WRITE = _script("write_file.sh")


#: How the in-sandbox server runs a file tool's script as the agent user, and with what environment.
_AS_AGENT = ["setpriv", f"--reuid={AGENT_UID}", f"--regid={AGENT_UID}", "--init-groups"]


def as_agent(uid: int) -> list[str]:
    """`_AS_AGENT` for an agent of uid `uid` (1000, or 0 for a root agent)."""
    return ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--init-groups"]
_AGENT_ENV = {**SANDBOX_ENV, "ENDSTATE_EOF": _EOF.decode()}


# Runs as root. $1/$2 = the folder, $3 = most bytes of archive to send. Exit 44: no such folder.
_TAR_FOLDER = _script("tar_folder.sh")
#: Unpacks an archive (standard input) into the workspace as the agent user: what it writes
#: is the agent's, modes as archived (`put_tree`).
_UNTAR_AS_AGENT = [*_AS_AGENT, "tar", "--extract", "--preserve-permissions", "--no-same-owner",
                   f"--directory={WORKDIR}", "--file=-"]

# Runs as root in a grading container (which grants root CHOWN and FOWNER), the archive
# on stdin; $@ = the folders the archive makes root-owned, "--", every folder it writes a
# tree into, "--", the folders above those. Root may not write into a folder it does not
# own, and tar gives a folder its owner only after filling it: those folders are made root's
# first. Afterwards what it wrote (what changed in those trees since just before), the
# folders above, and what the container holds that a process may read and that is not the
# image's alone (its root, /dev, the folders the engine puts its own files in: /etc, /sbin
# for docker-init; the tmpfs roots) get the access time FROZEN_ATIME: GNU tar sets access
# times to now, whatever the archive says. (What is the image's alone keeps its times: a
# read changes nothing in a lower layer.)
_UNTAR_AS_ROOT = _script("untar_as_root.sh")


#: Archive bytes allowed past a folder's content ceiling (headers and padding).
_TAR_SLACK = 4 * _MIB
