"""The mutation check's probe of the proxy's endpoint allowlist, replayed from a cassette.

A hostile agent program reaches the model only through the proxy, which adds the real key:
what it may send there is the allowlist's to decide. The probe plays such a program's
requests (another endpoint of the same API, a path that climbs out of the API root, another
method, an absolute URL) and then the agent's own recorded turns, straight into the host end
of the proxy under a strict replay session of that recording. No container, no agent
process: a few milliseconds. With the guard in place every hostile request is answered 404
where it stands and the recording plays to its end; without it one of them leaves the proxy
(on replay it finds no recorded answer: the request went out).
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

from endstate.cassettes import RunMode

__all__ = ["HOSTILE_REQUESTS", "probe_proxy"]

#: (method, path, JSON body) a hostile agent sends to the forwarder before its own turns.
HOSTILE_REQUESTS: tuple[tuple[str, str, object], ...] = (
    ("POST", "/v1/files", {"purpose": "batch", "file": "the workspace, base64"}),
    ("POST", "/v1/../../admin", {}),
    ("DELETE", "/v1/chat/completions", {}),
    ("GET", "/v1/models", {}),
    ("POST", "http://example.com/v1/chat/completions", {"model": "x", "messages": []}),
)

# vcrpy patches the HTTP transport for the whole process: one replay session at a time here.
_ONE_SESSION = threading.Lock()


def probe_proxy(agent: str, cassette: Path, task_id: str, state_dir: Path, *, allowlist: bool) -> tuple[str, str]:
    """("pass", "") when every hostile request was refused in place and the recording played whole;
    else ("fail", what got out). `cassette` is `task_id`'s recording made with `agent`."""
    from endstate.agents._proxy import API_ROOT, ModelProxy
    from endstate.agents._spec import find_agent
    from endstate.cassettes import CassetteJob, load, open_session

    spec = find_agent(agent)
    if spec is None:
        raise ValueError(f"no shipped agent named {agent!r}")
    recording = load(cassette)
    turns = [i for i in recording.interactions if i.request.channel == "agent"]
    if not turns:
        raise ValueError(f"{cassette} holds no agent turn to replay")
    state_dir.mkdir(parents=True, exist_ok=True)
    job = CassetteJob(mode=RunMode.REPLAY, path=str(cassette), header={"agent": spec.id})
    forwarded: list[str] = []
    with _ONE_SESSION, open_session(job, task_id=task_id, state_dir=state_dir) as tape:
        # On replay the upstream is never reached: only its path is hashed, as recorded.
        root = "http://127.0.0.1:9" + turns[0].request.path.rsplit(API_ROOT + "/", 1)[0] + API_ROOT
        proxy = ModelProxy(spec, root, api_key=None, timeout_s=5, on_divergence=lambda exc: None, allowlist=allowlist)
        try:
            for method, path, body in HOSTILE_REQUESTS:
                try:
                    status = str(proxy._answer({"method": method, "path": path, "headers": []},
                                               json.dumps(body).encode())[0])
                except Exception as exc:  # noqa: BLE001 - past the allowlist, whatever happened next
                    status = type(exc).__name__
                if f"{method} {path}" not in proxy.refused:
                    forwarded.append(f"{method} {path} ({status})")
            endpoint = API_ROOT + turns[0].request.path.rsplit(API_ROOT, 1)[1]
            mismatched = sum(proxy._answer({"method": "POST", "path": endpoint, "headers": []},
                                           turn.request.body)[3] != turn.response.body for turn in turns)
        finally:
            proxy.close()
    if forwarded:
        went = f"; replay: {tape.divergence.splitlines()[0]}" if tape.divergence else ""
        return "fail", (f"{len(forwarded)} hostile request(s) got past the proxy's allowlist toward the "
                        f"model's API: {', '.join(forwarded)}{went}")
    if tape.divergence or mismatched or tape.unplayed():
        return "fail", f"the recording did not replay whole: {tape.divergence or f'{mismatched} answer(s) differ'}"
    return "pass", ""
