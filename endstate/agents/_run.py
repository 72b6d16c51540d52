"""One task run by a foreign agent, in a worker process of its own (as endstate's loop is).

The fixture goes in as for the built-in loop; the model proxy starts (forwarder in the
sandbox, this process's end under the task's cassette session); then the agent program
runs as one sandbox command, as the agent user, with the network off and the task's wall
budget as its deadline. Its environment holds the forwarder's loopback URL, a placeholder
key and the model's name: the real key never enters the sandbox. Replay that meets a
request it has no answer for kills every process of the agent at once.
"""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path
from typing import Any

import msgspec

from endstate.agent import AgentJob, AgentOutcome, Counters, StopReason, cassette_session, start_task
from endstate.agents._image import agent_home
from endstate.agents._proxy import API_ROOT, ModelProxy, answer_documents
from endstate.agents._spec import AgentSpec
from endstate.cassettes import RunMode
from endstate.errors import ReplayDivergence
from endstate.models import RunSettings, Scrubber, parse_spec

__all__ = ["run_foreign_job", "how_it_ended", "agent_command", "PROXY_PORT", "PLACEHOLDER_KEY"]

#: The loopback port the forwarder listens on inside the sandbox.
PROXY_PORT = 4319
#: What the agent is given as its API key; the proxy adds the real one on the host.
PLACEHOLDER_KEY = "endstate-proxy-holds-the-key"


def agent_command(spec: AgentSpec, *, prompt: str, model_name: str, max_steps: int) -> str:
    """The shell line that starts the agent in the sandbox (every value quoted)."""
    base_url = f"http://127.0.0.1:{PROXY_PORT}{API_ROOT}"
    values = {"prompt": prompt, "max_steps": str(max_steps), "model": model_name, "base_url": base_url}
    env = {
        **{name: value.replace("{model}", model_name) for name, value in spec.run.env.items()},
        spec.model.base_url_env: base_url,
        spec.model.api_key_env: PLACEHOLDER_KEY,
        spec.model.name_env: spec.model.name_prefix + model_name,
    }
    args = [arg.format_map(values) for arg in spec.run.args]
    assignments = " ".join(f"{name}={shlex.quote(value)}" for name, value in sorted(env.items()))
    if spec.run.program:
        program = spec.run.program
        argv = [program if program.startswith("/") else f"{agent_home(spec)}/npm/node_modules/.bin/{program}", *args]
    else:
        argv = ["python3", f"{agent_home(spec)}/run.py", spec.run.module, *args]
    return f"cd /workspace && exec env {assignments} {' '.join(shlex.quote(a) for a in argv)}"


def _upstream_key(provider: str) -> str | None:
    return {"openai": os.environ.get("OPENAI_API_KEY"), "openai-compatible": os.environ.get("OPENAI_API_KEY"),
            "anthropic": os.environ.get("ANTHROPIC_API_KEY")}.get(provider)


def _upstream(provider: str, base_url: str | None) -> str:
    if base_url:
        return base_url
    if provider == "openai":
        return "https://api.openai.com/v1"
    raise ReplayDivergence(f"no API root for provider {provider!r}: pass --base-url")


def _kill_agent(sandbox: Any) -> None:
    """Every process of the agent user, killed from a separate exec (the agent's own command
    holds the sandbox's channel)."""
    api = sandbox._client.api
    exec_id = api.exec_create(sandbox.container_id, ["kill", "-s", "KILL", "-1"], user="1000:1000")["Id"]
    api.exec_start(exec_id)


_STATUS_SCRIPT = ("import json, sys\n"
                  "value = json.load(open(sys.argv[1]))\n"
                  "for key in sys.argv[2].split('.'):\n"
                  "    value = value[key]\n"
                  "print(value)\n")


def _status(spec: AgentSpec, sandbox: Any) -> str:
    """The value of the agent's own status (finish.status_key in finish.status_file), or "".
    Read by a command in the sandbox (the file may be on a tmpfs, which the engine's archive
    calls do not see); it says how the agent ended, and decides no verdict."""
    if not spec.finish.status_file:
        return ""
    done = sandbox.exec(f"python3 -I -c {shlex.quote(_STATUS_SCRIPT)} {shlex.quote(spec.finish.status_file)} "
                        f"{shlex.quote(spec.finish.status_key)}", timeout=30)
    return done.stdout.strip()[:200] if done.ok else ""


