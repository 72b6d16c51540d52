"""The in-sandbox end of a channel (see `_channel`): runs inside the container as root.

It is started once per process that talks to a sandbox, by one `docker exec` with its
standard input attached, and then serves requests one at a time until that input
ends. Each request runs programs the client names (the command runner, the file
tools' scripts); the server adds no policy of its own, so commands behave exactly
as they did when each was its own `docker exec`.

Stdlib only, started with `python3 -I -S`: nothing the agent can write is imported.

Wire format, both ways: 4-byte big-endian length, a JSON header, then raw bytes
whose lengths the header gives.

    request  {"op": "run",  "argv": [...], "env": {...}, "cwd": str, "stdin": bool, "size": n} + n bytes of stdin
    reply    {"code": int, "out": n1, "err": n2} + stdout + stderr

    request  {"op": "edit", "read": argv, "write": argv, "env", "cwd", "eof": str,
              "old": n1, "new": n2, "size": n1 + n2} + old + new
    reply    {"stage": "read" | "decode" | "count" | "write", "count": int, "code", "out", "err"} + ...
"""

import json
import os
import pwd
import shlex
import struct
import subprocess
import sys


def _exact(stream, size):
    data = bytearray()
    while len(data) < size:
        chunk = stream.read(size - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return bytes(data)


def _run(request, stdin):
    proc = subprocess.Popen(
        request["argv"],
        env={**os.environ, **request.get("env", {})},
        cwd=request.get("cwd") or "/",
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    out, err = proc.communicate(stdin)
    return proc.returncode, out, err


# -- file tools: done here as the agent user when the plain case holds, else by the script ----
#
# A native attempt answers only when it succeeds the plain way; any error or unusual case
# (a missing parent folder, a path out of the workspace, a refused open) is handed to the
# client's script, which was the only way before and words every error as it always did.
# A refused open changes nothing, and a write the script redoes ends as the script alone
# would leave it.

_FALLBACK = object()


def _as_agent(request, work):
    """`work()` in a forked child that has become the agent user: what it returns
    ((code, out, err), or _FALLBACK when it raised or declined)."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        status = 1
        try:
            os.close(read_end)
            uid = gid = request["uid"]
            os.setgroups(os.getgrouplist(pwd.getpwuid(uid).pw_name, gid))
            os.setresgid(gid, gid, gid)
            os.setresuid(uid, uid, uid)
            os.chdir(request.get("cwd") or "/")
            done = work()
            with os.fdopen(write_end, "wb") as pipe:
                if done is not _FALLBACK:
                    code, out, err = done
                    pipe.write(struct.pack(">iQ", code, len(out)) + out + err)
            status = 0
        finally:
            os._exit(status)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        answer = pipe.read()
    _, status = os.waitpid(pid, 0)
    if status != 0 or len(answer) < 12:
        return _FALLBACK
    code, size = struct.unpack(">iQ", answer[:12])
    return code, answer[12:12 + size], answer[12 + size:]


def _inside(real):
    return real.startswith("/workspace/")


def _read_plain(request):
    def work():
        real = os.path.realpath(request["path"], strict=True)
        if not _inside(real) or os.path.isdir(real):
            return _FALLBACK
        with open(real, "rb") as file:
            return 0, file.read() + request["eof"].encode(), b""
    return _as_agent(request, work)


def _write_plain(request, data):
    def work():
        real = os.path.realpath(request["path"])
        if not _inside(real) or os.path.isdir(real) or not os.path.isdir(os.path.dirname(real)):
            return _FALLBACK
        mode = 0o755 if os.access(real, os.X_OK) else 0o644
        fd = os.open(real, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
        with os.fdopen(fd, "wb") as file:
            file.write(data)
        os.chmod(real, mode)
        os.utime(real, (request["mtime"], request["mtime"]), follow_symlinks=False)
        return 0, ("%s %d" % (request["eof"], os.stat(real).st_size)).encode(), b""
    return _as_agent(request, work)


def _read(request):
    """(code, out, err, whether the script answered)."""
    done = _read_plain(request)
    return (*_run({**request, "argv": request["read"]}, None), True) if done is _FALLBACK else (*done, False)


def _write(request, data):
    done = _write_plain(request, data)
    return (*_run({**request, "argv": request["write"]}, data), True) if done is _FALLBACK else (*done, False)


def _edit(request, payload):
    """Replace the one occurrence of `old` by `new` as the agent user; the count
    decides, as in the tool."""
    old_size = request["old"]
    old = payload[:old_size].decode("utf-8")
    new = payload[old_size:old_size + request["new"]].decode("utf-8")
    code, out, err, scripted = _read(request)
    eof = request["eof"].encode()
    if code != 0 or not out.endswith(eof):
        return {"stage": "read", "code": code, "scripted": scripted}, out, err
    try:
        text = out[:-len(eof)].decode("utf-8")
    except UnicodeDecodeError:
        return {"stage": "decode", "code": 0}, b"", b""
    count = text.count(old) if old else 0
    if count != 1:
        return {"stage": "count", "count": count, "code": 0}, b"", b""
    code, out, err, scripted = _write(request, text.replace(old, new, 1).encode("utf-8"))
    return {"stage": "write", "count": 1, "code": code, "scripted": scripted}, out, err


def _harness_environment():
    """A grading container: this server and what it runs keep the environment the harness set (each
    variable of the container's blanked, see _runtime); a command gets the container's back at its
    last exec (runner.sh), as bash words in ENDSTATE_USER_ENV, with what the engine adds to an exec."""
    user = json.loads(os.environ.pop("ENDSTATE_USER_ENV", "{}"))
    user.setdefault("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")  # the engine's default
    for name in ("HOME", "HOSTNAME"):
        if os.environ.get(name) and name not in user:
            user[name] = os.environ[name]
    for name in [name for name, value in os.environ.items() if not value]:
        del os.environ[name]
    os.environ["ENDSTATE_USER_ENV"] = " ".join(shlex.quote(k + "=" + v) for k, v in sorted(user.items()))


def main():
    source, sink = sys.stdin.buffer, sys.stdout.buffer
    if os.environ.pop("ENDSTATE_RUNTIME", ""):
        _harness_environment()
    while True:
        try:
            request = json.loads(_exact(source, int.from_bytes(_exact(source, 4), "big")))
            payload = _exact(source, request.get("size", 0))
        except EOFError:
            return  # the client hung up
        if request["op"] == "run":
            code, out, err = _run(request, payload if request.get("stdin") else None)
            header = {"code": code}
        elif request["op"] == "read":
            code, out, err, scripted = _read(request)
            header = {"code": code, "scripted": scripted}
        elif request["op"] == "write":
            code, out, err, scripted = _write(request, payload)
            header = {"code": code, "scripted": scripted}
        elif request["op"] == "edit":
            header, out, err = _edit(request, payload)
        else:
            header, out, err = {"code": -1}, b"", ("unknown op %r" % request["op"]).encode()
        header.update(out=len(out), err=len(err))
        encoded = json.dumps(header).encode()
        sink.write(len(encoded).to_bytes(4, "big") + encoded + out + err)
        sink.flush()


if __name__ == "__main__":  # run by `python3 -c`; importing it starts nothing
    main()
