"""Running a suite on a Ray cluster, on warm endstate slots.

The driver (where `endstate eval --executor ray` runs) starts `jobs` slots on the cluster
(Ray actors, see `_ray_node`), or finds those an earlier run left warm, and hands them the
run's (task, attempt) pairs in batches that shrink as the run nears its end, each picked
evenly over the queue, not from its head (a category's tasks sort together: a batch of the
heaviest would end late), so that slots finish together. Each slot runs its batch with the
local runner and streams every finished attempt back; the driver alone writes the results
folder, through the code a local run uses (`_start`): the run file first, then the results
after every attempt, atomically, so a killed Ray run resumes (`--resume`) as a local one does.

A slot whose process or node died mid-batch is a fault of the machinery: the attempt
it was running is charged one try and run again from scratch on a fresh slot (after
a backoff), the batch's other attempts simply go back in the queue; an attempt that
lost its slot on each of its `--infra-tries` runs ends as `infra_error`.

Slots stay up for `warm_s` seconds without work (then end themselves), so the next
run against the same cluster finds endstate imported and its fork server running.
Their names carry a hash of endstate's code: a run with other code retires them.
Ray is an optional extra: `pip install 'endstate[ray]'`.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import math
import os
import queue
import socket
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from endstate.cassettes import RunMode, cassette_file
from endstate.errors import UserError
from endstate.run._config import RunConfig
from endstate.run._faults import INFRA_ERROR
from endstate.run._ray_events import AttemptDone, AttemptLost, SlotCrashed, SlotEvent, SlotExited, accept, local_paths
from endstate.run._ray_node import NodeBatch, NodeReturn, NodeTask, Slot, pack, task_resources
from endstate.run._results import RunOutcome, RunResult, TaskResult, attempt_stem, write_results
from endstate.run._runner import resolve_graders, run_suite
from endstate.run._start import add_result, begin_run
from endstate.task import Task

__all__ = ["INSTALL_HINT", "WARM_S", "run_suite_on_ray", "suite_runner"]

INSTALL_HINT = "--executor ray needs Ray on this machine and on every node: pip install 'endstate[ray]'"

#: Seconds a slot stays up without work, by default.
WARM_S = 600
NAMESPACE = "endstate"
#: Times a slot is made again (its process or node died) before its share goes to the others.
_SLOT_STARTS = 5
#: A slot (its fork server and agents inherit it) runs at a local run's priority: Ray starts its
#: workers at niceness 15, behind every other process of the node, the containers included.
SLOT_ENV = {"env_vars": {"RAY_worker_niceness": "0"}}


def code_id() -> str:
    """A hash of endstate's code and Ray's version: the slots of other code are not reused."""
    import ray

    root = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256(ray.__version__.encode())
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:12]


class _Pool:
    """The run's slots, made (or found warm) on the cluster."""

    def __init__(self, ray: Any, count: int, warm_s: float) -> None:
        self.ray = ray
        self.warm_s = warm_s
        self.code = code_id()
        self.actor = ray.remote(Slot)
        #: Slots seen up during the run; the others wait for room on the cluster.
        self.up: set[int] = set()
        self._retire_stale()
        self.handles = [self.make(i) for i in range(count)]
        for handle in self.handles if warm_s > 0 else ():  # a slot found warm takes this run's warm time
            handle.keep_warm.remote(warm_s)  # (with none, close() ends it; until then it keeps its own)

    def make(self, index: int) -> Any:
        # Calls run side by side (a share at a time, under the slot's lock), so that a busy slot
        # still says it is up.
        options: dict[str, Any] = dict(name=f"slot-{self.code}-{index}", namespace=NAMESPACE, get_if_exists=True,
                                       max_restarts=0, max_task_retries=0, max_concurrency=4,
                                       runtime_env=SLOT_ENV, **task_resources())
        if self.warm_s > 0:
            options["lifetime"] = "detached"  # outlives this driver; ends itself when idle
        handle = self.actor.options(**options).remote(self.warm_s)
        if index < len(getattr(self, "handles", [])):  # in place of a lost one: up once it says so
            self.handles[index] = handle
            self.up.discard(index)
        return handle

    def _retire_stale(self) -> None:
        """Slots of other endstate code end once their work is done: they would hold the CPUs."""
        for entry in self.ray.util.list_named_actors(all_namespaces=True):
            name = entry["name"]
            if entry["namespace"] == NAMESPACE and name.startswith("slot-") and not name.startswith(f"slot-{self.code}-"):
                try:
                    self.ray.get_actor(name, namespace=NAMESPACE).__ray_terminate__.remote()
                except ValueError:
                    pass  # ended meanwhile

    def close(self) -> None:
        """Slots that never came up (no room on the cluster) are not left waiting for it; with no
        warm time, none stays."""
        for index, handle in enumerate(self.handles):
            if index not in self.up:
                self.ray.kill(handle)
            elif self.warm_s <= 0:
                handle.__ray_terminate__.remote()


