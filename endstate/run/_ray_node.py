"""What a Ray node does for a run: an endstate slot, kept warm between runs.

A slot is a Ray actor holding one CPU and the memory of one task (see
`task_resources`). It runs a share of a run (a batch of (task, attempt) pairs) with the
local runner, `run_suite`, in a scratch folder, and streams each attempt's result and
files back as soon as it is finished. Its process keeps what a run pays for once
(endstate and the SDKs imported, the agents' fork server started, the Docker client's
API version learnt, each task folder unpacked: tasks are read, never written) for the
next batch and the next run; a slot nobody used for its idle time ends itself. The task
folders, cassettes and policy files travel with the batch, so a node needs endstate,
Docker and the sandbox image but no shared file system.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import io
import os
import queue
import shutil
import tarfile
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec

from endstate.cassettes import RunMode, cassette_file
from endstate.run._config import RunConfig, run_card
from endstate.run._folder import RunFolder
from endstate.run._results import RunCard, TaskResult, attempt_stem
from endstate.sandbox import DockerHandle, SandboxHandle, SandboxLimits
from endstate.task import Task, load_task

__all__ = ["NodeTask", "NodeBatch", "NodeReturn", "Slot", "task_resources", "pack", "SCRATCH_PREFIX", "sweep_dead_attempts"]

SCRATCH_PREFIX = "endstate-ray-"
#: A slot's unpacked task folders (a folder of the slot's own, removed with it).
TASKS_PREFIX = "endstate-raytasks-"


class NodeTask(msgspec.Struct, frozen=True):
    task_id: str
    #: The task folder as a tar archive.
    files: bytes
    #: Which of its attempts to run.
    attempts: tuple[int, ...] = (0,)
    #: The cassettes to replay, by file name, when replaying.
    cassettes: tuple[tuple[str, bytes], ...] = ()


class NodeBatch(msgspec.Struct, frozen=True):
    config: RunConfig
    tasks: tuple[NodeTask, ...]
    #: Extra permission-rule files, by name, in the order given.
    policy_files: tuple[tuple[str, bytes], ...] = ()


class NodeReturn(msgspec.Struct, frozen=True):
    result: TaskResult
    #: The attempt's files of the node's results folder (transcript, diff, work files), by relative path.
    files: dict[str, bytes]
    #: The recorded cassette, when recording.
    cassette: bytes | None
    #: Scratch paths of the node, to be replaced by the driver's own in what comes back.
    node_out: str
    node_cassettes: str


def task_resources() -> dict[str, float]:
    """What one slot holds: a CPU and memory for two sandbox containers (the agent's, then
    the grading one while the agent's is still up) plus the agent process."""
    memory_mb = 2 * SandboxLimits().memory_mb + 512
    return {"num_cpus": 1, "memory": memory_mb * 1024 * 1024}


def pack(folder: Path) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        tar.add(folder, arcname=folder.name, filter=lambda info: None if "__pycache__" in info.name else info)
    return buffer.getvalue()


class Slot:
    """One slot (made a Ray actor by the driver). `idle_s`: seconds without work after which it ends."""

    def __init__(self, idle_s: float) -> None:
        sweep_dead_attempts()  # a slot made in place of one that died cleans up after it
        self.busy = threading.Lock()
        self.last_used = time.monotonic()
        self.idle_s = idle_s
        #: Set once the slot has decided to end (idle): a share sent from then on is turned down.
        self.ending = False
        #: Task folders unpacked on this node, by the sha256 of their archive: unpacking the 22
        #: tasks costs a second of CPU, which a warm slot pays once.
        self.tasks = Path(tempfile.mkdtemp(prefix=TASKS_PREFIX))
        (self.tasks / "owner").write_text(str(os.getpid()))  # a dead slot's are swept with its scratch
        atexit.register(shutil.rmtree, self.tasks, ignore_errors=True)
        threading.Thread(target=self._end_when_idle, daemon=True).start()

    def ready(self) -> int:
        return os.getpid()

    def keep_warm(self, idle_s: float) -> None:
        """From now on, end after `idle_s` (> 0) seconds without work."""
        self.idle_s = idle_s
        self.last_used = time.monotonic()

    def describe(self, config: RunConfig, tasks: tuple[NodeTask, ...], card_extra: dict[str, Any]) -> RunCard:
        """The run's card, as a local run on this node would write it."""
        from endstate.agents import find_agent
        from endstate.models import parse_spec
        from endstate.run._runner import resolve_graders
        from endstate.sandbox import resolve_backend

        with self.busy, tempfile.TemporaryDirectory(prefix=SCRATCH_PREFIX) as scratch:
            loaded = [load_task(self._folder(task, Path(scratch))) for task in tasks]
            backend = resolve_backend(config.sandbox)
            graders = {t.id: resolve_graders(t) for t in loaded}
            return run_card(config, loaded, backend, parse_spec(config.model)[0], graders, card_extra,
                            agent=find_agent(config.agent))

    def run(self, batch: NodeBatch) -> Iterator[NodeReturn]:
        """Run the batch's attempts; yield each one's result and files as it finishes.
        Cancelled (ray.cancel), it stops after the attempts under way, removing their sandboxes.
        A slot ending itself yields nothing: its driver sends the share again to a new slot."""
        import ray

        with self.busy:
            if self.ending:
                return
            try:
                sweep_dead_attempts()
                with tempfile.TemporaryDirectory(prefix=SCRATCH_PREFIX) as scratch:
                    root = Path(scratch)
                    (root / "owner").write_text(str(os.getpid()))
                    tasks, config = _lay_out(batch, root, self._folder)
                    out, cassettes = root / "out", root / "cassettes"
                    finished: queue.Queue[TaskResult | BaseException | None] = queue.Queue()
                    stop = threading.Event()
                    runner = threading.Thread(target=_run_share, args=(tasks, config, batch, root, finished, stop))
                    runner.start()
                    try:
                        while True:
                            try:
                                item = finished.get(timeout=0.5)
                            except queue.Empty:
                                if ray.get_runtime_context().is_canceled():
                                    stop.set()
                                continue
                            if item is None:
                                break
                            if isinstance(item, BaseException):
                                raise item
                            yield _node_return(item, out, cassettes, config)
                    finally:
                        stop.set()
                        runner.join()
            finally:
                self.last_used = time.monotonic()

    def _folder(self, task: NodeTask, suite: Path) -> Path:
        """The task's folder, as `suite`/<task id> (a link to the one unpacked once for the slot)."""
        unpacked = self.tasks / hashlib.sha256(task.files).hexdigest()
        if not unpacked.is_dir():
            self.tasks.mkdir(exist_ok=True)  # removed when the slot decided to end
            partial = Path(tempfile.mkdtemp(dir=self.tasks))
            _unpack(task.files, partial)
            partial.rename(unpacked)  # never half there, if the slot dies meanwhile
        (suite / task.task_id).symlink_to(unpacked / task.task_id, target_is_directory=True)
        return suite / task.task_id

    def _end_when_idle(self) -> None:
        import ray

        while True:
            time.sleep(min(self.idle_s, 10.0) if self.idle_s > 0 else 10.0)
            if not self._idle() or not self.busy.acquire(blocking=False):
                continue
            try:  # between two shares: none starts from now on (the lock is not kept, or the end would wait for it)
                self.ending = self._idle()
                if self.ending:
                    shutil.rmtree(self.tasks, ignore_errors=True)
            finally:
                self.busy.release()
            if self.ending:
                # Only an actor ends itself: a slot made in place (a test) must not start Ray, whose
                # driver then outlives its cluster and ends the process that made it.
                if ray.is_initialized() and ray.get_runtime_context().get_actor_id():
                    ray.get_runtime_context().current_actor.__ray_terminate__.remote()
                return

    def _idle(self) -> bool:
        return self.idle_s > 0 and time.monotonic() - self.last_used > self.idle_s


class _Stopped(Exception):
    """The driver cancelled the batch: raised between two attempts."""


def _run_share(tasks: list[Task], config: RunConfig, batch: NodeBatch, root: Path,
               finished: queue.Queue, stop: threading.Event) -> None:
    from endstate.run._runner import run_suite

    def progress(result: TaskResult) -> None:
        finished.put(result)
        if stop.is_set():
            raise _Stopped

    only = {(task.task_id, k) for task in batch.tasks for k in task.attempts}
    try:
        run_suite(tasks, config, root / "out", suite_root=root / "suite", progress=progress, only=only)
        finished.put(None)
    except _Stopped:
        finished.put(None)
    except BaseException as exc:  # noqa: BLE001 - handed to the batch, which raises it to the driver
        finished.put(exc)


def _unpack(data: bytes, into: Path) -> Path:
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(into, filter="tar")
    return into


def _lay_out(batch: NodeBatch, root: Path, folder_of: Callable[[NodeTask, Path], Path]) -> tuple[list[Task], RunConfig]:
    """The batch's task folders (`folder_of`), cassettes and policy files in `root`; the run's config there."""
    suite, cassettes, policies = root / "suite", root / "cassettes", root / "policies"
    for folder in (suite, cassettes, policies):
        folder.mkdir()
    tasks = []
    for task in batch.tasks:
        tasks.append(load_task(folder_of(task, suite)))
        for name, data in task.cassettes:
            (cassettes / name).write_bytes(data)
    policy_paths = []
    for index, (name, data) in enumerate(batch.policy_files):
        path = policies / f"{index}-{name}"
        path.write_bytes(data)
        policy_paths.append(str(path))
    config = msgspec.structs.replace(batch.config, jobs=1, policy_files=tuple(policy_paths),
                                     cassettes=str(cassettes) if batch.config.cassettes is not None else None)
    return tasks, config


def _node_return(result: TaskResult, out: Path, cassettes: Path, config: RunConfig) -> NodeReturn:
    stem = attempt_stem(result.task_id, result.attempt)
    files = {path.relative_to(out).as_posix(): path.read_bytes() for path in RunFolder(out).attempt_files(stem)}
    recorded = cassette_file(cassettes, stem)
    cassette = recorded.read_bytes() if config.mode == RunMode.RECORD and recorded.is_file() else None
    return NodeReturn(result, files, cassette, str(out), str(cassettes))


def sweep_dead_attempts() -> None:
    """Remove what batches killed on this node left: a slot that died mid-task never ran its
    cleanup, so its sandbox containers and scratch folder are still here."""
    for folder in [*Path(tempfile.gettempdir()).glob(f"{SCRATCH_PREFIX}*"),
                   *Path(tempfile.gettempdir()).glob(f"{TASKS_PREFIX}*")]:
        try:
            owner = int((folder / "owner").read_text())
        except (OSError, ValueError):
            continue
        if _alive(owner):
            continue
        for job in folder.glob("out/work/*/job.json"):
            with contextlib.suppress(Exception):  # best effort: a half-written job has no sandbox yet
                _remove_container(msgspec.json.decode(job.read_bytes(), type=_JobSandbox).sandbox)
        shutil.rmtree(folder, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class _JobSandbox(msgspec.Struct):
    """The one field of a job file a sweep reads."""

    sandbox: SandboxHandle


def _remove_container(handle: SandboxHandle) -> None:
    if not isinstance(handle, DockerHandle) or not handle.container:
        return
    from endstate.sandbox import LABEL, connect

    client = connect()
    try:
        container = client.containers.get(handle.container)
        if LABEL in container.labels:  # only ever one of endstate's own sandboxes
            container.remove(force=True)
    finally:
        client.close()
