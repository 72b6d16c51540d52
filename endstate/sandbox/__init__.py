"""Where tasks run: sandbox backends, the sealed end state, and the image.

Backends register here by short name. `open_sandbox("auto", ...)` picks Docker
when an engine answers and bubblewrap otherwise; `resolve_backend` says which,
so a run can record it.

A backend and everything that talks to the Docker engine load on first use: importing
this package (for `Sandbox`, `Tree` or `seal`) loads neither the docker SDK nor a backend.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, Literal

from endstate.errors import SandboxUnavailable
from endstate.sandbox._base import (
    DEFAULT_IMAGE,
    HOSTNAME,
    SANDBOX_ENV,
    WORKDIR,
    DockerHandle,
    ExecResult,
    LocalHandle,
    Sandbox,
    SandboxHandle,
    SandboxLimits,
    output_text,
)
from endstate.sandbox._health import Healthcheck, healthy, wait_healthy
from endstate.sandbox._layer import (
    HARNESS_PROGRAMS,
    SealSpec,
    SystemChange,
    agent_processes,
    apply_change,
    bound_end_state,
    combined_hash,
    harness_path,
    read_change,
    release_end_state,
    selected,
    start_sealed,
)
from endstate.sandbox._pulled import PullFailed, pull_pinned, run_in_image
from endstate.sandbox._runtime import RUNTIME, TOOLBOX_BUILD, RuntimeGuards, runtime_volume
from endstate.sandbox._scripts import RESTRICT
from endstate.sandbox._sealed import SNAPSHOT_MAX_BYTES, SealedSandbox, cache_paths, matches_any, seal, without_caches
from endstate.sandbox._services import LIST_SERVICES, Process, unrestartable
from endstate.sandbox._timed import TimedSandbox
from endstate.sandbox._tree import (
    VCS_DIRS,
    FileEntry,
    ProjectCopy,
    Tree,
    load_dir,
    overlay,
    tar_to_tree,
    tree_hash,
    tree_to_tar,
)

if TYPE_CHECKING:
    from endstate.sandbox._cli import docker_cli
    from endstate.sandbox._docker import DockerSandbox
    from endstate.sandbox._engine import connect, engine_answers, engine_configured
    from endstate.sandbox._faults import EngineWatch, machinery_fault
    from endstate.sandbox._image import (
        build_context,
        build_image,
        build_python_image,
        build_task_image,
        build_wheel_in_image,
        image_id,
        image_label,
        image_python,
    )
    from endstate.sandbox._local import LocalSandbox
    from endstate.sandbox._pythons import PYTHON_IMAGE, PythonSource, python_source
    from endstate.sandbox._reaper import LABEL, RUN_LABEL, reap, remove_run_containers
    from endstate.sandbox._wheels import (
        DATED_INDEX,
        SANDBOX_GLIBC,
        SANDBOX_PYTHON,
        SYSTEM_PACKAGES,
        built_root,
        has_wheel,
        python_of,
        resolve_requirements,
        wheelhouse,
    )

__all__ = [
    "Healthcheck",
    "healthy",
    "wait_healthy",
    "HARNESS_PROGRAMS",
    "SealSpec",
    "harness_path",
    "SystemChange",
    "agent_processes",
    "LIST_SERVICES",
    "unrestartable",
    "apply_change",
    "start_sealed",
    "bound_end_state",
    "release_end_state",
    "combined_hash",
    "read_change",
    "selected",
    "build_context",
    "image_label",
    "image_python",
    "remove_run_containers",
    "Sandbox",
    "SandboxHandle",
    "DockerHandle",
    "LocalHandle",
    "attach",
    "ExecResult",
    "SandboxLimits",
    "WORKDIR",
    "HOSTNAME",
    "SANDBOX_ENV",
    "output_text",
    "SealedSandbox",
    "Process",
    "seal",
    "SNAPSHOT_MAX_BYTES",
    "matches_any",
    "without_caches",
    "cache_paths",
    "TimedSandbox",
    "RESTRICT",
    "RUNTIME",
    "TOOLBOX_BUILD",
    "Tree",
    "FileEntry",
    "VCS_DIRS",
    "tree_hash",
    "load_dir",
    "overlay",
    "tar_to_tree",
    "tree_to_tar",
    "ProjectCopy",
    "open_sandbox",
    "resolve_backend",
    "BACKENDS",
    "DockerSandbox",
    "LocalSandbox",
    "connect",
    "engine_answers",
    "engine_configured",
    "EngineWatch",
    "machinery_fault",
    "services_interfered",
    "LABEL",
    "RUN_LABEL",
    "build_image",
    "runtime_volume",
    "RuntimeGuards",
    "build_task_image",
    "image_id",
    "PullFailed",
    "pull_pinned",
    "run_in_image",
    "DEFAULT_IMAGE",
    "reap",
    "resolve_requirements",
    "has_wheel",
    "DATED_INDEX",
    "SANDBOX_GLIBC",
    "SANDBOX_PYTHON",
    "SYSTEM_PACKAGES",
    "built_root",
    "python_of",
    "wheelhouse",
    "build_wheel_in_image",
    "PYTHON_IMAGE",
    "PythonSource",
    "build_python_image",
    "python_source",
    "docker_cli",
]

#: Names whose modules load on first use (the docker SDK, a backend), by module.
_LAZY = {
    "DockerSandbox": "_docker",
    "connect": "_engine",
    "engine_answers": "_engine",
    "engine_configured": "_engine",
    "EngineWatch": "_faults",
    "machinery_fault": "_faults",
    "services_interfered": "_faults",
    "RUN_LABEL": "_reaper",
    "LocalSandbox": "_local",
    "LABEL": "_reaper",
    "reap": "_reaper",
    "build_image": "_image",
    "build_task_image": "_image",
    "image_id": "_image",
    "image_label": "_image",
    "image_python": "_image",
    "build_context": "_image",
    "remove_run_containers": "_reaper",
    "resolve_requirements": "_wheels",
    "has_wheel": "_wheels",
    "DATED_INDEX": "_wheels",
    "SANDBOX_GLIBC": "_wheels",
    "SANDBOX_PYTHON": "_wheels",
    "SYSTEM_PACKAGES": "_wheels",
    "built_root": "_wheels",
    "python_of": "_wheels",
    "wheelhouse": "_wheels",
    "PYTHON_IMAGE": "_pythons",
    "PythonSource": "_pythons",
    "build_python_image": "_image",
    "build_wheel_in_image": "_image",
    "python_source": "_pythons",
    "docker_cli": "_cli",
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    globals()[name] = value
    return value


class _Backends(Mapping[str, "type[Sandbox]"]):
    """Every backend by the short name `--sandbox` takes; a backend's module loads when it is looked up."""

    _CLASSES = {"docker": "DockerSandbox", "local": "LocalSandbox"}

    def __getitem__(self, name: str) -> type[Sandbox]:
        if name not in self._CLASSES:
            raise KeyError(name)
        return __getattr__(self._CLASSES[name])

    def __iter__(self) -> Iterator[str]:
        return iter(self._CLASSES)

    def __len__(self) -> int:
        return len(self._CLASSES)


