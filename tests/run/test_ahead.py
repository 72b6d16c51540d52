"""Sandboxes made ahead of their task and removed behind it.

The first tests drive `Lookahead` with plain values; the `docker` ones run real suites
and look at the engine: the next task's sandbox exists (fixture inside) while the
current task is graded, a missing image is that task's error alone, and no container
of a run outlives it, however the run ends.
"""

from __future__ import annotations

import io
import os
import secrets
import shutil
import tarfile
import threading
import time
from pathlib import Path

import pytest

from endstate.grading import Grader, Verdict
from endstate.run import RunConfig, run_suite
from endstate.run._ahead import Lookahead
from endstate.sandbox import DEFAULT_IMAGE
from endstate.sandbox._reaper import RUN_LABEL
from endstate.task import load_task

ROOT = Path(__file__).resolve().parents[2]
#: Three quick shipped tasks, in the order a run takes them (sorted by id).
FIRST, SECOND, THIRD = "bugfix-lru-eviction", "bugfix-prerelease-ordering", "deny-recursive-delete"


class _Made:
    def __init__(self, key: str) -> None:
        self.key = key
        self.disposed = False


def _lookahead(order: list[str], depth: int, made: dict[str, _Made], *, gate: threading.Event | None = None,
               at_gate: threading.Event | None = None, failing: str = "") -> Lookahead[str, _Made]:
    def prepare(key: str) -> _Made:
        if gate is not None and key != order[0]:
            if at_gate is not None:
                at_gate.set()
            gate.wait(10)
        if key == failing:
            raise ValueError(f"cannot make {key}")
        made[key] = _Made(key)
        return made[key]

    def dispose(item: _Made) -> None:
        item.disposed = True

    return Lookahead(order, prepare, dispose, depth)


def test_taking_one_makes_the_next_depth_ones_in_the_background():
    made: dict[str, _Made] = {}
    ahead = _lookahead(["a", "b", "c", "d", "e"], 2, made)
    item, waited = ahead.take("a")
    assert item.key == "a" and waited >= 0
    assert sorted(ahead._ahead) == ["b", "c"]  # asked for, not waited for
    made_b = ahead._ahead["b"].result()
    assert ahead.take("b")[0] is made_b  # made once, ahead of time, and handed over
    assert sorted(ahead._ahead) == ["c", "d"]
    ahead.close()
    assert "e" not in made
    # Made but never taken: disposed of; taken: left to the task that took it.
    assert not made["a"].disposed and not made["b"].disposed
    assert all(item.disposed for key, item in made.items() if key in ("c", "d"))


def test_an_error_while_making_is_raised_by_take_for_that_key_only():
    made: dict[str, _Made] = {}
    ahead = _lookahead(["a", "b", "c"], 1, made, failing="b")
    ahead.take("a")
    with pytest.raises(ValueError, match="cannot make b"):
        ahead.take("b")
    assert ahead.take("c")[0].key == "c"
    ahead.close()
    assert not any(item.disposed for item in made.values())


def test_close_disposes_what_was_never_taken_and_waits_for_removals():
    made: dict[str, _Made] = {}
    gate, at_gate = threading.Event(), threading.Event()
    ahead = _lookahead(["a", "b", "c", "d"], 1, made, gate=gate, at_gate=at_gate)
    ahead.take("a")  # b is being made (held at the gate); nothing else was asked for
    # On a loaded machine the pool may not have started on b yet, and close() would then
    # cancel it unmade: wait until b's making has begun, which is what this test is about.
    assert at_gate.wait(10)
    removed = threading.Event()
    ahead.remove(lambda: (gate.wait(10), removed.set()))
    threading.Timer(0.2, gate.set).start()
    ahead.close()
    assert removed.is_set()
    assert sorted(made) == ["a", "b"] and made["b"].disposed and not made["a"].disposed
    with pytest.raises(RuntimeError, match="closed"):
        ahead.take("c")


# -- real runs --------------------------------------------------------------------------
def _suite(tmp_path: Path, third_image: str = "") -> Path:
    suite = tmp_path / "tasks"
    for task in (FIRST, SECOND, THIRD):
        shutil.copytree(ROOT / "tasks" / task, suite / task)
    if third_image:
        manifest = suite / THIRD / "task.toml"
        manifest.write_text(manifest.read_text() + f'\n[sandbox]\nimage = "{third_image}"\n')
    return suite


def _ours(client, label: str = "") -> dict[str, dict]:
    """Name -> summary of every endstate container this test process owns (a listing
    without a look into each container, which may be gone by then)."""
    label = label or f"endstate.owner.pid={os.getpid()}"
    return {info["Names"][0].lstrip("/"): info for info in client.api.containers(all=True, filters={"label": label})}


def _run(suite: Path, out: Path, *, jobs: int = 1, extra: dict[str, list[Grader]] | None = None,
         progress=lambda result: None):
    tasks = [load_task(folder) for folder in sorted(suite.iterdir())]
    config = RunConfig(model="scripted/reference", sandbox="docker", jobs=jobs)
    return run_suite(tasks, config, out, suite_root=suite, extra_graders=extra, progress=progress)


