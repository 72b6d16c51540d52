"""Harbor's Agent Trajectory Interchange Format (ATIF, RFC 0001): one trajectory file per attempt.

A transcript maps onto ATIF steps one message at a time, except that the tool results
answering an assistant message become that agent step's `observation`, each result tied to
its call by `source_call_id` (ATIF keeps a call and what came back in one step). ATIF has no
field for a grader's verdict, so the verdict and the harness's records go in the
trajectory's `extra.endstate`, its `reward` as Harbor's verifiers write it (1.0 or 0.0).

Token counts are recorded per attempt, not per model call, so they appear in
`final_metrics` only and no step carries `metrics`. A model's readable thinking blocks
become the agent step's `reasoning_content`.

`ATIF-v1.8` is declared, the version Harbor writes (0.26); every field used here is in
ATIF since v1.6. `make peers` checks the files with Harbor's `TrajectoryValidator` and the
`atif` package's models.
"""

from __future__ import annotations

import json
from pathlib import Path

from endstate.report._export_input import ExportedAttempt, RunExport, verdict_record
from endstate.run import make_folder, write_atomically

__all__ = ["SCHEMA_VERSION", "trajectory", "write_atif"]

SCHEMA_VERSION = "ATIF-v1.8"

_SOURCE = {"system": "system", "user": "user", "assistant": "agent"}


def write_atif(source: RunExport, out: Path) -> None:
    """Write `<stem>.json` for every exported attempt into the folder `out`."""
    make_folder(out)
    for attempt in source.attempts:
        text = json.dumps(trajectory(source, attempt), indent=2) + "\n"
        write_atomically(out / f"{attempt.stem}.json", text.encode())


def trajectory(source: RunExport, attempt: ExportedAttempt) -> dict:
    card = source.run.card
    name, _, agent_hash = card.agent.partition("@")
    steps = _steps(attempt.messages)
    counters = attempt.result.counters
    return {
        "schema_version": SCHEMA_VERSION,
        "session_id": attempt.session_id,
        "agent": {
            "name": name,
            # A foreign agent is named `name@hash`: its hash is the version that ran.
            "version": agent_hash or card.endstate_version,
            "model_name": card.model,
            "extra": {"endstate_version": card.endstate_version, "provider": card.provider,
                      "temperature": card.temperature, "seed": card.seed, "tool_choice": card.tool_choice},
        },
        "steps": steps,
        "notes": (f"endstate run {source.folder.name}, task {attempt.result.task_id} attempt {attempt.result.attempt}: "
                  f"{attempt.result.outcome}. Token counts are per attempt (final_metrics), not per step."),
        "final_metrics": {
            "total_prompt_tokens": counters.input_tokens,
            "total_completion_tokens": counters.output_tokens,
            "total_steps": len(steps),
            "extra": {"agent_turns": counters.steps, "tool_calls": counters.tool_calls,
                      "denied_calls": counters.denied_calls},
        },
        "extra": {"endstate": {**verdict_record(attempt.result), "run_id": source.run_id,
                               "task_pack_hash": card.task_pack_hash, "image_id": card.image_id,
                               "mode": card.mode, "network_policy": card.network_policy}},
    }


def _steps(messages: list[dict]) -> list[dict]:
    steps: list[dict] = []
    for message in messages:
        role = message.get("role")
        if role == "tool":
            _observe(steps, message)
            continue
        step: dict = {"step_id": len(steps) + 1, "source": _SOURCE.get(role, "system"),
                      "message": message.get("content") or ""}
        if role == "assistant":
            step.update(_reasoning(message.get("thinking") or []))
        if role == "assistant" and message.get("tool_calls"):
            step["tool_calls"], raw = _tool_calls(message["tool_calls"])
            if raw:
                step.setdefault("extra", {})["unparsed_arguments"] = raw
        steps.append(step)
    if not steps:  # ATIF wants one step at least; an empty transcript still says so
        steps.append({"step_id": 1, "source": "system", "message": "(the transcript is empty)"})
    return steps


def _reasoning(blocks: list[dict]) -> dict:
    """The readable thinking blocks as the step's `reasoning_content`; redacted ones (encrypted,
    nothing to read) only counted, in `extra`."""
    texts = [b.get("text", "") for b in blocks if b.get("kind") == "thinking" and b.get("text")]
    redacted = sum(b.get("kind") == "redacted_thinking" for b in blocks)
    fields: dict = {"reasoning_content": "\n\n".join(texts)} if texts else {}
    if redacted:
        fields["extra"] = {"redacted_thinking_blocks": redacted}
    return fields


def _tool_calls(calls: list[dict]) -> tuple[list[dict], dict[str, str]]:
    """ATIF tool calls, and call id -> arguments text for calls whose arguments were no JSON object
    (ATIF wants an object; the model's own text is kept beside it)."""
    converted, raw = [], {}
    for call in calls:
        arguments = _arguments(call.get("arguments", ""))
        if arguments is None:
            raw[call.get("id", "")] = call.get("arguments", "")
            arguments = {}
        converted.append({"tool_call_id": call.get("id", ""), "function_name": call.get("name", ""),
                          "arguments": arguments})
    return converted, raw


def _arguments(text: str) -> dict | None:
    try:
        value = json.loads(text) if text else {}
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _observe(steps: list[dict], message: dict) -> None:
    """Attach a tool result to the agent step that made the call; one without such a step
    (a transcript cut by compaction) becomes a system step's observation."""
    call_id = message.get("tool_call_id") or None
    last = steps[-1] if steps else None
    ids = {c["tool_call_id"] for c in (last or {}).get("tool_calls", [])}
    if last is None or call_id not in ids:
        if last is None or last["source"] != "system" or "observation" not in last:
            last = {"step_id": len(steps) + 1, "source": "system", "message": "tool result"}
            steps.append(last)
        call_id = None
    result = {"source_call_id": call_id} if call_id else {}
    last.setdefault("observation", {"results": []})["results"].append({**result, "content": message.get("content") or ""})
