"""Running a suite: per task a fresh sandbox, the agent in its own process, seal,
stage the held-out tests, grade, check `requires`.

Tasks run in parallel threads (`jobs`); each thread only orchestrates, the agent
itself runs in a child process. One task's error never stops the others, and the
results file is rewritten after every task so an interrupted run keeps what finished.
"""

from __future__ import annotations

import contextlib
import hashlib
import multiprocessing
import multiprocessing.connection
import os
import shutil
import signal
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any

import msgspec

from endstate import __version__
from endstate.agent._normalise import normalise_output
from endstate.agent._state import Counters, Guards
from endstate.agent._worker import KILL_MARKER, AgentJob, AgentOutcome, CassetteJob, forked_main
from endstate.errors import EndstateError, UserError
from endstate.grading import Grader, Outcome, Verdict, resolve, run_grader
from endstate.models import RunSettings, parse_spec
from endstate.sandbox import DEFAULT_IMAGE, open_sandbox, resolve_backend, seal
from endstate.sandbox._tree import VCS_DIRS, load_dir
from endstate.suite._manifest import Task
from endstate.suite._task_sandbox import own_image_ids, task_sandbox
from endstate.suite._results import GraderVerdict, RunCard, RunResult, TaskResult, write_results
from endstate.sandbox._timed import TimedSandbox

__all__ = ["RunConfig", "run_suite", "task_pack_hash", "model_slug", "check_requires"]


#: Agent workers fork from a server that imported these once (see _Suite._spawn).
_FORKS = multiprocessing.get_context("forkserver")
_PRELOAD = ["endstate.agent._worker", "endstate.agent._loop", "endstate.models._openai",
            "endstate.models._anthropic", "endstate.cassettes", "endstate.sandbox"]


def _recv(conn: multiprocessing.connection.Connection) -> object:
    try:
        return conn.recv()
    except EOFError:
        return None


class RunConfig(msgspec.Struct, frozen=True):
    model: str
    settings: RunSettings = RunSettings()
    base_url: str | None = None
    sandbox: str = "auto"
    image: str = DEFAULT_IMAGE
    jobs: int = 1
    guards: Guards = Guards()
    #: "live" (no cassette), "record" or "replay".
    mode: str = "live"
    cassettes: str | None = None
    match: str = "strict"
    overwrite: bool = False
    policy_files: tuple[str, ...] = ()


def model_slug(spec: str) -> str:
    return spec.replace("/", "-").replace(":", "-")


def task_pack_hash(tasks: list[Task], images: dict[str, str] | None = None) -> str:
    """sha256 over the tasks' contents and, for tasks with their own image, that image's id."""
    digest = hashlib.sha256()
    for task in sorted(tasks, key=lambda t: t.id):
        digest.update(f"{task.id}:{task.content_hash()}\n".encode())
        if images and task.id in images:
            digest.update(f"{task.id}:image:{images[task.id]}\n".encode())
    return digest.hexdigest()


def check_requires(task: Task, counters: Counters) -> list[str]:
    violations = []
    for name, bound in task.manifest.requires.bounds().items():
        value = getattr(counters, name)
        if bound.min is not None and value < bound.min:
            violations.append(f"{name} = {value}, the task requires at least {bound.min}")
        if bound.max is not None and value > bound.max:
            violations.append(f"{name} = {value}, the task allows at most {bound.max}")
    return violations


def _leaked_history(task: Task, sealed_paths: list[str]) -> list[str]:
    """Files of the fixture's own VCS folders that are in the end state."""
    fixture = task.root / "fixture"
    history = {
        path.relative_to(fixture).as_posix()
        for vcs in VCS_DIRS for folder in fixture.rglob(vcs) if folder.is_dir()
        for path in folder.rglob("*") if path.is_file()
    }
    return sorted(history.intersection(sealed_paths))


def resolve_graders(task: Task) -> list[Grader]:
    """Resolve every grader of a task before anything runs (raises GraderContractError)."""
    from endstate.errors import GraderContractError

    graders = []
    for spec in task.manifest.graders:
        try:
            graders.append(resolve(spec.name, spec.args))
        except GraderContractError as exc:
            raise GraderContractError(f"task {task.id}: {exc}") from None
    return graders


