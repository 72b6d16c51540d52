"""The agent's services: listed in its container, started again in the grading container.

Run as root by the harness, stdlib only, Python 3.6 syntax (a task's base may be old):

    python3 -I -S -c "$(cat services.py)" list             prints the agent's services as JSON
    python3 -I -S -c "$(cat services.py)" start SPECS STAGED [BYTES]  starts each, walled (`bound` first), says
                                                                     whether its exec worked
    python3 -I -S -c "$(cat services.py)" bound BYTES      bounds what the end state writes to the disk
    python3 -I -S -c "$(cat services.py)" unbound          undoes it

What `list` keeps of each (see endstate/sandbox/_services.py): its executable (/proc/PID/exe,
resolved), its argv (/proc/PID/cmdline), its environment, working folder, uid, gid and groups.
A process that rewrote its command line (a title: nginx's `nginx: master process nginx`) has
no argv left in the kernel: it is started by the /etc/init.d script that names its executable,
else from the title's words that begin at one naming its executable, else it cannot be
started again and says why (`unrestartable`).
"""

import json
import os
import sys
import time


def _as_user(uid, gid, read):
    """`read()` in a child that became `uid`:`gid` first (root lacks SYS_PTRACE in the agent's
    container: a process's cwd, exe and environment are readable to its own user)."""
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:
        try:
            os.close(read_end)
            os.setgroups([])
            os.setresgid(gid, gid, gid)
            os.setresuid(uid, uid, uid)
            os.write(write_end, json.dumps(read()).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        said = pipe.read()
    os.waitpid(child, 0)
    return json.loads(said.decode())


def _names(word, exe, cwd, env):
    """Whether `word` (an argv[0]) is the executable `exe`, as the process's own exec would find it."""
    if not word:
        return False
    if "/" in word:
        return os.path.realpath(os.path.join(cwd, word)) == exe
    for folder in env.get("PATH", "/usr/local/bin:/usr/bin:/bin").split(":"):
        path = os.path.join(cwd, folder or ".", word)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return os.path.realpath(path) == exe
    return False


def _init_script(exe):
    """The /etc/init.d script whose DAEMON= names `exe` (or a path that resolves to it), or ""."""
    if not os.path.isdir("/etc/init.d"):
        return ""
    for script in sorted(os.listdir("/etc/init.d")):
        try:
            with open("/etc/init.d/" + script, "rb") as f:
                text = f.read().decode("utf-8", "surrogateescape")
        except OSError:
            continue
        for line in text.splitlines():
            line = line.strip()
            if line.startswith("DAEMON="):
                named = line[len("DAEMON="):].strip().strip("\"'")
                if named.startswith("/") and os.path.realpath(named) == exe:
                    return "/etc/init.d/" + script
    return ""


def _plan(pid, argv, uid, gid):
    """How to start the process again: {exe, argv, cwd, env, init, unrestartable}."""
    base = "/proc/%d/" % pid

    def read():
        with open(base + "environ", "rb") as f:
            pairs = [e.split(b"=", 1) for e in f.read().split(b"\0") if b"=" in e]
        env = {k.decode("utf-8", "surrogateescape"): v.decode("utf-8", "surrogateescape") for k, v in pairs}
        cwd = os.readlink(base + "cwd")
        exe = os.readlink(base + "exe")
        said = {"cwd": cwd, "env": env, "exe": exe, "argv": argv, "init": "", "unrestartable": ""}
        if exe.endswith(" (deleted)"):
            said["unrestartable"] = "its program %s was deleted" % exe[:-len(" (deleted)")]
        elif not _names(argv[0], exe, cwd, env):  # a title: the kernel kept no argv
            words = " ".join(argv).split()
            starts = [i for i, w in enumerate(words) if _names(w, exe, cwd, env)
                      or os.path.basename(w) == os.path.basename(exe)]
            said["init"] = _init_script(exe)
            if said["init"]:
                said["argv"] = [said["init"], "start"]
            elif starts:
                said["argv"] = words[starts[0]:]
            else:
                said["unrestartable"] = ("it rewrote its command line to %r, which does not name its program %s, "
                                         "and no /etc/init.d script names it" % (" ".join(argv)[:80], exe))
        return said

    return _as_user(uid, gid, read)


def _groups(base):
    with open(base + "status", "rb") as f:
        for line in f.read().decode("utf-8", "replace").splitlines():
            if line.startswith("Groups:"):
                return sorted(int(g) for g in line.split()[1:])
    return []


def _marked():
    """{pid: (state, command line)} of the processes the agent started, as the kernel has them now."""
    seen = {}
    for name in os.listdir("/proc"):
        try:
            with open("/proc/" + name + "/oom_score_adj", "rb") as f:
                if f.read().strip() != b"1000":
                    continue
            with open("/proc/" + name + "/stat", "rb") as f:
                state = f.read().rsplit(b") ", 1)[1][:1]
            with open("/proc/" + name + "/cmdline", "rb") as f:
                seen[name] = (state, f.read())
        except (OSError, IndexError):
            continue
    return seen


def _settled(window=0.2, most=3.0):
    """Wait until what the agent started stays as it is for `window` seconds (at most `most`): a
    process just forked has yet to exec its program, and a daemon sets its title once it runs."""
    last, since, start = _marked(), time.monotonic(), time.monotonic()
    while time.monotonic() - since < window and time.monotonic() - start < most:
        time.sleep(0.05)
        now = _marked()
        if now != last:
            last, since = now, time.monotonic()


def list_services():
    _settled()
    found = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        base = "/proc/" + name + "/"
        try:
            with open(base + "oom_score_adj", "rb") as f:  # what the agent started: see _services.py
                if f.read().strip() != b"1000":
                    continue
            with open(base + "stat", "rb") as f:
                rest = f.read().rsplit(b") ", 1)[1].split()
            with open(base + "cmdline", "rb") as f:
                argv = f.read().split(b"\0")[:-1]
            st = os.stat(base)
            if rest[0] == b"Z" or not argv:
                continue
            argv = [a.decode("utf-8", "surrogateescape") for a in argv]
            while len(argv) > 1 and not argv[-1]:  # a rewritten command line is padded with NULs
                argv.pop()
            process = {"parent": int(rest[1]), "uid": st.st_uid, "gid": st.st_gid, "groups": _groups(base)}
            process.update(_plan(int(name), argv, st.st_uid, st.st_gid))
            found[int(name)] = process
        except (OSError, ValueError, IndexError):
            continue
    print(json.dumps([p for p in found.values() if p["parent"] not in found]))


#: Hidden from a service behind an empty read-only folder: the reward and the harness (and the folders the
#: held-out files are staged in, which the harness names: `start`).
_HIDDEN = ("/logs", "/opt/endstate")
#: Where a daemon keeps its state, logs and pid files: writable, as they were in its own container.
_WRITABLE = ("/var", "/run", "/srv", "/home", "/root", "/workspace", "/tmp", "/dev/shm")
#: Mounts the kernel's and the engine's own, left as they are.
_KERNEL = ("/proc", "/sys", "/dev")
#: CHOWN DAC_OVERRIDE FOWNER FSETID SETGID SETUID NET_BIND_SERVICE: none to mount or trace.
_KEPT_CAPS = (0, 1, 3, 4, 6, 7, 10)
_RDONLY, _NOSUID, _NODEV, _NOEXEC, _REMOUNT, _BIND, _REC, _PRIVATE = 1, 2, 4, 8, 32, 4096, 16384, 1 << 18
_FLAGS = {"nosuid": _NOSUID, "nodev": _NODEV, "noexec": _NOEXEC, "noatime": 1024, "nodiratime": 2048,
          "relatime": 1 << 21}


def _under(path, folders):
    return any(path == f or path.startswith(f.rstrip("/") + "/") for f in folders)


def _mounts():
    """(mount point, its flags) of each mount this process sees, outermost first."""
    found = []
    with open("/proc/self/mountinfo", "rb") as f:
        for line in f.read().decode("utf-8", "surrogateescape").splitlines():
            fields = line.split()
            point = fields[4].replace("\\040", " ")
            flags = sum(_FLAGS.get(option, 0) for option in fields[5].split(","))
            found.append((point, flags))
    return sorted(found, key=lambda m: m[0].count("/"))


def _walled(libc, check, staged):
    """This process in a mount namespace of its own: the reward, the staged tests and the harness
    hidden, every mount read-only but where a daemon writes. Each writable folder is bound onto
    itself recursively first, so no later bind can drop a mount that hides something below it (a
    bind without MS_REC of /workspace would show the staged tests again, writable)."""
    check(libc.unshare(0x00020000), "unshare")
    check(libc.mount(None, b"/", None, _REC | _PRIVATE, None), "private")
    for kept in _WRITABLE:
        if os.path.isdir(kept) and not os.path.islink(kept):
            check(libc.mount(kept.encode(), kept.encode(), None, _BIND | _REC, None), kept)
    for hidden in _HIDDEN + tuple(staged):
        if os.path.isdir(hidden) and not os.path.islink(hidden):
            check(libc.mount(b"tmpfs", hidden.encode(), b"tmpfs", _RDONLY | _NOSUID | _NODEV | _NOEXEC,
                             b"size=4k,mode=0555"), hidden)
    for point, flags in _mounts():
        if _under(point, _KERNEL + _HIDDEN + tuple(staged) + _WRITABLE):  # below a hidden folder: out of sight already
            continue
        # Read-only, its other flags kept (a remount of a bind sets them all).
        check(libc.mount(None, point.encode(), None, _REMOUNT | _BIND | _RDONLY | flags, None), "read-only " + point)


#: Where the end state's writes to the container's own filesystem land while its verifier runs: one tmpfs
#: of a fixed size, the upper folders of overlays over its folders, hidden from the services (see _HIDDEN).
_UPPER = "/opt/endstate/services"
#: The overlays' source name, by which `unbound` finds them again.
_SOURCE = b"endstate-bounded-root"


def _mount_points():
    return {point for point, _ in _mounts()}


def _overlaid(folder, mounts):
    """The folders below `folder` an overlay covers: each but the kernel's, a mount itself (already
    bounded or the engine's), the harness's (/opt/endstate*) and /opt, which holds those (each other
    folder of /opt is covered). What is mounted below one (/etc's hosts and resolv.conf,
    /var/tmp, /home/agent, /run/lock) is bound again on top: a verifier may make a folder right in
    /var, or a user with a home, as in its own container."""
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if os.path.islink(path) or not os.path.isdir(path) or path in mounts or _under(path, _KERNEL) \
                or path.startswith("/opt/endstate"):
            continue
        if path == "/opt":
            for found in _overlaid(path, mounts):
                yield found
        else:
            yield path


def _outermost(mounts):
    """Of `mounts`, each not below another: bound again recursively, they bring what is below them."""
    return [m for m in mounts if not any(m.startswith(other + "/") for other in mounts)]


def bound_root(libc, check, size):
    """Every write to the container's own filesystem (the host's disk) bounded, together, to `size`
    bytes: each folder `_overlaid` gives becomes an overlay whose writes land in one tmpfs, and /
    itself is read-only (what is left there: new entries right in / or /opt, which fail: EROFS)."""
    mounts = _mount_points()
    folders = list(_overlaid("/", mounts))
    os.makedirs(_UPPER, mode=0o700, exist_ok=True)
    check(libc.mount(b"tmpfs", _UPPER.encode(), b"tmpfs", _NOSUID | _NODEV, ("size=%d,mode=0700" % size).encode()),
          _UPPER)
    for i, folder in enumerate(folders):
        upper, work = "%s/%d/upper" % (_UPPER, i), "%s/%d/work" % (_UPPER, i)
        os.makedirs(upper)
        os.makedirs(work)
        files = [(m, os.open(m, os.O_PATH)) for m in _outermost(sorted(m for m in mounts if m.startswith(folder + "/")))]
        options = "lowerdir=%s,upperdir=%s,workdir=%s" % (folder, upper, work)
        check(libc.mount(_SOURCE, folder.encode(), b"overlay", 0, options.encode()), folder)
        for mounted, fd in files:  # what was mounted there, over the overlay's copies of it
            check(libc.mount(("/proc/self/fd/%d" % fd).encode(), mounted.encode(), None, _BIND | _REC, None), mounted)
            os.close(fd)
    flags = dict(_mounts())["/"]
    check(libc.mount(None, b"/", None, _REMOUNT | _BIND | _RDONLY | (flags & ~_RDONLY), None), "read-only /")


def unbound_root(libc, check):
    """`bound_root` undone: / writable again, the overlays detached (what was written there is dropped;
    a service keeps its own view until it ends), their tmpfs with them."""
    check(libc.mount(None, b"/", None, _REMOUNT | _BIND | (dict(_mounts())["/"] & ~_RDONLY), None), "writable /")
    with open("/proc/self/mountinfo", "rb") as f:
        lines = f.read().decode("utf-8", "surrogateescape").splitlines()
    ours = [line.split()[4].replace("\\040", " ") for line in lines
            if line.split(" - ", 1)[-1].split()[1:2] == [_SOURCE.decode()]]
    for point in reversed(ours + [_UPPER]):
        libc.umount2(point.encode(), 2)  # MNT_DETACH; one already gone is no matter


def start_service(libc, check, spec, staged):
    """Fork the service off (setsid, walled, its user, its folder, its environment) and exec it by its
    executable's path; "" once the exec happened, else why it did not."""
    read_end, write_end = os.pipe()  # close-on-exec: EOF once the exec worked
    child = os.fork()
    if child:
        os.close(write_end)
        with os.fdopen(read_end, "rb") as pipe:
            said = pipe.read().decode("utf-8", "replace")
        return said
    os.close(read_end)
    try:
        os.setsid()
        if staged is not None:  # None: the wall's mutant (endstate mutate)
            _walled(libc, check, staged)
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write("1000")
        for cap in range(64):
            if cap not in _KEPT_CAPS:
                libc.prctl(24, cap, 0, 0, 0)  # PR_CAPBSET_DROP; past the last capability it fails, as it may
        uid, gid, groups = spec["uid"], spec["gid"], spec["groups"]
        exe = spec["exe"]
        if spec["init"]:
            uid, gid, groups, exe = 0, 0, [], spec["init"]
        null = os.open("/dev/null", os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.setgroups(groups)
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)
        try:
            os.chdir(spec["cwd"])
        except OSError:
            os.chdir("/")
        os.execve(exe, spec["argv"], spec["env"])
    except Exception as exc:  # noqa: BLE001 - said to the harness, which names the service
        os.write(write_end, str(exc).encode("utf-8", "replace"))
    finally:
        os._exit(127)


def _libc():
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)

    def check(result, what):
        if result != 0:
            raise OSError(ctypes.get_errno(), what)

    return libc, check


def main(args):
    if args[0] == "list":
        list_services()
        return
    libc, check = _libc()
    if args[0] == "bound":
        bound_root(libc, check, int(args[1]))
    elif args[0] == "unbound":
        unbound_root(libc, check)
    else:  # start SPECS STAGED [BYTES]: bound first (BYTES), then print why each that did not start did not
        if len(args) > 3:
            bound_root(libc, check, int(args[3]))
        staged = json.loads(args[2])
        print(json.dumps([start_service(libc, check, spec, staged) for spec in json.loads(args[1])]))


if __name__ == "__main__":
    main(sys.argv[1:])
