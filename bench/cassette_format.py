"""How much smaller and faster endstate's cassettes are than vcrpy's default YAML.

    .venv/bin/python bench/cassette_format.py [--tasks 22] [--steps 12] [--repeat 15]

The same agent traffic is recorded twice through the real openai SDK, httpx2 and
vcrpy: once by a plain vcrpy recorder (YAML serializer, FilesystemPersister, the
authorization header filtered), once by endstate's session. The traffic is a
coding agent's: each of `--steps` requests re-sends the whole conversation so
far, with tool results that are real source files (from the standard library).
Load time is the time to get vcrpy Request objects and response dicts back,
which is what both persisters hand vcrpy; the best of `--repeat` runs is kept.
"""

from __future__ import annotations

import argparse
import gc
import json
import shutil
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import openai
import vcr
from vcr.persisters.filesystem import FilesystemPersister
from vcr.serializers import yamlserializer

from endstate.cassettes import CassetteJob, load, open_session
from endstate.cassettes._format import CassetteWriter, Recording
from endstate.cassettes._scrub import to_vcr

TOOLS = [
    {"type": "function", "function": {"name": name, "description": description, "parameters": {
        "type": "object", "properties": {key: {"type": "string", "description": f"the {key}"} for key in keys},
        "required": list(keys)}}}
    for name, description, keys in [
        ("bash", "Run a shell command in the workspace and return its output.", ("command",)),
        ("read_file", "Read a file of the workspace.", ("path",)),
        ("write_file", "Write a file of the workspace, replacing it.", ("path", "content")),
        ("edit_file", "Replace one exact string in a file of the workspace.", ("path", "old", "new")),
    ]
]

SYSTEM = (
    "You are a careful software engineer working in a sandboxed repository. Use the tools to read code, "
    "edit it and run its tests. Never delete files you did not create, never rewrite version control "
    "history, and stay inside the workspace. When the tests pass, say what you changed in one paragraph. "
) * 4


def source_texts() -> list[str]:
    """Real Python files to serve as tool results, in a fixed order."""
    root = Path(json.__file__).resolve().parent.parent
    files = sorted(p for p in root.glob("*.py") if p.stat().st_size > 4000)
    return [p.read_text(errors="replace")[:6000] for p in files]


def answer(task: int, step: int, steps: int) -> dict[str, Any]:
    if step == steps:
        message = {"role": "assistant", "content": f"Fixed task {task}: the off-by-one in the parser is gone "
                                                   "and all tests pass."}
    else:
        tool = ("read_file", "bash", "edit_file")[step % 3]
        arguments = {"read_file": {"path": f"src/module_{step}.py"},
                     "bash": {"command": "python -m pytest -q tests"},
                     "edit_file": {"path": f"src/module_{step}.py", "old": "i <= n", "new": "i < n"}}[tool]
        message = {"role": "assistant", "content": None, "tool_calls": [
            {"id": f"call_{task}_{step}", "type": "function",
             "function": {"name": tool, "arguments": json.dumps(arguments)}}]}
    return {"id": f"chatcmpl-{task}-{step}", "object": "chat.completion", "created": 1_700_000_000 + step,
            "model": "gpt-bench", "system_fingerprint": "fp_bench",
            "choices": [{"index": 0, "message": message, "logprobs": None,
                         "finish_reason": "stop" if step == steps else "tool_calls"}],
            "usage": {"prompt_tokens": 1000 * step, "completion_tokens": 40, "total_tokens": 1000 * step + 40}}


class Server:
    def __init__(self, steps: int) -> None:
        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                self.rfile.read(int(self.headers["content-length"]))
                task = int(self.path.split("/")[2])
                data = json.dumps(answer(task, int(self.headers["x-endstate-turn"]), steps)).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.send_header("x-request-id", f"req_{task}")
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.port = self.httpd.server_address[1]

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def run_agent(port: int, task: int, steps: int, texts: list[str]) -> None:
    sdk = openai.OpenAI(api_key="sk-bench", base_url=f"http://127.0.0.1:{port}/task/{task}/v1", max_retries=0)
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM},
                                      {"role": "user", "content": f"Task {task}: the parser drops the last item."}]
    for step in range(1, steps + 1):
        raw = sdk.chat.completions.with_raw_response.create(
            model="gpt-bench", messages=messages, tools=TOOLS, temperature=0,
            extra_headers={"X-Endstate-Channel": "agent", "X-Endstate-Turn": str(step)})
        message = json.loads(raw.content)["choices"][0]["message"]
        messages.append({k: v for k, v in message.items() if v is not None})
        for call in message.get("tool_calls") or ():
            messages.append({"role": "tool", "tool_call_id": call["id"],
                             "content": texts[(task * steps + step) % len(texts)]})
    sdk.close()


