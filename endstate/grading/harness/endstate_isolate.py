"""Fresh kernel state for one process of the end state (runs inside the grading sandbox, as root).

Every graded process of the end state (the probe, a test run, each held-out half) starts in
namespaces made for it alone, not in a container whose leftovers were wiped:

- a network namespace holding only a loopback, brought up: no TIME_WAIT entry, listening
  port or abstract socket name of an earlier process is in it;
- an IPC namespace: no System V object or POSIX message queue of an earlier process;
- a pid namespace, with /proc mounted afresh for it (the masks the engine put on /proc made
  again): no earlier process is visible and the pid counter starts at 1. Its first process
  (`_init`, the harness's) only reaps; when it ends, the kernel kills whatever is left;
- a mount namespace in which /tmp, /var/tmp, /dev/shm, /run/lock, /home/agent are new tmpfs
  mounts (options as the container's own), /dev/mqueue a new mqueue mount, and the folders of
  the harness where runs leave files (scratch copies, report folders) hold this run's own alone.

All of it is dropped when the last process in it ends: nothing is wiped, nothing survives.
The process that runs the end state then installs the seccomp filter of endstate_restrict.py
(the sandbox package's restrict.py), which refuses what the grading container's CAP_SYS_ADMIN
opened in the engine's own seccomp profile, so the test user, who holds no capability, may do
no more than in a container without it.

    python3 -I -S endstate_isolate.py [--own FOLDER]... -- ARGV...

runs ARGV so (the cold path; the warm server calls `unshare_all` and `start_init` itself).
Stdlib only, imported as root before anything of the end state.
"""

import ctypes
import fcntl
import os
import socket
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # run with -I: its own folder is not on sys.path
try:
    from endstate_restrict import default_signals, restrict
finally:
    sys.path.pop(0)

CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWPID, CLONE_NEWNET = 0x00020000, 0x08000000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE, MS_RELATIME = 32, 4096, 16384, 1 << 18, 1 << 21
_FLAGS = {"ro": MS_RDONLY, "nosuid": MS_NOSUID, "nodev": MS_NODEV, "noexec": MS_NOEXEC, "relatime": MS_RELATIME}
#: Where a process of the end state may leave files outside the workspace: each a new mount per process.
TEMP_PLACES = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock", "/home/agent")
#: The harness's folders of per-run subfolders: a run sees its own (--own) and no other.
RUN_FOLDERS = ("/opt/endstate/scratch", "/opt/endstate/report")

_libc = ctypes.CDLL(None, use_errno=True)


def _check(result, what):
    if result != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"{what}: {os.strerror(code)}")


def _mount(source, target, fstype, flags, data=None):
    _check(_libc.mount(source and source.encode(), target.encode(), fstype and fstype.encode(),
                       ctypes.c_ulong(flags), data and data.encode()), f"mount {target}")


def _mounts():
    """(mount point, its flags, fstype, super options) of each mount of this process, in order."""
    found = []
    with open("/proc/self/mountinfo", encoding="utf-8") as table:
        for line in table:
            left, _, right = line.partition(" - ")
            fields, tail = left.split(), right.split()
            flags = 0
            for option in fields[5].split(","):
                flags |= _FLAGS.get(option, 0)
            found.append((fields[4], flags, tail[0], tail[2] if len(tail) > 2 else ""))
    return found


