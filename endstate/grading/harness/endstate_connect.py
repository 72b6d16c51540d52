"""Asks the warm entry point (endstate_runner.py --serve) for one graded test run.

    python3 -I -S /opt/endstate/harness/endstate_connect.py FOLDER TOKEN [--isolated] [--wipe DIR...] -- ARGS...

ARGS are endstate_runner.py's own. With --wipe it first empties each DIR of everything
this user can delete (and System V IPC objects), as the shell line a cold run starts
with does (chmod -R u+rwX, find -delete, ipcrm --all), without its dozen processes. This process hands its standard streams, umask,
limits and environment to the server, which forks a child that becomes this process's
user and runs them; this process then exits with the run's status. Where no server
answers (none was started, it failed, or it refused the token), it runs the entry point
itself, as `python3 -s -B endstate_runner.py ARGS`: the same run, without the head start;
unless --isolated says the run must have namespaces of its own, which only the server (root)
can make: it then ends with status 70 and a line saying so.
Stdlib only, isolated (-I -S): nothing of the end state is imported.
"""

import json
import os
import resource
import socket
import stat
import struct
import subprocess
import sys
import time

HARNESS = os.path.dirname(os.path.abspath(__file__))
#: How long to wait for a server that was started but is still importing.
WAIT_S = 20.0
_LIMITS = ("RLIMIT_FSIZE", "RLIMIT_NOFILE", "RLIMIT_NPROC", "RLIMIT_CORE", "RLIMIT_STACK", "RLIMIT_AS",
           "RLIMIT_DATA", "RLIMIT_CPU", "RLIMIT_MEMLOCK", "RLIMIT_MSGQUEUE", "RLIMIT_NICE", "RLIMIT_RTPRIO",
           "RLIMIT_SIGPENDING", "RLIMIT_RSS")


def _by_itself(args, isolated):
    if isolated:
        print("endstate_connect: the warm server did not take this run, and a run outside namespaces of "
              "its own is not allowed", file=sys.stderr)
        os._exit(70)
    python = sys.executable or "/usr/bin/python3"
    os.execv(python, [python, "-s", "-B", os.path.join(HARNESS, "endstate_runner.py"), *args])


def _exact(conn, size):
    data = b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def _empty(folder):
    try:
        with os.scandir(folder) as listing:
            entries = list(listing)
    except OSError:
        return
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False):
                try:
                    os.chmod(entry.path, stat.S_IMODE(entry.stat(follow_symlinks=False).st_mode) | 0o700)
                except OSError:
                    pass
                _empty(entry.path)
                os.rmdir(entry.path)
            else:
                os.unlink(entry.path)
        except OSError:
            pass


def _wipe(folders):
    for folder in folders:
        _empty(folder)
    held = []
    for kind in ("shm", "sem", "msg"):
        try:
            with open("/proc/sysvipc/" + kind) as table:
                held += table.readlines()[1:]
        except OSError:
            held.append("unknown")
    if held:
        subprocess.run(["ipcrm", "--all"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def main(argv):
    folder, token, *rest = argv
    isolated = rest[:1] == ["--isolated"]
    rest = rest[1:] if isolated else rest
    if rest[:1] == ["--wipe"]:
        end = rest.index("--") if "--" in rest else len(rest)
        _wipe(rest[1:end])
        rest = rest[end:]
    if rest[:1] != ["--"]:
        print("endstate_connect: usage: FOLDER TOKEN [--isolated] [--wipe DIR...] -- ARGS...", file=sys.stderr)
        return 64
    args = rest[1:]
    path = os.path.join(folder, "sock")
    deadline = time.monotonic() + WAIT_S
    while not os.path.exists(path):
        if os.path.exists(os.path.join(folder, "failed")) or not os.path.isdir(folder) or time.monotonic() > deadline:
            _by_itself(args, isolated)
        time.sleep(0.005)
    umask = os.umask(0)
    os.umask(umask)
    request = json.dumps({"token": token, "argv": args, "env": dict(os.environ), "umask": umask,
                          "limits": {name: resource.getrlimit(getattr(resource, name))
                                     for name in _LIMITS if hasattr(resource, name)}}).encode()
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(path)
        # what socket.send_fds (3.9) does, on any Python 3
        conn.sendmsg([struct.pack(">I", len(request)) + request[:60000]],
                     [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack("3i", 0, 1, 2))])
        if len(request) > 60000:
            conn.sendall(request[60000:])
        answer = _exact(conn, 1)
    except OSError:
        answer = None
    if answer != b"R":
        conn.close()
        _by_itself(args, isolated)
    status = _exact(conn, 4)
    if status is None:
        print("endstate_connect: the test run's server ended without its status", file=sys.stderr)
        return 75
    return struct.unpack(">i", status)[0]


if __name__ == "__main__":
    code = main(sys.argv[1:])
    os._exit(code)
