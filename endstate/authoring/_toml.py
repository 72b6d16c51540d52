"""The one writer of the TOML files a made task holds: its task.toml, reference.toml and hacks.

Every way of making a task (`tasks new`, the SWE-bench and Harbor imports) states what it
wants as data; this module spells it. msgspec cannot encode TOML without a further package,
and the subset needed here is small: strings, numbers, booleans, lists and inline tables.
"""

from __future__ import annotations

import json
from pathlib import Path

import msgspec

__all__ = ["Manifest", "toml_string", "toml_value", "inline_table", "manifest_text", "write_manifest",
           "steps_text", "hack_text"]


def toml_string(text: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's)."""
    return json.dumps(text, ensure_ascii=False)


def toml_value(value: object) -> str:
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))  # 600.0 -> 600, as a person writes a limit
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return inline_table(value)
    raise TypeError(f"cannot write {type(value).__name__} as TOML")


def inline_table(values: dict) -> str:
    return "{ " + ", ".join(f"{k} = {toml_value(v)}" for k, v in values.items()) + " }"


class Manifest(msgspec.Struct, kw_only=True):
    """A made task's task.toml, in the order it is written."""

    id: str
    description: str
    category: str = "bugfix"
    #: Comment lines above the fields, without their "# ".
    header: list[str] = []
    #: Files the reference removes; None leaves the field out.
    solution_deletes: list[str] | None = None
    #: Tables such as budget, seal and sandbox, each written in this order; an empty one is left out.
    tables: dict[str, dict] = {}
    #: Built-in or own graders: (name as task.toml spells it, its args or None).
    graders: list[tuple[str, dict | None]] = []
    #: Rules of the task's policy, each a `[[policy.rule]]` table.
    policy_rules: list[dict] = []


def manifest_text(manifest: Manifest) -> str:
    lines = [f"# {line}" for line in manifest.header]
    lines += [f"id = {toml_string(manifest.id)}", f"category = {toml_string(manifest.category)}",
              f"description = {toml_string(manifest.description)}"]
    if manifest.solution_deletes is not None:
        lines.append(f"solution_deletes = {toml_value(manifest.solution_deletes)}")
    lines.append("")
    for name, fields in manifest.tables.items():
        if fields:
            lines += [f"[{name}]", *(f"{key} = {toml_value(value)}" for key, value in fields.items()), ""]
    for name, args in manifest.graders:
        lines += ["[[graders]]", f"name = {toml_string(name)}"]
        lines += [f"args = {inline_table(args)}"] if args else []
        lines.append("")
    for rule in manifest.policy_rules:
        lines += ["[[policy.rule]]", *(f"{key} = {toml_value(value)}" for key, value in rule.items()), ""]
    return "\n".join(lines)


def write_manifest(folder: Path, manifest: Manifest) -> Path:
    path = folder / "task.toml"
    path.write_text(manifest_text(manifest), encoding="utf-8")
    return path


def steps_text(steps: list[list[dict] | str], header: list[str] = ()) -> str:
    """A scripted trajectory (reference.toml): each step a list of tool calls, or a string the
    model says (its last turn)."""
    lines = [f"# {line}" for line in header] + ([""] if header else [])
    for step in steps:
        if isinstance(step, str):
            lines += ["[[steps]]", f"say = {toml_string(step)}", ""]
            continue
        lines += ["[[steps]]", "calls = ["]
        lines += [f"    {{ tool = {toml_string(c['tool'])}, args = {inline_table(c['args'])} }}," for c in step]
        lines += ["]", ""]
    return "\n".join(lines)


def hack_text(fields: dict) -> str:
    """A hack's hack.toml: its description, base, what it deletes and the grader that must catch it."""
    return "".join(f"{key} = {toml_value(value)}\n" for key, value in fields.items())
