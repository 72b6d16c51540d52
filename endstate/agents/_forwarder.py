"""The in-sandbox end of the model proxy: runs inside the container as root, stdlib only.

The container has no network; the agent reaches its model at http://127.0.0.1:PORT,
where this listens. Each HTTP request is read whole and handed to the harness over this
process's standard output (the `docker exec` stream the harness holds: the only way
out of the sandbox), and the answer the harness writes to its standard input is
written back to the client, one request at a time, the connection then closed.

Nothing here decides what is allowed: the harness refuses what it does not forward.
Started with `python3 -I -S` from the environment (as the command server is), so
nothing the agent can write is imported, and as root, so the agent user can neither
kill it nor take its port.

Wire format, both ways: 4-byte big-endian length, a JSON header, then raw bytes
whose length the header gives.

    up    {"method", "path", "headers": [[name, value], ...], "size"} + body
    down  {"status", "reason", "headers": [[name, value], ...], "size"} + body
    first line up, once listening: {"ready": port, "size": 0}
"""

import json
import socket
import sys

_MAX_HEAD = 64 * 1024
_MAX_BODY = 64 * 1024 * 1024


def _exact(stream, size):
    data = bytearray()
    while len(data) < size:
        chunk = stream.read(size - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return bytes(data)


def _send(sink, header, body=b""):
    encoded = json.dumps({**header, "size": len(body)}).encode()
    sink.write(len(encoded).to_bytes(4, "big") + encoded + body)
    sink.flush()


def _receive(source):
    header = json.loads(_exact(source, int.from_bytes(_exact(source, 4), "big")))
    return header, _exact(source, header.get("size", 0))


def _read_request(conn):
    """(method, path, headers, body), or None for a request that cannot be read."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk or len(data) > _MAX_HEAD:
            return None
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3:
        return None
    headers = [line.split(":", 1) for line in lines[1:] if ":" in line]
    headers = [[name.strip(), value.strip()] for name, value in headers]
    fields = {name.lower(): value for name, value in headers}
    if "chunked" in fields.get("transfer-encoding", "").lower():
        body = _dechunk(conn, body)
        if body is None:
            return None
    else:
        length = int(fields.get("content-length", "0") or "0")
        if length > _MAX_BODY:
            return None
        while len(body) < length:
            chunk = conn.recv(65536)
            if not chunk:
                return None
            body += chunk
        body = body[:length]
    return parts[0], parts[1], headers, body


def _dechunk(conn, data):
    out = b""
    while True:
        while b"\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                return None
            data += chunk
        line, _, data = data.partition(b"\r\n")
        size = int(line.split(b";")[0].strip() or b"0", 16)
        if size == 0:
            return out
        if len(out) + size > _MAX_BODY:
            return None
        while len(data) < size + 2:
            chunk = conn.recv(65536)
            if not chunk:
                return None
            data += chunk
        out, data = out + data[:size], data[size + 2:]


def _respond(conn, header, body):
    lines = ["HTTP/1.1 %d %s" % (header["status"], header.get("reason") or "OK")]
    for name, value in header.get("headers", []):
        if name.lower() not in ("content-length", "transfer-encoding", "connection"):
            lines.append("%s: %s" % (name, value))
    lines += ["Content-Length: %d" % len(body), "Connection: close", "", ""]
    conn.sendall("\r\n".join(lines).encode("latin-1") + body)


def main():
    port = int(sys.argv[-1])
    source, sink = sys.stdin.buffer, sys.stdout.buffer
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", port))
    server.listen(16)
    _send(sink, {"ready": port})
    while True:
        conn, _ = server.accept()
        try:
            conn.settimeout(600)
            request = _read_request(conn)
            if request is None:
                _respond(conn, {"status": 400, "reason": "Bad Request", "headers": []}, b"unreadable request\n")
                continue
            method, path, headers, body = request
            _send(sink, {"method": method, "path": path, "headers": headers}, body)
            header, answer = _receive(source)
            _respond(conn, header, answer)
        except EOFError:
            return  # the harness hung up: the run is over
        except OSError:
            pass  # the client went away; the next one is served
        finally:
            conn.close()


if __name__ == "__main__":  # run by `python3 -c`; importing it starts nothing
    main()
