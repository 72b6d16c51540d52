"""A container outlives no harness: it stops when its owner dies, and reap() removes it."""

from __future__ import annotations

import ast
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from endstate.sandbox import reap
from endstate.sandbox._reaper import owner_alive, owner_labels

OWNER = """
import sys, time
from endstate.sandbox import DockerSandbox
box = DockerSandbox(sys.argv[1], name_hint="reaper-test", run_id="reaper-test")
print(box.container_id, flush=True)
time.sleep(600)
"""


def test_owner_labels_name_this_process_and_a_dead_one_is_known_dead():
    labels = owner_labels("run-1")
    assert labels["endstate"] == "1" and labels["endstate.run"] == "run-1"
    assert labels["endstate.owner.pid"] == str(os.getpid())
    assert owner_alive(labels) is True

    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        reused = {**labels, "endstate.owner.pid": str(child.pid)}
        assert owner_alive(reused) is False  # a live process, but not the one that started then
    finally:
        child.kill()
        child.wait()
    assert owner_alive({**labels, "endstate.owner.pid": str(child.pid)}) is False
    assert owner_alive({**labels, "endstate.owner.boot": "another-boot"}) is False
    # What this process cannot judge is left alone.
    assert owner_alive({"endstate": "1"}) is None
    assert owner_alive({**labels, "endstate.owner.host": "elsewhere"}) is None
    assert owner_alive({**labels, "endstate.owner.pidns": "pid:[1]"}) is None


@pytest.mark.docker
@pytest.mark.alone  # every endstate command reaps dead owners' containers: one on another worker would take it
def test_a_sigkilled_owner_leaves_no_running_container_and_reap_removes_it(sandbox_image, engine):
    owner = subprocess.Popen([sys.executable, "-c", OWNER, sandbox_image], stdout=subprocess.PIPE, text=True)
    container_id = owner.stdout.readline().strip()
    try:
        container = engine.containers.get(container_id)
        assert container.status == "running"
        assert container.labels["endstate.owner.pid"] == str(owner.pid)
        assert container.labels["endstate.run"] == "reaper-test"
        assert container_id not in reap()  # a live owner's container is kept
        assert engine.containers.get(container_id).status == "running"
    finally:
        os.kill(owner.pid, signal.SIGKILL)
        owner.wait()
    deadline = time.monotonic() + 10
    while engine.api.inspect_container(container_id)["State"]["Running"] and time.monotonic() < deadline:
        time.sleep(0.1)
    state = engine.api.inspect_container(container_id)["State"]
    assert not state["Running"], "the container should stop by itself once its owner is gone"
    assert container_id in reap()
    assert engine.containers.list(all=True, filters={"id": container_id}) == []


def _container_calls(tree: ast.AST):
    """Every `X.containers.run(...)` / `X.containers.create(...)` call in a module's tree."""
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("run", "create")
                and isinstance(node.func.value, ast.Attribute) and node.func.value.attr == "containers"):
            yield node


def test_every_container_the_sdk_makes_is_given_owner_labels():
    import endstate

    calls = []
    for path in sorted(Path(endstate.__file__).parent.rglob("*.py")):
        for call in _container_calls(ast.parse(path.read_text(), str(path))):
            labels = next((k.value for k in call.keywords if k.arg == "labels"), None)
            made_by = labels.func.id if isinstance(labels, ast.Call) and isinstance(labels.func, ast.Name) else None
            calls.append((f"{path.name}:{call.lineno}", made_by))
    assert len(calls) >= 5  # the sandbox, an image's Python, a wheel, the runtime volume, a pulled image
    assert [where for where, made_by in calls if made_by not in ("owner_labels", "one_off_labels")] == []


@pytest.mark.docker
def test_one_off_containers_carry_owner_labels_as_the_engine_saw_them(sandbox_image, engine):
    from endstate.sandbox._image import image_python
    from endstate.sandbox._pulled import run_in_image

    started_ns = time.time_ns()
    assert image_python(sandbox_image).startswith("3.")
    status, _, files = run_in_image(sandbox_image, "echo hi > /tmp/x", ["/tmp/x"])
    assert (status, files) == (0, [b"hi\n"])
    events = engine.events(since=started_ns // 10**9 - 1, until=int(time.time()) + 1, decode=True,
                           filters={"type": "container", "event": "create"})
    # Whole seconds would take in the previous test's containers, made by this same worker a moment before.
    made = [e["Actor"]["Attributes"] for e in events
            if e["timeNano"] >= started_ns and e["Actor"]["Attributes"].get("image") == sandbox_image]
    mine = [a for a in made if a.get("endstate.owner.pid") == str(os.getpid())]
    assert len(mine) >= 2, made
    assert all(a.get("endstate") == "1" and a["endstate.run"].startswith("one-off-") for a in mine)
