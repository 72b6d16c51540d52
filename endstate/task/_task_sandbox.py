"""What sandbox a task runs in: one answer for `tasks check`, `eval` and `tasks new`.

A task's `[sandbox]` table may name its own image (built from a Dockerfile in the
task folder, or an existing one) and its limits; everything it leaves out comes
from the run's default image and `SandboxLimits`, with the command timeout taken
from the task's budget.
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from endstate.errors import SandboxUnavailable
from endstate.sandbox import SandboxLimits
from endstate.task._manifest import Task

__all__ = ["TaskSandbox", "task_sandbox", "has_own_image", "own_image_ids"]


class TaskSandbox(msgspec.Struct, frozen=True):
    image: str
    limits: SandboxLimits


def has_own_image(task: Task) -> bool:
    spec = task.manifest.sandbox
    return spec.dockerfile is not None or spec.image is not None


def task_sandbox(task: Task, backend: str, default_image: str, *,
                 log: Callable[[str], None] = lambda line: None) -> TaskSandbox:
    """The image and limits of `task`'s sandboxes; builds the task's own image when it has to.

    Raises SandboxUnavailable when the task needs its own image and the backend has
    no images (bubblewrap), or when that image cannot be built.
    """
    spec = task.manifest.sandbox
    defaults = SandboxLimits()
    limits = SandboxLimits(
        cpus=spec.cpus if spec.cpus is not None else defaults.cpus,
        memory_mb=spec.memory_mb if spec.memory_mb is not None else defaults.memory_mb,
        command_timeout_s=(spec.command_timeout if spec.command_timeout is not None
                           else task.manifest.budget.command_timeout),
        agent_uid=0 if spec.user == "root" else defaults.agent_uid,
        network=spec.network,
    )
    if not has_own_image(task):
        return TaskSandbox(default_image, limits)
    if backend != "docker":
        raise SandboxUnavailable(f"task {task.id} runs in its own image ([sandbox] in task.toml): "
                                 "run it with --sandbox docker")
    if spec.image is not None:
        return TaskSandbox(spec.image, limits)
    from endstate.sandbox import build_task_image

    return TaskSandbox(build_task_image(task.root / spec.dockerfile, task.id, log=log), limits)


def own_image_ids(tasks: list[Task], backend: str, default_image: str) -> dict[str, str]:
    """Task id -> image id for every task with its own image (building those that need it)."""
    from endstate.sandbox import image_id

    return {task.id: image_id(task_sandbox(task, backend, default_image).image)
            for task in sorted(tasks, key=lambda t: t.id) if has_own_image(task)}
