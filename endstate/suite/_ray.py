"""Running a suite on a Ray cluster: one Ray task per endstate task.

Each Ray task runs the whole local pipeline for its task on whichever node Ray picks
(sandbox, agent process, seal, graders; a checkpoint task's kill and resume happen
there too) by calling `run_suite` on that one task in a scratch folder. The task
folder, its cassette and any extra policy files travel with the Ray task, so nodes
need endstate, Docker and the sandbox image but no shared file system. What the node
produced (the task's result, transcript, work files and, when recording, cassette)
comes back as bytes; the driver alone writes into the results folder, in the same
layout a local run leaves. A Ray task whose worker or node died is retried by Ray,
and since only a returned value is written, each task is recorded once.

Ray is an optional extra: `pip install 'endstate[ray]'`.
"""

from __future__ import annotations

import contextlib
import functools
import io
import logging
import os
import shutil
import socket
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from endstate import __version__
from endstate.errors import UserError
from endstate.models import parse_spec
from endstate.sandbox import SandboxLimits
from endstate.task import Task, load_task
from endstate.suite._results import RunCard, RunResult, TaskResult, write_results
from endstate.suite._config import RunConfig, task_pack_hash
from endstate.suite._faults import INFRA_ERROR
from endstate.suite._runner import resolve_graders, run_suite

__all__ = ["INSTALL_HINT", "RAY_RETRIES", "task_resources", "run_suite_on_ray", "suite_runner"]

INSTALL_HINT = "--executor ray needs Ray on this machine and on every node: pip install 'endstate[ray]'"

_SCRATCH_PREFIX = "endstate-ray-"

#: How often Ray re-runs a task whose worker process or node died.
RAY_RETRIES = 3


class _NodeJob(msgspec.Struct, frozen=True):
    task_id: str
    #: The task folder as a tar archive.
    task_files: bytes
    config: RunConfig
    #: The cassette to replay, when replaying.
    cassette: bytes | None = None
    #: Extra permission-rule files, by name, in the order given.
    policy_files: tuple[tuple[str, bytes], ...] = ()


class _NodeReturn(msgspec.Struct, frozen=True):
    result: RunResult
    #: Files of the node's results folder (transcript, work files), by relative path.
    files: dict[str, bytes]
    #: The recorded cassette, when recording.
    cassette: bytes | None
    #: Scratch paths of the node, to be replaced by the driver's own in what comes back.
    node_out: str
    node_cassettes: str


def task_resources(task: Task) -> dict[str, float]:
    """What one task holds while it runs: a CPU and memory for two sandbox containers
    (the agent's, then the grading one while the agent's is still up) plus the agent process."""
    memory_mb = 2 * SandboxLimits().memory_mb + 512
    return {"num_cpus": 1, "memory": memory_mb * 1024 * 1024}


# -- on the node -------------------------------------------------------------------------
def run_on_node(job: _NodeJob) -> _NodeReturn:
    """Run one task exactly as a local run would, in a scratch folder, and return its files."""
    _sweep_dead_attempts()
    with tempfile.TemporaryDirectory(prefix=_SCRATCH_PREFIX) as scratch:
        root = Path(scratch)
        (root / "owner").write_text(str(os.getpid()))
        suite = root / "suite"
        with tarfile.open(fileobj=io.BytesIO(job.task_files)) as tar:
            tar.extractall(suite, filter="tar")
        cassettes = root / "cassettes"
        cassettes.mkdir()
        if job.cassette is not None:
            (cassettes / f"{job.task_id}.cassette").write_bytes(job.cassette)
        policies = root / "policies"
        policies.mkdir()
        policy_paths = []
        for index, (name, data) in enumerate(job.policy_files):
            path = policies / f"{index}-{name}"
            path.write_bytes(data)
            policy_paths.append(str(path))
        config = msgspec.structs.replace(
            job.config, jobs=1, policy_files=tuple(policy_paths),
            cassettes=str(cassettes) if job.config.cassettes is not None else None)
        out = root / "out"
        result = run_suite([load_task(suite / job.task_id)], config, out, suite_root=suite)
        files = {path.relative_to(out).as_posix(): path.read_bytes()
                 for path in sorted(out.rglob("*")) if path.is_file() and path.name != "results.json"}
        recorded = cassettes / f"{job.task_id}.cassette"
        cassette = recorded.read_bytes() if config.mode == "record" and recorded.is_file() else None
        return _NodeReturn(result, files, cassette, str(out), str(cassettes))


