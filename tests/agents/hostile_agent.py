"""The program of a hostile agent (not a model): run in the sandbox as `python3 -m endstate_hostile`,
it tries every way out it can think of, prints what it reached as one JSON line, and
sends that report to its model through the proxy as an honest agent would."""

import glob
import json
import os
import socket
import urllib.error
import urllib.request

SECRET = os.environ.get("HOSTILE_LOOKS_FOR", "")[::-1]  # given reversed, so its own variable does not match
report = {}


def attempt(name, action):
    try:
        report[name] = "reached: %s" % (action(),)
    except Exception as exc:  # noqa: BLE001 - every failure is a result here
        report[name] = "blocked: %s" % type(exc).__name__


def tcp(host, port):
    socket.create_connection((host, port), timeout=3).close()
    return "%s:%d" % (host, port)


def unix(path):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(3)
    sock.connect(path)
    sock.sendall(b"GET /version HTTP/1.0\r\n\r\n")
    return sock.recv(200)


def http(method, url, body=None):
    request = urllib.request.Request(url, data=body, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return "%d %s" % (answer.status, answer.read(200))
    except urllib.error.HTTPError as exc:
        raise PermissionError("HTTP %d" % exc.code) from None


def raw(request_line):
    with socket.create_connection(("127.0.0.1", int(os.environ["OPENAI_BASE_URL"].split(":")[2].split("/")[0])),
                                  timeout=10) as sock:
        sock.sendall(request_line + b"\r\nContent-Length: 2\r\n\r\n{}")
        answer = sock.recv(200)
    if not answer.startswith(b"HTTP/1.1 200"):
        raise PermissionError(answer[:20].decode("latin-1"))
    return answer


def key_anywhere():
    found = [name for name, value in os.environ.items() if SECRET and SECRET in value]
    for path in glob.glob("/proc/[0-9]*/environ") + glob.glob("/proc/[0-9]*/cmdline"):
        try:
            with open(path, "rb") as file:
                if SECRET.encode() in file.read():
                    found.append(path)
        except OSError:
            pass
    for root in ("/tmp", "/home", "/opt/endstate", "/workspace", "/etc"):
        for folder, _, files in os.walk(root):
            for name in files:
                try:
                    with open(os.path.join(folder, name), "rb") as file:
                        if SECRET.encode() in file.read(1 << 20):
                            found.append(os.path.join(folder, name))
                except OSError:
                    pass
    if found:
        return found
    raise LookupError("not found")


base = os.environ["OPENAI_BASE_URL"]
attempt("egress-ip", lambda: tcp("1.1.1.1", 443))
attempt("egress-dns", lambda: socket.getaddrinfo("pypi.org", 443))
attempt("host-gateway", lambda: tcp("172.17.0.1", 2375))
attempt("docker-socket", lambda: unix("/var/run/docker.sock"))
attempt("docker-socket-run", lambda: unix("/run/docker.sock"))
attempt("proxy-other-path", lambda: http("GET", base + "/models"))
attempt("proxy-traversal", lambda: http("POST", base + "/../../admin", b"{}"))
attempt("proxy-other-host", lambda: raw(b"POST http://example.com/v1/chat/completions HTTP/1.1\r\nHost: example.com"))
attempt("key", key_anywhere)
if os.environ.get("HOSTILE_NODE"):  # started by the Node launcher of the npm form, which tried first
    report["node-egress"] = os.environ["HOSTILE_NODE"]
report["placeholder-key"] = os.environ.get("OPENAI_API_KEY", "")
line = json.dumps(report, sort_keys=True)
print("HOSTILE-REPORT " + line, flush=True)
http("POST", base + "/chat/completions", json.dumps(
    {"model": os.environ["HOSTILE_MODEL"], "messages": [{"role": "user", "content": line}]}).encode())
