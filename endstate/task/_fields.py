"""Fields of task.toml decoded or checked apart from the manifest's own module: the honest stops,
the `[sandbox]` table's checks against the task folder, and the trajectories of reference.toml
and a live hack's trajectory.toml."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from endstate.errors import ManifestError, did_you_mean

__all__ = ["HonestStop", "Reference", "ReferenceStep", "ToolCallSpec", "validate_sandbox"]


class HonestStop(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True, frozen=True):
    """`[[honest_stops]]`: a visible test an honest end state may leave failing, and why (a "stop
    and report" task: the test contradicts the prompt, or needs what the sandbox lacks)."""

    #: The pytest node id, `tests/test_x.py::test_y` (a parametrised test's every case).
    test: str
    reason: str

    def __post_init__(self) -> None:
        if "::" not in self.test or not self.test.split("::", 1)[0].endswith(".py"):
            raise ValueError(f"`test` must be a pytest node id such as tests/test_x.py::test_y, not {self.test!r}")
        if not self.reason.strip():
            raise ValueError(f"`reason` of {self.test} is empty: say why an honest end state may leave it failing")


def validate_sandbox(spec: Any, path: Path, folder: Path) -> None:
    """The `[sandbox]` table (a `SandboxSpec`) against its task folder; ManifestError naming the field."""
    if spec.dockerfile is not None and spec.image is not None:
        raise ManifestError(f"{path}: fields `sandbox.dockerfile` and `sandbox.image` are both set: keep one")
    if spec.dockerfile is not None:
        dockerfile = (folder / spec.dockerfile).resolve()
        if folder.resolve() not in dockerfile.parents:
            raise ManifestError(f"{path}: field `sandbox.dockerfile` must name a file inside the task folder")
        if not dockerfile.is_file():
            raise ManifestError(f"{path}: field `sandbox.dockerfile` names {spec.dockerfile!r}, which does not exist")
    if spec.image is not None and not spec.image.strip():
        raise ManifestError(f"{path}: field `sandbox.image` is empty: name an image or remove the field")
    for name in ("cpus", "memory_mb", "command_timeout"):
        value = getattr(spec, name)
        if value is not None and value <= 0:
            raise ManifestError(f"{path}: field `sandbox.{name}` must be positive, not {value}")


#: The tools a trajectory calls: the arguments each needs, then those it also takes (endstate.agent's tools).
_TOOL_ARGS = {"bash": (("command",), ("timeout",)), "read_file": (("path",), ()),
              "write_file": (("path", "content"), ()), "edit_file": (("path", "old", "new"), ())}


class ToolCallSpec(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True, frozen=True):
    tool: str
    args: dict[str, Any] = {}

    def __post_init__(self) -> None:  # a misspelt tool or argument would be skipped, unseen, when played
        if self.tool not in _TOOL_ARGS:
            raise ValueError(f"unknown tool {self.tool!r}{did_you_mean(self.tool, list(_TOOL_ARGS))} "
                             f"(the tools: {', '.join(_TOOL_ARGS)})")
        needs, also = _TOOL_ARGS[self.tool]
        missing = [name for name in needs if name not in self.args]
        unknown = sorted(set(self.args) - set(needs) - set(also))
        if missing or unknown:
            wrong = f"needs {', '.join(missing)}" if missing else f"takes no {', '.join(unknown)}"
            raise ValueError(f"{self.tool} {wrong} in its args (it takes {', '.join(needs + also)})")


class ReferenceStep(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True, frozen=True):
    say: str = ""
    calls: list[ToolCallSpec] = []


class Reference(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True, frozen=True):
    """`reference.toml`: the trajectory `scripted/reference` plays for this task."""

    steps: list[ReferenceStep]
    #: Text the scripted model answers on the compaction channel.
    summary: str = "Summary of the work so far."