def unshare_all(own=()):
    """This process into new net, IPC, mount and pid namespaces (its next child is pid 1 there),
    with its loopback up and every place named above made fresh. `own`: folders directly below
    one of those places that this run was given (its scratch copy, its report folder, the probe's
    script), carried into the fresh one; nothing else of theirs is seen. An entry `TARGET=FOLDER`
    shows FOLDER (one of the others) at TARGET too, over what TARGET holds: a visible-only test
    run sees its scratch copy, which holds no held-out file, at /workspace, which holds them."""
    before = _mounts()
    _check(_libc.unshare(CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWNET | CLONE_NEWPID), "unshare")
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    covers = [tuple(p.split("=", 1)) for p in own if "=" in p]
    # Held now, in the new mount namespace (a bind mount's source must be of the caller's).
    held = [(p.rstrip("/"), os.open(p, os.O_PATH | os.O_DIRECTORY)) for p in own if "=" not in p and os.path.isdir(p)]
    shown = [(target, os.open(folder, os.O_PATH | os.O_DIRECTORY)) for target, folder in covers]
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:  # SIOCSIFFLAGS: lo, IFF_UP | IFF_RUNNING
        fcntl.ioctl(sock.fileno(), 0x8914, struct.pack("16sh22x", b"lo", 0x1 | 0x40))
    kinds = {point: (flags, fstype, options) for point, flags, fstype, options in before}
    for place in TEMP_PLACES:
        flags, _, options = kinds.get(place, (MS_NOSUID | MS_NODEV, "tmpfs", "mode=1777"))
        if os.path.isdir(place):
            data = ",".join(o for o in options.split(",") if o not in ("rw", "ro", "inode64", "noswap"))
            _mount("tmpfs", place, "tmpfs", flags & ~MS_RDONLY, data or None)
    for folder in RUN_FOLDERS:  # root's, and nobody else may add to it
        if os.path.isdir(folder):
            _mount("tmpfs", folder, "tmpfs", MS_NOSUID | MS_NODEV, "size=64k,mode=0755")
    if os.path.isdir("/dev/mqueue"):
        _mount("mqueue", "/dev/mqueue", "mqueue", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    fresh = set(TEMP_PLACES) | set(RUN_FOLDERS)
    for path, fd in held:
        if os.path.dirname(path) in fresh:
            os.mkdir(path)
            _mount(f"/proc/self/fd/{fd}", path, None, MS_BIND | MS_REC)
        os.close(fd)
    for target, fd in shown:
        _mount(f"/proc/self/fd/{fd}", target, None, MS_BIND | MS_REC)
        os.close(fd)
    return before


def _fresh_proc(before):
    """/proc of this pid namespace, with every mask the engine put on the container's /proc."""
    _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    for point, flags, fstype, _ in before:
        if not point.startswith("/proc/") or not os.path.exists(point):
            continue
        if fstype == "proc":
            _mount(point, point, None, MS_BIND | MS_REC)
            _mount(None, point, None, MS_BIND | MS_REMOUNT | flags | MS_NOSUID | MS_NODEV | MS_NOEXEC)
        elif os.path.isdir(point):
            _mount("tmpfs", point, "tmpfs", MS_RDONLY, "size=4k")
        else:
            _mount("/dev/null", point, None, MS_BIND)


def start_init(before):
    """In the first child after `unshare_all` (pid 1 of the new namespace): mount /proc, then fork
    the process that runs the end state and return in it, seccomp filter on. Pid 1 stays behind,
    reaps every orphan, and ends with the status of that process (its end kills the rest)."""
    _fresh_proc(before)
    child = os.fork()
    if child == 0:
        restrict()
        return
    status = 1
    while True:
        try:
            pid, waited = os.wait()
        except ChildProcessError:
            break
        except InterruptedError:
            continue
        if pid == child:
            code = -os.WTERMSIG(waited) if os.WIFSIGNALED(waited) else os.WEXITSTATUS(waited)
            status = 128 - code if code < 0 else code
            break
    os._exit(status)


def main(argv):
    own = []
    while argv[:1] == ["--own"]:
        own.append(argv[1])
        argv = argv[2:]
    if argv[:1] != ["--"] or len(argv) < 2:
        print("endstate_isolate: usage: [--own FOLDER|TARGET=FOLDER]... -- ARGV...", file=sys.stderr)
        return 64
    before = unshare_all(own)
    child = os.fork()
    if child == 0:
        start_init(before)
        default_signals()  # as a shell would start it: SIGPIPE and SIGXFSZ not ignored
        os.execvp(argv[1], argv[1:])
    _, waited = os.waitpid(child, 0)
    code = -os.WTERMSIG(waited) if os.WIFSIGNALED(waited) else os.WEXITSTATUS(waited)
    return 128 - code if code < 0 else code


if __name__ == "__main__":
    try:
        status = main(sys.argv[1:])
    except OSError as exc:
        print(f"endstate_isolate: {exc}", file=sys.stderr)
        status = 71
    sys.stdout.flush()
    os._exit(status)