def _listing(client, container: str) -> list[str]:
    """What the container's workspace holds, read from outside."""
    stream, _ = client.api.get_archive(container, "/workspace")
    with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as tar:
        return [member.name for member in tar.getmembers() if member.name != "workspace"]


class _Events:
    """The engine's container events, read live while the run goes on: the engine keeps only
    its last 256 events, which a busy engine (other runs beside this one) overwrites within
    a run, so asking afterwards can miss this run's."""

    def __init__(self, client):
        self.seen: list[dict] = []
        self.stream = client.events(decode=True, filters={"type": "container"})
        self.thread = threading.Thread(target=lambda: self.seen.extend(self.stream), daemon=True)
        self.thread.start()

    def until(self, enough, *, tries: int = 40) -> list[dict]:
        """What was seen once `enough(events)` holds (published late on a loaded engine), or at the last try."""
        for _ in range(tries):
            if enough(list(self.seen)):
                break
            time.sleep(0.5)
        self.stream.close()
        return list(self.seen)


@pytest.mark.docker
def test_the_next_sandbox_is_ready_while_a_task_is_graded_and_none_outlives_the_run(tmp_path):
    import docker

    client = docker.from_env()
    seen: dict[str, object] = {}

    def watch_the_next_task(sandbox) -> Verdict:
        """Runs while the first task is graded: the second's sandbox should be up (and empty: its
        task's agent process writes the fixture in)."""
        for name, info in _ours(client).items():
            seen.setdefault("run", info["Labels"][RUN_LABEL])
            if name.startswith(f"endstate-{SECOND}-"):
                seen["next"] = (info["State"], _listing(client, info["Id"]))
        return Verdict.ok("")

    before = set(_ours(client))
    events = _Events(client)
    result = _run(_suite(tmp_path), tmp_path / "out", extra={FIRST: [Grader("test:watch", watch_the_next_task)]})
    assert [(t.task_id, t.outcome) for t in result.tasks] == [(FIRST, "pass"), (SECOND, "pass"), (THIRD, "pass")]
    status, listing = seen["next"]
    assert status == "running" and listing == []
    # Every fixture went in through the agent process's channel: the engine unpacked nothing
    # (an unpack re-runs the daemon's binary), and the run folder kept no copy of it.
    def actions_of(seen_events):
        return [e.get("Action") for e in seen_events
                if e.get("Actor", {}).get("Attributes", {}).get(RUN_LABEL) == seen["run"]]

    actions = actions_of(events.until(lambda got: actions_of(got).count("archive-path") >= 4))
    assert actions.count("archive-path") == 4  # three seals and the look above: the events are seen
    assert "extract-to-dir" not in actions
    assert not list((tmp_path / "out").rglob("fixture.msgpack"))
    assert set(_ours(client)) - before == set()
    assert _ours(client, f"{RUN_LABEL}={seen['run']}") == {}
    client.close()


@pytest.mark.docker
def test_a_missing_image_is_that_tasks_error_and_the_others_pass(tmp_path):
    """The third task's image is there when the run starts (its id goes on the card) and is
    gone by the time its sandbox is made: the first task's grader removes it."""
    import docker

    client = docker.from_env()
    repository, tag = "endstate-test-vanishing", secrets.token_hex(4)
    client.images.get(DEFAULT_IMAGE).tag(repository, tag)

    def remove_the_third_image(sandbox) -> Verdict:
        client.images.remove(f"{repository}:{tag}")
        return Verdict.ok("")

    before = set(_ours(client))
    try:
        result = _run(_suite(tmp_path, f"{repository}:{tag}"), tmp_path / "out",
                      extra={FIRST: [Grader("test:remove", remove_the_third_image)]})
    finally:
        try:
            client.images.remove(f"{repository}:{tag}")
        except docker.errors.ImageNotFound:
            pass
    outcomes = {t.task_id: (t.outcome, t.reason) for t in result.tasks}
    assert outcomes[FIRST] == ("pass", "") and outcomes[SECOND] == ("pass", "")
    assert outcomes[THIRD] == ("error", f"Docker image {repository}:{tag} does not exist here: "
                                        "run `endstate image build` first")
    assert set(_ours(client)) - before == set()
    client.close()


@pytest.mark.docker
@pytest.mark.parametrize("stop", [KeyboardInterrupt, RuntimeError], ids=["ctrl-c", "exception"])
def test_a_run_stopped_midway_leaves_no_container(tmp_path, stop):
    import docker

    client = docker.from_env()
    before = set(_ours(client))
    at_stop: list[str] = []

    def stop_after_the_first(result) -> None:
        at_stop.extend(name for name in _ours(client) if name not in before)
        raise stop("stopped by the test")

    with pytest.raises(stop):
        _run(_suite(tmp_path), tmp_path / "out", progress=stop_after_the_first)
    # Something of the run was alive when it stopped (the next task's sandbox at least).
    assert any(name.startswith((f"endstate-{SECOND}-", f"endstate-{THIRD}-")) for name in at_stop), at_stop
    assert set(_ours(client)) - before == set()
    client.close()