def _sweep_dead_attempts() -> None:
    """Remove what attempts killed on this node left: a worker that died mid-task never
    ran its cleanup, so its sandbox container and scratch folder are still here."""
    for folder in Path(tempfile.gettempdir()).glob(f"{_SCRATCH_PREFIX}*"):
        try:
            owner = int((folder / "owner").read_text())
        except (OSError, ValueError):
            continue
        if _alive(owner):
            continue
        for job in folder.glob("out/work/*/job.json"):
            with contextlib.suppress(Exception):  # best effort: a half-written job has no sandbox yet
                _remove_container(msgspec.json.decode(job.read_bytes())["sandbox"])
        shutil.rmtree(folder, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove_container(handle: dict[str, Any]) -> None:
    if handle.get("backend") != "docker" or not handle.get("container"):
        return
    from endstate.sandbox import LABEL, connect

    client = connect()
    try:
        container = client.containers.get(handle["container"])
        if LABEL in container.labels:  # only ever one of endstate's own sandboxes
            container.remove(force=True)
    finally:
        client.close()


# -- on the driver -----------------------------------------------------------------------
def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise UserError(INSTALL_HINT) from None
    return ray


def _pack(folder: Path) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        tar.add(folder, arcname=folder.name, filter=lambda info: None if "__pycache__" in info.name else info)
    return buffer.getvalue()


def _node_job(task: Task, config: RunConfig) -> _NodeJob:
    cassette = None
    if config.mode == "replay" and config.cassettes is not None:
        path = Path(config.cassettes) / f"{task.id}.cassette"
        cassette = path.read_bytes() if path.is_file() else None  # the node reports the missing file
    policies = tuple((Path(p).name, Path(p).read_bytes()) for p in config.policy_files)
    return _NodeJob(task.id, _pack(task.root), config, cassette, policies)


class _Driver:
    """Writes what the nodes send back, as a local run would have written it."""

    def __init__(self, tasks: list[Task], config: RunConfig, out_dir: Path,
                 card_extra: dict[str, Any] | None) -> None:
        self.tasks = tasks
        self.config = config
        self.out_dir = out_dir
        self.card_extra = card_extra or {}
        self.task_images: dict[str, str] = {}
        self.result = RunResult(self._card(None), [])

    def _card(self, node_card: RunCard | None) -> RunCard:
        config = self.config
        # What the node saw of its one task; the run's card covers every task.
        images = {**(node_card.task_images if node_card else {}), **self.task_images}
        overrides = dict(
            task_pack_hash=task_pack_hash(self.tasks, images),
            tasks=len(self.tasks),
            graders={t.id: tuple(g.short_name for g in resolve_graders(t)) for t in self.tasks},
            task_images=images,
            replay_from=config.cassettes or "" if config.mode == "replay" else "",
            impossible=config.impossible or msgspec.UNSET,
            **self.card_extra,
        )
        if node_card is not None:  # what the node saw of its sandbox (backend, image id) holds for all
            return msgspec.structs.replace(node_card, **overrides)
        return RunCard(  # no node answered: the card says what was asked for
            endstate_version=__version__, model=config.model, provider=parse_spec(config.model)[0],
            temperature=config.settings.temperature, seed=config.settings.seed,
            retry_ceiling=config.settings.max_retries, tool_choice=config.settings.tool_choice,
            network_policy="none", sandbox_backend=config.sandbox, image=config.image, image_id="",
            mode=config.mode, match=config.match if config.mode == "replay" else "",
            guards_disabled=tuple(n for n in type(config.guards).__struct_fields__ if not getattr(config.guards, n)),
            infra_tries=config.infra.tries, **overrides)

    def _local(self, data: bytes, node: _NodeReturn) -> bytes:
        data = data.replace(node.node_out.encode(), str(self.out_dir).encode())
        return data.replace(node.node_cassettes.encode(), str(self.config.cassettes).encode())

    def accept(self, node: _NodeReturn) -> TaskResult:
        (task_result,) = node.result.tasks
        self.task_images.update(node.result.card.task_images)
        self.result.card = self._card(node.result.card)
        task_result.reason = self._local(task_result.reason.encode(), node).decode()
        for relative, data in node.files.items():
            path = self.out_dir / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(self._local(data, node))
        if node.cassette is not None and self.config.cassettes is not None:
            (Path(self.config.cassettes) / f"{task_result.task_id}.cassette").write_bytes(node.cassette)
        return self.record(task_result)

    def failed(self, task: Task, reason: str, *, lost: bool = False) -> TaskResult:
        """A task no node returned a result for; `lost`: its worker or node died (each of Ray's
        retries), a fault of the machinery, unscored like any other (see `_faults`)."""
        return self.record(TaskResult(task.id, task.manifest.category.value,
                                      outcome=INFRA_ERROR if lost else "error", reason=reason))

    def record(self, task_result: TaskResult) -> TaskResult:
        self.result.tasks.append(task_result)
        self.result.tasks.sort(key=lambda r: r.task_id)
        write_results(self.result, self.out_dir)
        return task_result


def run_suite_on_ray(
    tasks: list[Task],
    config: RunConfig,
    out_dir: Path,
    *,
    suite_root: Path,
    address: str | None = None,
    progress: Callable[[TaskResult], None] = lambda r: None,
    card_extra: dict[str, Any] | None = None,
    resume: bool = False,
) -> RunResult:
    """`run_suite`, with each task run as a Ray task on the cluster at `address`
    (None: RAY_ADDRESS, else a Ray instance started here). At most `config.jobs` tasks
    are in flight; Ray places them by their declared resources."""
    ray = _import_ray()
    tasks = sorted(tasks, key=lambda t: t.id)
    for task in tasks:
        resolve_graders(task)  # a grader that breaks the contract fails here, before the cluster is asked
    out_dir = Path(out_dir)
    driver = _Driver(tasks, config, out_dir, card_extra)
    if config.attempts > 1 or resume:
        raise UserError(f"{'--attempts' if config.attempts > 1 else '--resume'} with --executor ray is not supported "
                        "yet: use the local executor for it")
    if config.agent:
        raise UserError(f"--agent {config.agent} with --executor ray is not supported yet: use the local executor")
    connected_here = _connect(ray, address)
    remote = ray.remote(max_retries=RAY_RETRIES, retry_exceptions=False)(run_on_node)
    waiting = list(tasks)
    running: dict[Any, Task] = {}
    try:
        while waiting or running:
            while waiting and len(running) < max(1, config.jobs):
                task = waiting.pop(0)
                running[remote.options(**task_resources(task)).remote(_node_job(task, config))] = task
            (ref,), _ = ray.wait(list(running), num_returns=1)
            task = running.pop(ref)
            try:
                task_result = driver.accept(ray.get(ref))
            except ray.exceptions.RayError as exc:
                lost = isinstance(exc, (ray.exceptions.WorkerCrashedError, ray.exceptions.NodeDiedError))
                task_result = driver.failed(task, _why(ray, exc), lost=lost)
            progress(task_result)
    except KeyboardInterrupt:
        for ref in running:
            ray.cancel(ref)  # not forced: the node's run_suite removes its sandbox on the way out
        write_results(driver.result, out_dir)
        raise
    finally:
        if connected_here:
            ray.shutdown()
    if not driver.result.tasks:
        write_results(driver.result, out_dir)
    return driver.result


def _connect(ray: Any, address: str | None) -> bool:
    """Join the cluster (or start a Ray instance here); True when this call connected."""
    if ray.is_initialized():
        return False
    options: dict[str, Any] = {"logging_level": logging.WARNING, "log_to_driver": False, "configure_logging": False}
    target = address or os.environ.get("RAY_ADDRESS")
    if not target:
        options["include_dashboard"] = False  # only a new instance takes this
    else:
        _check_reachable(target)
    try:
        ray.init(address=address, **options)
    except ConnectionError as exc:
        raise UserError(f"cannot reach the Ray cluster at {address or os.environ.get('RAY_ADDRESS')}: {exc}; "
                        "check --ray-address (host:port of the head node, or 'auto' on a node)") from None
    return True


def _check_reachable(address: str) -> None:
    """Fail in seconds on a head that does not answer (Ray itself keeps retrying for minutes)."""
    host, sep, port = address.rpartition(":")
    if not sep or "://" in address or not port.isdigit():
        return  # "auto", "ray://..." and the like: Ray resolves those itself
    try:
        socket.create_connection((host, int(port)), timeout=10).close()
    except OSError as exc:
        raise UserError(f"cannot reach the Ray head at {address}: {exc.strerror or exc}; check --ray-address "
                        "(host:port of the head node, as `ray start --head` printed it)") from None


def _why(ray: Any, exc: Exception) -> str:
    """One line on why a Ray task gave no result."""
    if isinstance(exc, ray.exceptions.RayTaskError) and exc.cause is not None:
        return f"on the node: {type(exc.cause).__name__}: {exc.cause}"
    lines = str(exc).strip().splitlines()
    lost = isinstance(exc, (ray.exceptions.WorkerCrashedError, ray.exceptions.NodeDiedError))
    return (f"ray: {type(exc).__name__}" + (f" after {RAY_RETRIES} retries" if lost else "")
            + (f": {lines[0]}" if lines else ""))


def suite_runner(executor: str, ray_address: str | None = None) -> Callable[..., RunResult]:
    """The function that runs a suite with `executor` ("local" or "ray"); takes run_suite's arguments.

    Asking for Ray where it is not installed fails here, before anything runs."""
    if executor == "local":
        return run_suite
    if executor != "ray":
        raise UserError(f"unknown executor {executor!r}: use local or ray")
    _import_ray()
    return functools.partial(run_suite_on_ray, address=ray_address)
