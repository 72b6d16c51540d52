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


def _edit(request, payload):
    """Replace the one occurrence of `old` by `new`, reading and writing through the
    client's scripts (which run as the agent user); the count decides, as in the tool."""
    old_size = request["old"]
    old = payload[:old_size].decode("utf-8")
    new = payload[old_size:old_size + request["new"]].decode("utf-8")
    code, out, err = _run({**request, "argv": request["read"]}, None)
    eof = request["eof"].encode()
    if code != 0 or not out.endswith(eof):
        return {"stage": "read", "code": code}, out, err
    try:
        text = out[:-len(eof)].decode("utf-8")
    except UnicodeDecodeError:
        return {"stage": "decode", "code": 0}, b"", b""
    count = text.count(old) if old else 0
    if count != 1:
        return {"stage": "count", "count": count, "code": 0}, b"", b""
    code, out, err = _run({**request, "argv": request["write"]}, text.replace(old, new, 1).encode("utf-8"))
    return {"stage": "write", "count": 1, "code": code}, out, err


def main():
    source, sink = sys.stdin.buffer, sys.stdout.buffer
    while True:
        try:
            request = json.loads(_exact(source, int.from_bytes(_exact(source, 4), "big")))
            payload = _exact(source, request.get("size", 0))
        except EOFError:
            return  # the client hung up
        if request["op"] == "run":
            code, out, err = _run(request, payload if request.get("stdin") else None)
            header = {"code": code}
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
