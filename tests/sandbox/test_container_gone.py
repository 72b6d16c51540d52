"""A sandbox container removed or stopped from outside while a task uses it (`docker rm -f`, the
engine) is a fault of the machinery, which the run reruns, never a harness bug: the reference arm
once ended in `error: harness_error: SandboxError: file tool in container ... failed` for it."""

from __future__ import annotations

import pytest

from endstate.errors import SandboxError
from endstate.sandbox import DockerSandbox, SandboxLimits
from endstate.sandbox._faults import machinery_fault

pytestmark = pytest.mark.docker

LIMITS = SandboxLimits(memory_mb=512, pids=128, cpus=1.0, command_timeout_s=30)


@pytest.mark.parametrize("outside", ["removed", "killed"])
@pytest.mark.parametrize("tool", ["exec", "read_file", "read_folder"])
def test_a_container_lost_under_a_task_is_the_machinerys_fault(engine, sandbox_image, outside, tool):
    with DockerSandbox(sandbox_image, LIMITS, "test-container-gone") as box:
        box.write_file("notes.txt", b"draft\n")  # the task's channel into the container is open
        if outside == "removed":
            engine.api.remove_container(box.container_id, force=True)
        else:
            engine.api.kill(box.container_id)
        with pytest.raises(SandboxError) as caught:
            if tool == "exec":
                box.exec("cat notes.txt")
            elif tool == "read_file":
                box.read_file("notes.txt")
            else:  # how the graders read a report folder the test run wrote
                box.read_folder("/workspace", max_bytes=1 << 20)
    cause = machinery_fault(caught.value)
    assert cause is not None and "under the task" in cause, str(caught.value)


def test_a_runner_lost_in_a_running_container_is_not_called_the_machinerys(sandbox_image):
    """The container still runs: nothing outside took it away, so the error stays the harness's."""
    with DockerSandbox(sandbox_image, LIMITS, "test-container-gone") as box:
        box.write_file("notes.txt", b"draft\n")
        error = box._runner_lost("command runner died (container state: {state})")  # noqa: SLF001 - the branch itself
    assert "container state: running" in str(error) and machinery_fault(error) is None