class _Suite:
    """State shared by the threads of one run."""

    def __init__(self, config: RunConfig, out_dir: Path, backend: str,
                 progress: Callable[[TaskResult], None]) -> None:
        self.config = config
        self.out_dir = out_dir
        self.backend = backend
        self.progress = progress
        self.cancelled = threading.Event()
        self.lock = threading.Lock()
        self.procs: set[multiprocessing.process.BaseProcess] = set()
        self.base_urls: dict[str, str] = {}

    # -- one task ----------------------------------------------------------------
    def run_task(self, task: Task, graders: list[Grader]) -> TaskResult:
        started = time.monotonic()
        result = TaskResult(task.id, task.manifest.category.value, outcome="error")
        try:
            self._run_task(task, graders, result)
        except UserError as exc:
            result.outcome, result.reason = "error", str(exc)
        except EndstateError as exc:
            result.outcome, result.reason = "error", f"{type(exc).__name__}: {exc}"
        except Exception as exc:  # never lose the other tasks' results
            result.outcome, result.reason = "error", f"harness bug: {type(exc).__name__}: {exc}"
        result.wall_s = round(time.monotonic() - started, 3)
        return result

    def _run_task(self, task: Task, graders: list[Grader], result: TaskResult) -> None:
        config = self.config
        guards = config.guards
        fixture = load_dir(task.root / "fixture", prune_vcs=guards.vcs_pruning, what=f"task {task.id} fixture")
        holdout = task.holdout() if (task.root / "holdout").is_dir() else {}
        where = task_sandbox(task, self.backend, config.image)
        live = open_sandbox(self.backend, image=where.image, limits=where.limits, name_hint=task.id)
        sandbox = TimedSandbox(live)
        with live:
            sandbox.put_tree(fixture)
            outcome = self._run_agent(task, live)
            result.stop_reason = outcome.stop_reason
            result.counters = outcome.counters
            result.unplayed = outcome.unplayed
            if outcome.divergence:
                result.outcome, result.reason = "divergence", outcome.divergence
                return
            if config.mode == "replay" and config.match == "strict" and outcome.unplayed:
                result.outcome = "divergence"
                result.reason = (f"{outcome.unplayed} recorded interaction(s) were never played: the run asked "
                                 "the model less than the recording did (see `endstate cassette show`)")
                return
            if outcome.stop_reason in ("model_error", "harness_error"):
                result.outcome, result.reason = "error", f"{outcome.stop_reason}: {outcome.detail}"
                return
            if guards.seal_before_holdout:
                sealed = seal(sandbox, fixture)
                sandbox.put_tree(holdout)
            else:  # mutant: the end state now includes files the harness put there
                sandbox.put_tree(holdout)
                sealed = seal(sandbox, fixture)
            result.tree_hash = sealed.tree_hash
            leaked = _leaked_history(task, sealed.paths())
            if leaked:
                result.outcome, result.failing_grader = "error", "contamination"
                result.reason = (f"the fixture's version-control history reached the sandbox ({leaked[0]}, "
                                 f"{len(leaked)} file(s)): the run could read answers from it")
                return
            # Reasons quote test output; normalised like tool output so identical runs read the same.
            verdicts = [(g.short_name, msgspec.structs.replace(v, reason=normalise_output(v.reason)))
                        for g in graders for v in [run_grader(g, sealed)]]
            result.sandbox_s = round(sandbox.seconds + outcome.sandbox_s, 3)
        if not guards.grader_errors:  # mutant: a grader that raised counts as a pass
            verdicts = [(n, Verdict.ok(v.reason) if v.outcome is Outcome.ERROR else v) for n, v in verdicts]
        result.verdicts = [GraderVerdict(n, v.outcome.value, v.reason) for n, v in verdicts]
        result.requires_violations = check_requires(task, result.counters)
        errors = [(n, v) for n, v in verdicts if v.outcome is Outcome.ERROR]
        failures = [(n, v) for n, v in verdicts if v.outcome is Outcome.FAIL]
        if errors:
            result.outcome, result.failing_grader, result.reason = "error", errors[0][0], errors[0][1].reason
        elif failures:
            result.outcome, result.failing_grader, result.reason = "fail", failures[0][0], failures[0][1].reason
        elif result.requires_violations:
            result.outcome, result.failing_grader = "fail", "requires"
            result.reason = "; ".join(result.requires_violations)
        else:
            result.outcome, result.reason = "pass", ""

    # -- the agent's process -----------------------------------------------------------
    def _job(self, task: Task, live: Any, attempt: int) -> tuple[AgentJob, Path]:
        config = self.config
        work = self.out_dir / "work" / task.id
        work.mkdir(parents=True, exist_ok=True)
        cassette = None
        if config.mode in ("record", "replay"):
            cassette = CassetteJob(
                mode=config.mode,
                path=str(Path(config.cassettes) / f"{task.id}.cassette"),
                match=config.match,
                overwrite=config.overwrite,
                header={"model": config.model, "task_id": task.id, "task_hash": task.content_hash(),
                        "image_id": live.describe().get("image_id", ""), "endstate_version": __version__},
            )
        policy = [task.manifest.policy] if task.manifest.policy else []
        job = AgentJob(
            task_id=task.id,
            prompt=task.prompt,
            sandbox=live.handle(),
            model=config.model,
            base_url=self.base_urls.get(task.id) or config.base_url or self._replay_base_url(cassette),
            settings=msgspec.to_builtins(config.settings),
            budget=task.manifest.budget,
            policy=policy,
            policy_files=list(config.policy_files),
            guards=config.guards,
            journal=str(work / "journal.json"),
            transcript=str(self.out_dir / "transcripts" / f"{task.id}.json"),
            outcome=str(work / "outcome.json"),
            kill_at=task.manifest.kill_at,
            attempt=attempt,
            cassette=cassette,
        )
        path = work / "job.json"
        path.write_bytes(msgspec.json.encode(job))
        return job, path

    def _replay_base_url(self, cassette: CassetteJob | None) -> str | None:
        """On replay no server is needed: a stand-in URL with the recorded path prefix will do,
        since only the path takes part in the request hash."""
        if cassette is None or cassette.mode != "replay":
            return None
        from endstate.cassettes import load
        from endstate.errors import CassetteError

        try:
            recording = load(cassette.path)
        except CassetteError:
            return None  # the session reports what is wrong with the file
        for interaction in recording.interactions:
            prefix, sep, _ = interaction.request.path.rpartition("/chat/completions")
            if sep:
                return f"http://127.0.0.1:9{prefix}"
        return None

    def _run_agent(self, task: Task, live: Any) -> AgentOutcome:
        work = self.out_dir / "work" / task.id
        shutil.rmtree(work, ignore_errors=True)  # a journal or played-set left by an earlier run must not leak in
        (self.out_dir / "transcripts").mkdir(parents=True, exist_ok=True)
        deadline = task.manifest.budget.wall_seconds + 60
        attempt = 0
        while True:
            if self.cancelled.is_set():
                raise KeyboardInterrupt
            job, path = self._job(task, live, attempt)
            killed = self._spawn(path, work / f"worker-{attempt}.log", deadline)
            if killed and attempt == 0:
                attempt += 1  # the checkpoint task's kill point: resume in a fresh process
                continue
            outcome_path = Path(job.outcome)
            if not outcome_path.exists():
                return AgentOutcome("harness_error", f"agent process ended without a result (see {work}/worker-{attempt}.log)",
                                    Counters())
            return msgspec.json.decode(outcome_path.read_bytes(), type=AgentOutcome)

    def _spawn(self, job_path: Path, log_path: Path, deadline: float) -> bool:
        """Run one worker; return True when it reached its kill point and was SIGKILLed.

        Workers are forked from a fork server that has the agent's modules (the SDKs,
        vcrpy, docker) imported already: each still gets a process of its own, without
        paying the imports again.
        """
        receiver, sender = _FORKS.Pipe(duplex=False)
        proc = _FORKS.Process(target=forked_main, args=(str(job_path), str(log_path), sender), daemon=True)
        proc.start()
        sender.close()
        with self.lock:
            self.procs.add(proc)
        killed = False
        try:
            ready = multiprocessing.connection.wait([receiver, proc.sentinel], timeout=deadline)
            if receiver in ready and receiver.poll() and _recv(receiver) == KILL_MARKER:
                os.kill(proc.pid, signal.SIGKILL)  # the checkpoint task's kill: a real, uncatchable one
                killed = True
            elif not ready:
                proc.kill()
            proc.join()
        finally:
            receiver.close()
            with self.lock:
                self.procs.discard(proc)
        return killed

    def kill_all(self) -> None:
        with self.lock:
            for proc in list(self.procs):
                with contextlib.suppress(ProcessLookupError, ValueError):
                    proc.kill()