class _Queue:
    """The (task, attempt) pairs still to run; batches shrink as the queue empties."""

    def __init__(self, todo: list[tuple[Task, int]], slots: int) -> None:
        self.lock = threading.Lock()
        self.waiting = deque(todo)
        self.slots = slots
        #: Runs each pair lost its slot on.
        self.lost: Counter[tuple[str, int]] = Counter()
        #: Batches sent and not yet over: what they lose comes back to the queue.
        self.out = 0

    def take(self) -> list[tuple[Task, int]] | None:
        """The next batch; [] when the queue is empty for now; None when it is for good."""
        with self.lock:
            if not self.waiting:
                return None if self.out == 0 else []
            task, k = self.waiting[0]
            # A task rerun after its slot was lost goes alone, with the tries it has left.
            size = 1 if self.lost[(task.id, k)] else max(1, math.ceil(len(self.waiting) / self.slots))
            self.out += 1
            picks = {len(self.waiting) * i // size for i in range(size)}
            share = [pair for i, pair in enumerate(self.waiting) if i in picks]
            self.waiting = deque(pair for i, pair in enumerate(self.waiting) if i not in picks)
            return share

    def done(self, given_back: list[tuple[Task, int]]) -> None:
        with self.lock:
            self.waiting.extendleft(reversed(given_back))
            self.out -= 1


class _Driver:
    """Sends batches to the slots (a thread each) and writes what comes back (the calling thread)."""

    def __init__(self, ray: Any, pool: _Pool, config: RunConfig, packs: dict[str, bytes]) -> None:
        self.ray = ray
        self.pool = pool
        self.config = config
        self.packs = packs
        self.events: queue.Queue[SlotEvent] = queue.Queue()
        self.stopping = threading.Event()
        self.running: dict[int, Any] = {}

    def batch(self, pairs: list[tuple[Task, int]], lost: int = 0) -> NodeBatch:
        """The share `pairs` as it travels; `lost`: runs its one task already lost its slot on."""
        config = self.config
        if lost:  # --infra-tries counts every run of a task, whichever fault ended it
            config = msgspec.structs.replace(config, infra=msgspec.structs.replace(
                config.infra, tries=max(1, config.infra.tries - lost)))
        by_task: dict[str, list[int]] = {}
        for task, k in pairs:
            by_task.setdefault(task.id, []).append(k)
        jobs = []
        for task_id, attempts in by_task.items():
            cassettes = []
            for k in attempts if config.mode == RunMode.REPLAY and config.cassettes is not None else []:
                path = cassette_file(config.cassettes, attempt_stem(task_id, k))
                if path.is_file():  # the node reports a missing one
                    cassettes.append((path.name, path.read_bytes()))
            jobs.append(NodeTask(task_id, self.packs[task_id], tuple(attempts), tuple(cassettes)))
        policies = tuple((Path(p).name, Path(p).read_bytes()) for p in config.policy_files)
        return NodeBatch(config, tuple(jobs), policies)

    def serve(self, index: int, work: _Queue) -> None:
        """One slot's thread: batches until the queue is empty; a lost slot is made again."""
        ray, starts = self.ray, 0
        try:
            while not self.stopping.is_set():
                try:
                    if not self._up(index):
                        continue
                except ray.exceptions.RayActorError:
                    starts += 1
                    if starts >= _SLOT_STARTS:
                        return
                    self.pool.make(index)
                    continue
                pairs = work.take()
                if pairs is None:
                    return
                if not pairs:
                    time.sleep(0.2)
                    continue
                if not self._run_batch(index, pairs, work):  # the slot was ending itself, idle
                    starts += 1
                    if starts >= _SLOT_STARTS:
                        return
                    time.sleep(0.5)  # it ends; the next look at it makes one in its place
        except Exception as exc:  # noqa: BLE001 - a bug here must not hang the run: the driver reports it
            self.events.put(SlotCrashed(exc))
        finally:
            self.events.put(SlotExited(index))

    def _up(self, index: int) -> bool:
        """Whether the slot is up, waiting a second at most (a slot the cluster has no room
        for yet stays pending, and its thread must still see the run end)."""
        ready, _ = self.ray.wait([self.pool.handles[index].ready.remote()], timeout=1.0)
        if ready:
            self.ray.get(ready[0])
            self.pool.up.add(index)
        return bool(ready)

    def _run_batch(self, index: int, pairs: list[tuple[Task, int]], work: _Queue) -> bool:
        """Run a share on the slot; False when the slot turned it down (the share goes back, no try charged)."""
        ray = self.ray
        pending, again = list(pairs), []
        stream = self.pool.handles[index].run.remote(self.batch(pairs, work.lost[(pairs[0][0].id, pairs[0][1])]))
        self.running[index] = stream
        try:
            for ref in stream:
                node: NodeReturn = ray.get(ref)
                pending = [(t, k) for t, k in pending if (t.id, k) != (node.result.task_id, node.result.attempt)]
                self.events.put(AttemptDone(node))
            if len(pending) == len(pairs) and not self.stopping.is_set():
                again = pending
                return False
        except (ray.exceptions.RayActorError, ray.exceptions.WorkerCrashedError, ray.exceptions.NodeDiedError,
                ray.exceptions.ObjectLostError) as exc:
            again = self._lost(pending, _why(ray, exc), work)
            if not self.stopping.is_set():
                self.pool.make(index)
        except ray.exceptions.RayError as exc:  # the node raised: these attempts have no result
            for task, k in pending:
                self.events.put(AttemptLost(task, k, _why(ray, exc), infra=False))
        finally:
            self.running.pop(index, None)
            work.done(again)
        return True

    def _lost(self, pending: list[tuple[Task, int]], why: str, work: _Queue) -> list[tuple[Task, int]]:
        """The slot died: the attempt it was running is charged a try; returns what goes back in the queue."""
        if not pending:
            return []
        (task, k), rest = pending[0], pending[1:]
        work.lost[(task.id, k)] += 1
        tries = work.lost[(task.id, k)]
        if tries >= self.config.infra.tries:
            self.events.put(AttemptLost(task, k, why, infra=True))
            return rest
        time.sleep(self.config.infra.backoff_s * 2 ** (tries - 1))
        return [(task, k), *rest]

    def run(self, result: RunResult, todo: list[tuple[Task, int]], out_dir: Path,
            progress: Callable[[TaskResult], None]) -> None:
        slots = len(self.pool.handles)
        work = _Queue(todo, slots)
        threads = [threading.Thread(target=self.serve, args=(i, work), daemon=True) for i in range(slots)]
        for thread in threads:
            thread.start()
        left, alive = len(todo), slots
        local = functools.partial(local_paths, out_dir=out_dir, cassettes=self.config.cassettes)
        try:
            while left and alive:
                event = self.events.get()
                if isinstance(event, SlotExited):
                    alive -= 1
                    continue
                if isinstance(event, SlotCrashed):
                    raise event.error
                if isinstance(event, AttemptDone):
                    task_result = accept(event.node, out_dir, self.config, local)
                    task_result.infra_retries += work.lost[(task_result.task_id, task_result.attempt)]
                else:
                    task_result = TaskResult(event.task.id, event.task.manifest.category.value, attempt=event.attempt,
                                             reason=event.why, outcome=INFRA_ERROR if event.infra else RunOutcome.ERROR)
                    task_result.infra_retries = max(0, work.lost[(event.task.id, event.attempt)] - 1)
                left -= 1
                add_result(result, task_result, out_dir, last=not left)
                progress(task_result)
            for task, k in list(work.waiting) if left else []:  # no slot could be started to run them
                task_result = TaskResult(task.id, task.manifest.category.value, attempt=k, outcome=INFRA_ERROR,
                                         reason=f"no Ray slot could be started for it ({_SLOT_STARTS} tries)")
                add_result(result, task_result, out_dir, last=True)
                progress(task_result)
        except BaseException:
            self.stopping.set()
            for stream in list(self.running.values()):
                self.ray.cancel(stream)  # the slot stops after the attempts under way, removing their sandboxes
            write_results(result, out_dir)
            raise
        finally:  # no thread of the run calls Ray once it returns
            self.stopping.set()
            for thread in threads:
                thread.join(timeout=5)


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise UserError(INSTALL_HINT) from None
    return ray


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
    warm_s: float = WARM_S,
) -> RunResult:
    """`run_suite`, on `config.jobs` slots of the Ray cluster at `address` (None: RAY_ADDRESS,
    else a Ray instance started here, and stopped at the end). `resume` as for `run_suite`."""
    ray = _import_ray()
    tasks = sorted(tasks, key=lambda t: t.id)
    for task in tasks:
        resolve_graders(task)  # a grader that breaks the contract fails here, before the cluster is asked
    if config.agent:
        raise UserError(f"--agent {config.agent} with --executor ray is not supported yet: use the local executor")
    out_dir = Path(out_dir)
    connected_here = _connect(ray, address)
    pool = None
    try:
        pool = _Pool(ray, max(1, config.jobs), warm_s if address or os.environ.get("RAY_ADDRESS") else 0)
        packs = {task.id: pack(task.root) for task in tasks}
        card = _describe(ray, pool, config, tuple(NodeTask(t.id, packs[t.id]) for t in tasks), card_extra or {})
        result, todo = begin_run(out_dir, card, config, tasks, resume=resume, progress=progress)
        _Driver(ray, pool, config, packs).run(result, todo, out_dir, progress)
        return result
    finally:
        if pool is not None:
            pool.close()
        if connected_here:
            ray.shutdown()