def run_foreign_job(job: AgentJob, *, base_url: str | None, scrubber: Scrubber,
                    at_kill_point: Any = None) -> AgentOutcome:
    """Run `job` with the foreign agent it names; the outcome as for endstate's own loop.
    (`at_kill_point` is never called: a task with a kill point is refused for a foreign agent.)"""
    from endstate.sandbox import TimedSandbox, attach

    spec = msgspec.convert(job.agent, AgentSpec)
    live = attach(job.sandbox)
    sandbox = TimedSandbox(live)
    if job.fixture:
        start_task(sandbox, job)
    settings = msgspec.convert(job.settings, RunSettings)
    provider, model_name = parse_spec(job.model)
    deadline = min(spec.run.time_budget_s, float(job.budget.wall_seconds))
    diverged: list[ReplayDivergence] = []

    def on_divergence(exc: ReplayDivergence) -> None:
        diverged.append(exc)
        _kill_agent(live)

    replaying = job.cassette is not None and job.cassette.mode == RunMode.REPLAY
    upstream = _upstream(provider, base_url)
    with cassette_session(job, scrubber) as tape:
        proxy = ModelProxy(spec, upstream, api_key=None if replaying else _upstream_key(provider),
                           timeout_s=settings.timeout_s, on_divergence=on_divergence,
                           allowlist=job.guards.proxy_allowlist)
        try:
            proxy.start(live._client.api, live.container_id, PROXY_PORT)
            command = agent_command(spec, prompt=job.prompt, model_name=model_name, max_steps=job.budget.max_steps)
            result = sandbox.exec(command, timeout=deadline)
        finally:
            proxy.close()
    tokens = proxy.tokens
    counters = Counters(steps=proxy.turns, input_tokens=tokens.input, output_tokens=tokens.output,
                        cached_input_tokens=tokens.cached, cache_write_tokens=tokens.cache_write,
                        reasoning_tokens=tokens.reasoning)
    stop, detail = how_it_ended(spec, result, _status(spec, sandbox), deadline, proxy)
    _write_transcript(Path(job.transcript), job.prompt, proxy, result, scrubber)
    outcome = AgentOutcome(stop, detail, counters, sandbox_s=round(sandbox.seconds, 3))
    if tape is not None:
        outcome.divergence = tape.divergence or (str(diverged[0]) if diverged else "")
        outcome.unplayed = tape.unplayed()
        outcome.provenance = tape.provenance()
    return outcome


def how_it_ended(spec: AgentSpec, result: Any, status: str, deadline: float, proxy: Any) -> tuple[StopReason, str]:
    """(stop reason, detail) of a foreign agent's run, from its exit, its own status and the proxy.
    When the last request it sent could not reach the model (no connection, credentials refused, no
    such endpoint, a server failing), the run is the machinery's `model_error`, never the model's."""
    if result.timed_out:
        stop, detail = StopReason.WALL_BUDGET, f"the agent ran past its {deadline:.0f}s budget and was killed"
    elif status in spec.finish.done or (not spec.finish.status_file and result.exit_code in spec.finish.exit_codes):
        stop, detail = StopReason.MODEL_STOPPED, status or f"exit {result.exit_code}"
    elif result.exit_code in spec.finish.exit_codes:
        stop, detail = StopReason.AGENT_STOPPED, f"{spec.name} ended with status {status or 'unknown'}"
    else:
        stop, detail = StopReason.AGENT_ERROR, f"{spec.name} exited {result.exit_code}: {result.stderr.strip()[-300:]}"
    if proxy.unreachable:
        stop, detail = StopReason.MODEL_ERROR, f"{proxy.unreachable}; then {spec.name}: {detail}"[:600]
    if proxy.error:
        stop, detail = StopReason.HARNESS_ERROR, proxy.error
    return stop, detail


def _said(document: dict[str, Any]) -> str:
    """The text and tool calls of one answer document, whole or one streamed event, in any of the
    three wire formats (chat completions, Anthropic Messages, the Responses API)."""
    kind = document.get("type")
    if isinstance(document.get("choices"), list) and document["choices"]:
        choice = document["choices"][0] if isinstance(document["choices"][0], dict) else {}
        return str((choice.get("message") or choice.get("delta") or {}).get("content") or "")
    if kind == "content_block_start" and (document.get("content_block") or {}).get("type") == "tool_use":
        return f"\n[tool_use {document['content_block'].get('name')}] "
    if kind == "content_block_delta":
        delta = document.get("delta") or {}
        return str(delta.get("text") or delta.get("partial_json") or "")
    if kind == "response.output_text.delta":
        return str(document.get("delta") or "")
    if kind == "response.output_item.done" and (document.get("item") or {}).get("type") == "function_call":
        return f"\n[function_call {document['item'].get('name')}] {document['item'].get('arguments')}"
    if kind == "message" and isinstance(document.get("content"), list):  # a whole Messages answer
        return "".join(_said({"type": "content_block_delta", "delta": b}) if b.get("type") == "text" else
                       f"\n[tool_use {b.get('name')}] {json.dumps(b.get('input'))}"
                       for b in document["content"] if isinstance(b, dict) and b.get("type") in ("text", "tool_use"))
    return ""


def _write_transcript(path: Path, prompt: str, proxy: ModelProxy, result: Any, scrubber: Scrubber) -> None:
    """What the harness saw of the run: the prompt, each answer the model gave, the requests the
    proxy refused (side traffic off the agent file's endpoints), the agent's output."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
    for _, answer in proxy.exchanges:
        content = [_said(document) for document in answer_documents(answer) if isinstance(document, dict)]
        messages.append({"role": "assistant", "content": "".join(content) or answer.decode("utf-8", "replace")})
    refused = "".join(f"[proxy refused {request}]\n" for request in proxy.refused)
    messages.append({"role": "tool", "content": f"{refused}[agent exit {result.exit_code}]\n{result.stdout[-4000:]}"})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(msgspec.json.format(scrubber.json(messages), indent=1))