@contextlib.contextmanager
def _scripted_urls(config: RunConfig, tasks: list[Task], suite_root: Path) -> Iterator[dict[str, str]]:
    """For scripted models: start the local server (live runs) and give each task its URL."""
    provider, policy = parse_spec(config.model)
    if provider != "scripted":
        yield {}
        return
    if config.mode == "replay":
        # Nothing is served on replay; only the path takes part in the request hash.
        yield {t.id: f"http://127.0.0.1:9/scripted/{policy}/{t.id}/v1" for t in tasks}
        return
    from endstate.models import ScriptedServer

    with ScriptedServer(suite_root) as server:
        yield {t.id: server.base_url_for(policy, t.id) for t in tasks}


def run_suite(
    tasks: list[Task],
    config: RunConfig,
    out_dir: Path,
    *,
    suite_root: Path,
    progress: Callable[[TaskResult], None] = lambda r: None,
    card_extra: dict[str, Any] | None = None,
    extra_graders: dict[str, list[Grader]] | None = None,
) -> RunResult:
    """Run every task; returns (and keeps writing) the run's results.

    `extra_graders` adds graders to some tasks (the mutation check's probes).
    """
    tasks = sorted(tasks, key=lambda t: t.id)
    _FORKS.set_forkserver_preload(_PRELOAD)
    extra_graders = extra_graders or {}
    graders = {t.id: resolve_graders(t) + extra_graders.get(t.id, []) for t in tasks}
    backend = resolve_backend(config.sandbox)
    provider, _ = parse_spec(config.model)
    probe = _describe_backend(backend, config)
    task_images = own_image_ids(tasks, backend, config.image)  # built (or found) before any task starts
    card = RunCard(
        endstate_version=__version__,
        model=config.model,
        provider=provider,
        temperature=config.settings.temperature,
        seed=config.settings.seed,
        retry_ceiling=config.settings.max_retries,
        tool_choice=config.settings.tool_choice,
        network_policy="none",
        sandbox_backend=backend,
        image=config.image if backend == "docker" else "",
        image_id=probe.get("image_id", ""),
        task_pack_hash=task_pack_hash(tasks, task_images),
        task_images=task_images,
        tasks=len(tasks),
        mode=config.mode,
        replay_from=config.cassettes or "" if config.mode == "replay" else "",
        match=config.match if config.mode == "replay" else "",
        guards_disabled=tuple(name for name in Guards.__struct_fields__ if not getattr(config.guards, name)),
        **(card_extra or {}),
    )
    result = RunResult(card, [])
    suite = _Suite(config, Path(out_dir), backend, progress)
    with _scripted_urls(config, tasks, suite_root) as urls:
        suite.base_urls = urls
        pool = ThreadPoolExecutor(max_workers=max(1, config.jobs))
        futures = {pool.submit(suite.run_task, t, graders[t.id]): t for t in tasks}
        try:
            pending = set(futures)
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    task_result = future.result()
                    result.tasks.append(task_result)
                    result.tasks.sort(key=lambda r: r.task_id)
                    write_results(result, Path(out_dir))
                    progress(task_result)
        except KeyboardInterrupt:
            suite.cancelled.set()
            for future in futures:
                future.cancel()
            suite.kill_all()
            pool.shutdown(wait=True)
            write_results(result, Path(out_dir))
            raise
        pool.shutdown(wait=True)
    return result


def _describe_backend(backend: str, config: RunConfig) -> dict[str, str]:
    if backend != "docker":
        return {}
    import docker

    from endstate.errors import SandboxUnavailable
    from endstate.sandbox._docker import connect

    client = connect()
    try:
        return {"image_id": client.images.get(config.image).id}
    except docker.errors.ImageNotFound:
        raise SandboxUnavailable(f"Docker image {config.image} does not exist here: run `endstate image build` first") from None
    finally:
        client.close()
