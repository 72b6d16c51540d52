"""What a foreign agent cannot be run with: a model whose wire format it does not speak (the
whole run is refused), and the tasks whose `requires` bound a counter the harness cannot
observe from outside the agent (its tool calls, refusals, compactions, resumes)."""

from __future__ import annotations

from typing import Any

from endstate.agents._spec import OBSERVABLE_COUNTERS, AgentSpec
from endstate.models import SCRIPTED_PROVIDERS, WIRE_FORMATS, parse_spec

__all__ = ["refusal", "mismatch"]


def mismatch(spec: AgentSpec | None, model: str) -> str:
    """Why agent `spec` cannot talk to `model` at all ("" when it can): it speaks another wire
    format, so every request would fail and each task would read as the model's failure."""
    if spec is None or not spec.wire:
        return ""
    provider, name = parse_spec(model)
    if WIRE_FORMATS[provider] == spec.wire:
        return ""
    fits = [p for p, wire in WIRE_FORMATS.items() if wire == spec.wire]
    scripted = [p for p in fits if p in SCRIPTED_PROVIDERS]
    if provider in SCRIPTED_PROVIDERS and scripted:
        right = f"--model {scripted[0]}/{name}"
    else:
        right = " or ".join(f"--model {p}/<model>" for p in fits if p not in SCRIPTED_PROVIDERS)
    return (f"--agent {spec.name} speaks {spec.wire} and {model} is served over {WIRE_FORMATS[provider]}: "
            f"every request would fail; use {right}")


def refusal(task: Any, spec: AgentSpec | None) -> str:
    """Why `task` cannot run with agent `spec` ("" when it can, and always for endstate's loop)."""
    if spec is None:
        return ""
    needs = [name for name in task.manifest.requires.bounds() if name not in OBSERVABLE_COUNTERS]
    if task.manifest.kill_at is not None and "resumes" not in needs:
        needs.append("resumes (it kills and resumes the agent at a tool call)")
    if not needs:
        return ""
    return (f"refused: task {task.id} requires {', '.join(needs)}, which the harness cannot count for agent "
            f"{spec.name} (it sees only model turns and token usage: {', '.join(OBSERVABLE_COUNTERS)}); "
            "run it with endstate's own loop")