def best_of(repeat: int, work) -> float:
    """The fastest of `repeat` runs, with the garbage collector paused as timeit does."""
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        gc.disable()
        try:
            start = time.perf_counter()
            work()
            best = min(best, time.perf_counter() - start)
        finally:
            gc.enable()
    return best


def total_size(paths: list[Path]) -> int:
    return sum(p.stat().st_size for p in paths)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=22)
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--repeat", type=int, default=15)
    options = parser.parse_args(argv)
    texts = source_texts()
    server = Server(options.steps)
    folder = Path(tempfile.mkdtemp(prefix="endstate-bench-"))
    yaml_paths, ours, appended = [], [], []
    plain = vcr.VCR(filter_headers=["authorization"], record_mode="all")
    try:
        for task in range(options.tasks):
            yaml_path = folder / "yaml" / f"task-{task}.yaml"
            with plain.use_cassette(str(yaml_path)):
                run_agent(server.port, task, options.steps, texts)
            yaml_paths.append(yaml_path)
            path = folder / "endstate" / f"task-{task}.cassette"
            job = CassetteJob(mode="record", path=str(path), header={"model": "openai/gpt-bench",
                                                                     "task_hash": f"{task:064x}"})
            with open_session(job, task_id=f"task-{task}", state_dir=folder / "work" / str(task)):
                run_agent(server.port, task, options.steps, texts)
            ours.append(path)
            appended.append(as_appended(load(path), folder / "appended" / path.name))
    finally:
        server.close()
    try:
        return report(options, yaml_paths, ours, appended)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def report(options: argparse.Namespace, yaml_paths: list[Path], ours: list[Path], appended: list[Path]) -> int:
    interactions = sum(len(load(p).interactions) for p in ours)
    yaml_s = best_of(options.repeat, lambda: [FilesystemPersister.load_cassette(p, yamlserializer) for p in yaml_paths])
    ours_s = best_of(options.repeat, lambda: [to_vcr(load(p).interactions) for p in ours])
    parse_s = best_of(options.repeat, lambda: [load(p) for p in ours])
    appended_s = best_of(options.repeat, lambda: [to_vcr(load(p).interactions) for p in appended])
    sizes = {"yaml": total_size(yaml_paths), "ours": total_size(ours), "appended": total_size(appended)}
    request_bytes = sum(len(i.request.body) for p in ours for i in load(p).interactions)

    print(f"{options.tasks} tasks x {options.steps} steps = {interactions} interactions, "
          f"{request_bytes / 1e6:.1f} MB of request bodies (each request re-sends the conversation)")
    print(f"{'format':<34}{'size':>12}{'load (best of ' + str(options.repeat) + ')':>22}")
    print(f"{'vcrpy YAML (FilesystemPersister)':<34}{sizes['yaml'] / 1e6:>10.2f} MB{yaml_s * 1e3:>19.1f} ms")
    print(f"{'endstate, as appended':<34}{sizes['appended'] / 1e6:>10.2f} MB{appended_s * 1e3:>19.1f} ms")
    print(f"{'endstate, finalized':<34}{sizes['ours'] / 1e6:>10.2f} MB{ours_s * 1e3:>19.1f} ms"
          f"   ({parse_s * 1e3:.1f} ms to parse without building vcrpy Requests)")
    print(f"finalized vs YAML: {sizes['yaml'] / sizes['ours']:.0f}x smaller, {yaml_s / ours_s:.0f}x faster to load")
    print(f"as appended vs YAML: {sizes['yaml'] / sizes['appended']:.0f}x smaller, "
          f"{yaml_s / appended_s:.0f}x faster to load")
    return 0


def as_appended(recording: Recording, path: Path) -> Path:
    """The file as it stands while recording: one chunk per interaction, before finalize."""
    path.parent.mkdir(parents=True, exist_ok=True)
    writer = CassetteWriter.create(path, recording.header, overwrite=True)
    for interaction in recording.interactions:
        writer.append(interaction)
    writer.end(len(recording.interactions))
    writer.close()
    return path


if __name__ == "__main__":
    sys.exit(main())
