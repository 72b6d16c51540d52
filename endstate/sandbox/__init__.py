"""Where tasks run: sandbox backends, the sealed end state, and the image.

Backends register here by short name. `open_sandbox("auto", ...)` picks Docker
when an engine answers and bubblewrap otherwise; `resolve_backend` says which,
so a run can record it.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Literal

from endstate.errors import SandboxUnavailable
from endstate.sandbox._base import WORKDIR, ExecResult, Sandbox, SandboxLimits
from endstate.sandbox._docker import DockerSandbox, connect, engine_answers
from endstate.sandbox._image import DEFAULT_IMAGE, build_image
from endstate.sandbox._local import LocalSandbox
from endstate.sandbox._reaper import reap
from endstate.sandbox._sealed import SealedSandbox, seal
from endstate.sandbox._tree import FileEntry, Tree, load_dir, tree_hash

__all__ = [
    "Sandbox",
    "ExecResult",
    "SandboxLimits",
    "WORKDIR",
    "SealedSandbox",
    "seal",
    "Tree",
    "FileEntry",
    "tree_hash",
    "load_dir",
    "open_sandbox",
    "resolve_backend",
    "BACKENDS",
    "DockerSandbox",
    "LocalSandbox",
    "build_image",
    "DEFAULT_IMAGE",
    "reap",
]

#: Every backend by the short name `--sandbox` takes.
BACKENDS: MappingProxyType[str, type[Sandbox]] = MappingProxyType(
    {DockerSandbox.backend: DockerSandbox, LocalSandbox.backend: LocalSandbox}
)

BackendName = Literal["auto", "docker", "local"]


def _known(kind: str) -> type[Sandbox]:
    if kind not in BACKENDS:
        raise SandboxUnavailable(
            f"unknown sandbox backend {kind!r}: choose one of auto, {', '.join(sorted(BACKENDS))}"
        )
    return BACKENDS[kind]


def resolve_backend(kind: str = "auto") -> str:
    """The backend `kind` stands for: "auto" is docker when an engine answers, else local."""
    if kind == "auto":
        return DockerSandbox.backend if engine_answers() else LocalSandbox.backend
    _known(kind)
    if kind == DockerSandbox.backend:
        connect(timeout=10).close()  # asked for by name: no engine is the user's error, said once
    return kind


def open_sandbox(
    kind: BackendName | str = "auto",
    *,
    image: str = DEFAULT_IMAGE,
    limits: SandboxLimits | None = None,
    name_hint: str = "task",
    run_id: str = "",
    grading: bool = False,
    beside: Sandbox | None = None,
) -> Sandbox:
    """A fresh sandbox of the given backend; close it (or use `with`) when done.
    `run_id` names the run it belongs to (a label on Docker containers); `grading` says it
    will receive a sealed end state and run tests, not an agent; `beside` is the agent's
    sandbox it will grade (on Docker, with the network off, it shares that one's namespace).

    A backend asked for by name is not probed first: the Docker backend's constructor
    connects anyway (one client per process) and says so when no engine answers."""
    backend = _known(resolve_backend(kind) if kind == "auto" else kind)
    return backend(image, limits or SandboxLimits(), name_hint, run_id=run_id, grading=grading, beside=beside)