def _describe(ray: Any, pool: _Pool, config: RunConfig, tasks: tuple[NodeTask, ...],
              card_extra: dict[str, Any]) -> Any:
    """The run's card, made on the first slot to be up (as a local run on its node would make it)."""
    waiting = {handle.ready.remote(): (index, handle) for index, handle in enumerate(pool.handles)}
    while waiting:
        (ready,), _ = ray.wait(list(waiting), num_returns=1)
        index, handle = waiting.pop(ready)
        try:
            ray.get(ready)
        except ray.exceptions.RayActorError:
            continue
        pool.up.add(index)
        try:
            return ray.get(handle.describe.remote(config, tasks, card_extra))
        except ray.exceptions.RayActorError:
            continue  # lost meanwhile: the next slot to be up makes the card
        except ray.exceptions.RayTaskError as exc:
            cause = exc.cause if exc.cause is not None else exc
            if isinstance(cause, UserError):
                raise cause from None
            raise
    raise UserError("no Ray slot could be started on the cluster: see `ray status` and the Ray logs")


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
    """One line on why a batch gave no result."""
    if isinstance(exc, ray.exceptions.RayTaskError) and exc.cause is not None:
        return f"on the node: {type(exc.cause).__name__}: {exc.cause}"
    lines = str(exc).strip().splitlines()
    return f"the Ray slot running it was lost: {type(exc).__name__}" + (f": {lines[0]}" if lines else "")


def suite_runner(executor: str, ray_address: str | None = None, warm_s: float = WARM_S) -> Callable[..., RunResult]:
    """The function that runs a suite with `executor` ("local" or "ray"); takes run_suite's arguments.

    Asking for Ray where it is not installed fails here, before anything runs."""
    if executor == "local":
        return run_suite
    if executor != "ray":
        raise UserError(f"unknown executor {executor!r}: use local or ray")
    _import_ray()
    return functools.partial(run_suite_on_ray, address=ray_address, warm_s=warm_s)