#: Every backend by the short name `--sandbox` takes.
BACKENDS: Mapping[str, type[Sandbox]] = _Backends()

BackendName = Literal["auto", "docker", "local"]


def _known(kind: str) -> type[Sandbox]:
    if kind not in BACKENDS:
        raise SandboxUnavailable(
            f"unknown sandbox backend {kind!r}: choose one of auto, {', '.join(sorted(BACKENDS))}"
        )
    return BACKENDS[kind]


def resolve_backend(kind: str = "auto") -> str:
    """The backend `kind` stands for: "auto" is docker when an engine answers, local when
    this machine has no engine at all.

    An engine that is configured (DOCKER_HOST set, or its socket present) but does not
    answer is an error, never a quiet move to bubblewrap: the run would then be scored
    on another backend than the one meant, and a task that cannot run there would read
    as the model's failure. Falling back says so on stderr."""
    from endstate.sandbox._docker import DockerSandbox
    from endstate.sandbox._engine import connect, engine_answers, engine_configured, engine_url
    from endstate.sandbox._local import LocalSandbox

    if kind == "auto":
        if engine_answers():
            return DockerSandbox.backend
        configured = engine_configured()
        if configured:
            raise SandboxUnavailable(
                f"--sandbox auto: a Docker engine is configured ({configured}) but none answers at "
                f"{engine_url()}: start it (dockerd, or scripts/ensure-engine in a clone), or pass "
                "--sandbox local to run on bubblewrap"
            )
        print("endstate: no Docker engine on this machine (DOCKER_HOST unset, no engine socket): "
              "running on the local bubblewrap backend; pass --sandbox docker to require an engine",
              file=sys.stderr)
        return LocalSandbox.backend
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
    runtime: RuntimeGuards = RuntimeGuards(),
) -> Sandbox:
    """A fresh sandbox of the given backend; close it (or use `with`) when done.
    `run_id` names the run it belongs to (a label on Docker containers); `grading` says it
    will receive a sealed end state and run tests, not an agent; `runtime`: the guards of
    the harness's runtime there (all on but in the mutation check).

    A backend asked for by name is not probed first: the Docker backend's constructor
    connects anyway (one client per process) and says so when no engine answers."""
    backend = _known(resolve_backend(kind) if kind == "auto" else kind)
    return backend(image, limits or SandboxLimits(), name_hint, run_id=run_id, grading=grading, runtime=runtime)


def attach(handle: SandboxHandle) -> Sandbox:
    """The sandbox a handle made in another process names, reached through its backend."""
    return BACKENDS["docker" if isinstance(handle, DockerHandle) else "local"].attach(handle)
