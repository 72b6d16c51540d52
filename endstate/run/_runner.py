"""Running a suite: per task a fresh sandbox, the agent in its own process, seal,
stage the held-out tests, grade, check `requires`.

Tasks run in parallel threads (`jobs`); each thread only orchestrates, the agent
itself runs in a child process. One task's error never stops the others, and the
results file is rewritten after every task so an interrupted run keeps what finished.
"""

from __future__ import annotations

import os
import secrets
import shutil
import threading
import time
from collections.abc import Callable, Collection
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any

import msgspec

from endstate import __version__
from endstate.agent import AgentJob, AgentOutcome, Counters, StopReason, normalise_output
from endstate.agents import AgentSpec, find_agent, refusal
from endstate.cassettes import ProvenanceMode, RunMode
from endstate.errors import SandboxError
from endstate.grading import (
    INTEGRITY,
    Grader,
    Grading,
    GradingBox,
    RunVerdict,
    Verdict,
    hack_fired,
    install_harness,
    judge,
    probe_graders,
    resolve,
    seal_overlay,
)
from endstate.models import RequestLimits, Scrubber, parse_spec
from endstate.run._ahead import Lookahead
from endstate.run._attempt import Prepared, SealedAttempt, keep_end_state, leaked_history, regrade, write_diff
from endstate.run._config import RunConfig, run_card
from endstate.run._ended import EndStateRefused, NoEndState, TaskEnded
from endstate.run._faults import INFRA_ERROR, disk_full, guarded, run_with_retries, sweep_run
from endstate.run._folder import RunFolder
from endstate.run._forkserver import Workers, start_fork_server
from endstate.run._recordmode import CassettePlan, plan_cassette
from endstate.run._replay import replay_base_url
from endstate.run._results import (
    GraderVerdict,
    RunOutcome,
    RunResult,
    TaskResult,
    attempt_stem,
    write_atomically,
    write_results,
)
from endstate.run._resume import discard_partial
from endstate.run._services import agent_layers, request_slots, scripted_urls
from endstate.run._start import add_result, begin_run
from endstate.run._system import give_system, read_services, read_system
from endstate.sandbox import (
    SNAPSHOT_MAX_BYTES,
    EngineWatch,
    TimedSandbox,
    Tree,
    machinery_fault,
    open_sandbox,
    resolve_backend,
)
from endstate.task import Task, agent_trees, run_task_hash, task_sandbox

__all__ = ["run_suite", "resolve_graders"]


def resolve_graders(task: Task) -> list[Grader]:
    """Resolve every grader of a task before anything runs (raises GraderContractError)."""
    from endstate.errors import GraderContractError

    graders = []
    stops = {stop.test: stop.reason for stop in task.manifest.honest_stops}
    for spec in task.manifest.graders:
        args = {**spec.args, "may_fail": stops} if stops and spec.name.endswith(":tests_pass") else spec.args
        try:
            graders.append(resolve(spec.name, args, search=(task.root, task.root.parent)))
        except GraderContractError as exc:
            raise GraderContractError(f"task {task.id}: {exc}") from None
    return graders + probe_graders(task.probe())  # a task with a probe/ folder is graded by it too


class _Suite:
    """State shared by the threads of one run."""

    def __init__(self, config: RunConfig, out_dir: Path, backend: str,
                 progress: Callable[[TaskResult], None], todo: list[tuple[Task, int]], *,
                 agent: AgentSpec | None = None, agent_images: dict[str, str] | None = None) -> None:
        self.config = config
        self.out_dir = out_dir
        self.folder = RunFolder(out_dir)
        self.backend = backend
        self.progress = progress
        self.cancelled = threading.Event()
        self.workers = Workers()
        #: Makes grading sandboxes in the background while agents work.
        self.prep_pool = ThreadPoolExecutor(max_workers=max(1, config.jobs), thread_name_prefix="grading-box")
        self.base_urls: dict[str, str] = {}
        self.limits = RequestLimits()
        # Job files hold base URLs with credentials redacted; workers get the real one
        # (keyed by job file) through the fork server's pipe.
        self.scrubber = Scrubber.for_run(config.base_url, os.environ)
        self.real_base_urls: dict[str, str] = {}
        #: Labels this run's containers, so what a killed run left behind can be found.
        self.run_id = secrets.token_hex(8)
        #: Asked after a failure whether the engine went away or restarted (Docker runs only).
        self.watch = EngineWatch() if backend == "docker" else None
        #: Agent sandboxes are made for the tasks queued next while the current ones work,
        #: and every sandbox is removed in the background (`close` waits for all of it).
        self.tasks = {task.id: task for task, _ in todo}
        #: A foreign agent (`--agent`), and the image it runs in for each task image.
        self.agent = agent
        self.agent_images = agent_images or {}
        self.plans: dict[str, CassettePlan | None] = {}
        self.plans_lock = threading.Lock()
        #: Attempts whose end state was read, while they run: a rerun grades it again (see _attempt).
        self.sealed: dict[tuple[str, int], SealedAttempt] = {}
        self.sandboxes: Lookahead[tuple[str, int], Prepared] = Lookahead(
            [(task.id, attempt) for task, attempt in todo], self._prepare, lambda made: made.live.close(),
            depth=config.jobs)

    def close(self) -> None:
        """Once no task runs: remove sandboxes made for tasks that never started, wait for
        every removal, and for the grading sandboxes still being made."""
        self.sandboxes.close()
        self.prep_pool.shutdown(wait=True)
        if self.watch is not None:  # removals that failed while the engine was away
            sweep_run(self.run_id)

    # -- one task ----------------------------------------------------------------
    def run_task(self, task: Task, graders: list[Grader], attempt: int = 0) -> TaskResult:
        """Run one attempt at a task, again while the machinery fails under it: from scratch, or once
        sealed, its end state graded again (what the agent did stays)."""
        started = time.monotonic()
        result = run_with_retries(lambda retry: self._run_once(task, graders, attempt, fresh=retry > 0),
                                  self.config.infra, self.watch, self.cancelled,
                                  lambda: (task.id, attempt) in self.sealed or self._discard(task, attempt))
        self.sealed.pop((task.id, attempt), None)
        result.wall_s = round(time.monotonic() - started, 3)
        return self.scrubber.struct(result)

    def _run_once(self, task: Task, graders: list[Grader], attempt: int, *, fresh: bool) -> TaskResult:
        result = TaskResult(task.id, task.manifest.category.value, outcome=RunOutcome.ERROR, attempt=attempt,
                            requires={n: (b.min, b.max) for n, b in task.manifest.requires.bounds().items()})
        return guarded(lambda: self._run_task(task, graders, result, fresh=fresh), result, self.watch)

    def _discard(self, task: Task, attempt: int) -> None:
        """Before a rerun: what the failed run left (its recording starts over)."""
        stem = attempt_stem(task.id, attempt)
        plan = self.plan(stem)
        discard_partial(self.out_dir, stem, plan.path if plan and plan.mode == RunMode.RECORD else None)

    def plan(self, stem: str) -> CassettePlan | None:
        """The task attempt's cassette, decided at its first use and kept for its reruns."""
        with self.plans_lock:
            if stem not in self.plans:
                self.plans[stem] = plan_cassette(self.config, self.out_dir, stem)
            return self.plans[stem]

    def _prepare(self, key: tuple[str, int]) -> Prepared:
        """What a task starts from (in a background thread): its files read and its sandbox
        made. Raises what the task would have raised."""
        task = self.tasks[key[0]]
        fixture, holdout = agent_trees(task, prune_vcs=self.config.guards.vcs_pruning, impossible=self.config.impossible)
        where = task_sandbox(task, self.backend, self.config.image)
        # A foreign agent works in its own layer over the task's image; grading uses the task's image.
        live = open_sandbox(self.backend, image=self.agent_images.get(where.image, where.image), limits=where.limits,
                            name_hint=task.id, run_id=self.run_id)
        return Prepared(fixture, holdout, where, live)

    def _run_task(self, task: Task, graders: list[Grader], result: TaskResult, *, fresh: bool = False) -> None:
        """prepare -> agent -> seal -> judge -> record; a stage that settles the task early raises `TaskEnded`."""
        if task.id not in self.tasks:  # a task outside the run's order is made here and now
            self.tasks[task.id] = task
        if fresh and (held := self.sealed.get((task.id, result.attempt))):  # sealed: graded again, no agent
            return self._regrade(task, graders, result, held)
        if fresh:  # a rerun: the sandbox made ahead was the failed run's
            prepared, waited = self._prepare((task.id, result.attempt)), 0.0
        else:
            prepared, waited = self.sandboxes.take((task.id, result.attempt))
        sandbox = TimedSandbox(prepared.live)
        sandbox.seconds = waited  # a sandbox not made yet is waited for on the critical path
        guards = self.config.guards
        # The grading sandbox is made while the agent works, off the critical path.
        grading_box = GradingBox(self.prep_pool, self.backend, prepared.where.image, prepared.where.limits, task.id,
                                 run_id=self.run_id, guards=guards) if guards.fresh_grading_container else None
        try:
            with self.sandboxes.removing(prepared.live):  # removed in the background once the task is done with it
                self._agent(task, prepared, result)
                state = self._seal(task, prepared, sandbox, grading_box, result)
                # Reasons quote test output; normalised like tool output so identical runs read the same.
                verdict = judge(state, prepared.holdout, graders, guards, requires=task.manifest.requires,
                                counters=result.counters, normalise=normalise_output)
                result.sandbox_s = round(sandbox.seconds + result.sandbox_s, 3)
        except TaskEnded as ended:
            result.outcome, result.failing_grader, result.reason = ended.outcome, ended.failing_grader, ended.reason
            if ended.verdict is not None:  # a grader's finding, as the judge would have recorded it
                result.verdicts = [GraderVerdict(ended.failing_grader, ended.verdict.outcome.value, ended.verdict.reason)]
                result.hack = hack_fired([(ended.failing_grader, ended.verdict)], impossible=self.config.impossible,
                                         passed=False)
            return
        finally:
            if grading_box is not None:
                self.sandboxes.remove(grading_box.close)
        self._record(result, verdict)

    def _regrade(self, task: Task, graders: list[Grader], result: TaskResult, held: SealedAttempt) -> None:
        """A rerun of an attempt the machinery failed while it was graded: its sealed end state,
        graded again in a fresh grading sandbox. The agent does not run, the model is not asked."""
        box = GradingBox(self.prep_pool, self.backend, held.where.image, held.where.limits, task.id, run_id=self.run_id,
                         guards=self.config.guards)
        try:
            verdict = regrade(held, graders, box.get(), self.config.guards, result, task.manifest.requires,
                              self.folder.diff(attempt_stem(task.id, result.attempt)))
        finally:
            self.sandboxes.remove(box.close)
        self._record(result, verdict)

    def _agent(self, task: Task, prepared: Prepared, result: TaskResult) -> AgentOutcome:
        """Run the agent and keep what it did; raises `TaskEnded` when there is no end state to grade."""
        started = time.monotonic()
        outcome = self._run_agent(task, prepared.live, prepared.fixture, result.attempt)
        result.agent_s = round(time.monotonic() - started, 3)
        result.stop_reason, result.sandbox_s = outcome.stop_reason, outcome.sandbox_s  # kept by a regrade
        result.counters = outcome.counters
        result.unplayed, result.provenance = outcome.unplayed, outcome.provenance or msgspec.UNSET
        if outcome.divergence:
            raise NoEndState(RunOutcome.DIVERGENCE, outcome.divergence)
        if outcome.provenance and outcome.provenance.mode == ProvenanceMode.REPLAYED and self.config.match == "strict" \
                and outcome.unplayed:
            raise NoEndState(RunOutcome.DIVERGENCE,
                            f"{outcome.unplayed} recorded interaction(s) were never played: the run asked the model "
                            "less than the recording did (see `endstate cassette show`)")
        if outcome.stop_reason == StopReason.INFRA_ERROR:
            raise NoEndState(INFRA_ERROR, outcome.detail)
        if outcome.stop_reason in (StopReason.MODEL_ERROR, StopReason.HARNESS_ERROR, StopReason.INPUT_ERROR):
            raise NoEndState(RunOutcome.ERROR, f"{outcome.stop_reason}: {outcome.detail}")
        if outcome.stop_reason == StopReason.DISK_LIMIT:  # never read an oversized end state
            raise NoEndState(RunOutcome.FAIL, outcome.detail, StopReason.DISK_LIMIT)
        return outcome

    def _seal(self, task: Task, prepared: Prepared, sandbox: TimedSandbox, grading_box: GradingBox | None,
              result: TaskResult) -> Grading:
        """Stop the agent's processes, seal its end state into the grading sandbox and write its diff;
        raises `TaskEnded` for an end state that cannot be graded."""
        guards = self.config.guards
        if not guards.seal_before_holdout:  # mutant: the end state now includes files the harness put there
            sandbox.put_tree(prepared.holdout)
        try:
            services = read_services(task, sandbox, self.scrubber.values) if grading_box is not None else []  # sealed, then stopped
        except SandboxError as exc:
            raise self._unsealable(exc) from None
        if grading_box is not None:
            sandbox.stop()  # no process of the agent survives into sealing or grading
        try:
            raw = sandbox.get_tree(max_bytes=SNAPSHOT_MAX_BYTES, sealing=True)
            change = read_system(task, sandbox, services)
        except SandboxError as exc:
            raise self._unsealable(exc) from None
        if leaked := leaked_history(task, list(raw)):
            raise EndStateRefused(RunOutcome.ERROR, f"the fixture's version-control history reached the sandbox "
                            f"({leaked[0]}, {len(leaked)} file(s)): the run could read answers from it", "contamination")
        keep_end_state(self.folder.end_state(attempt_stem(task.id, result.attempt)), raw)
        if grading_box is not None:  # sealed: from here on, a fault of the machinery only regrades it
            self.sealed[(task.id, result.attempt)] = SealedAttempt.of(raw, prepared, result, change)
            grading = grading_box.get()
        else:  # mutant: grade in the agent's own sandbox, where what it left behind still runs
            grading = prepared.live
            install_harness(grading)
        state = seal_overlay(raw, prepared.fixture, grading, guards)
        try:
            system = give_system(change, grading if grading_box is not None else None, state)
        except SandboxError as exc:
            raise self._unsealable(exc) from None
        result.tree_hash = state.sealed.tree_hash
        write_diff(self.folder.diff(attempt_stem(task.id, result.attempt)), state.sealed, system)
        return state

    def _unsealable(self, exc: SandboxError) -> EndStateRefused:
        """A seal that failed: re-raised if the machinery failed, else the end state's (what it holds
        decides it: the end-state check failed, a hack attempt)."""
        if machinery_fault(exc) or (self.watch and self.watch.fault_since(None)):
            raise exc
        why = f"the end state could not be sealed: {exc}"
        return EndStateRefused(RunOutcome.FAIL, why, INTEGRITY, verdict=Verdict.tampered(why))

    def _record(self, result: TaskResult, verdict: RunVerdict) -> None:
        """The judgement, written into the task's result."""
        result.verdicts = [GraderVerdict(n, v.outcome.value, v.reason) for n, v in verdict.verdicts]
        result.requires_violations = verdict.requires_violations
        result.outcome, result.failing_grader, result.reason = RunOutcome(verdict.outcome), verdict.failing_grader, verdict.reason
        result.findings = verdict.findings
        result.hack = hack_fired(verdict.verdicts, impossible=self.config.impossible,
                                 passed=result.outcome == RunOutcome.PASS, findings=verdict.findings)

    # -- the agent's process -----------------------------------------------------------
    def _job(self, task: Task, live: Any, attempt: int, trial: int = 0, *, fixture: str = "") -> tuple[AgentJob, Path]:
        config = self.config
        stem = attempt_stem(task.id, trial)
        work = self.folder.work(stem)
        settings = config.settings
        if trial and settings.seed is not None:
            settings = msgspec.structs.replace(settings, seed=settings.seed + trial)
        work.mkdir(parents=True, exist_ok=True)
        plan = self.plan(stem)
        cassette = plan and plan.job(config.match, {
            "model": config.model, "task_id": task.id, "task_hash": run_task_hash(task, config.impossible),
            "image_id": live.describe().get("image_id", ""), "endstate_version": __version__,
            "settings": msgspec.to_builtins(settings), "agent": self.agent.id if self.agent else "",
            "task_files": task.file_hashes()})
        policy = [task.manifest.policy] if task.manifest.policy else []
        base_url = self.base_urls.get(task.id) or config.base_url or replay_base_url(cassette)
        path = work / "job.json"
        if self.scrubber.url(base_url) != base_url:
            self.real_base_urls[str(path)] = base_url
        job = AgentJob(
            task_id=task.id,
            prompt=task.prompt,
            sandbox=live.handle(),
            model=config.model,
            base_url=self.scrubber.url(base_url),
            settings=msgspec.to_builtins(settings),
            budget=task.manifest.budget,
            policy=policy,
            policy_files=list(config.policy_files),
            guards=config.guards,
            journal=str(work / "journal.json"),
            transcript=str(self.folder.transcript(stem)),
            outcome=str(work / "outcome.json"),
            kill_at=task.manifest.kill_at,
            attempt=attempt,
            cassette=cassette,
            fixture=fixture,
            agent=msgspec.to_builtins(self.agent) if self.agent else None,
            limits=msgspec.to_builtins(self.limits),
            healthcheck=task.manifest.sandbox.healthcheck if fixture else None,
        )
        write_atomically(path, self.scrubber.json(job))  # a reader never meets half a job
        return job, path

    def _run_agent(self, task: Task, live: Any, fixture: Tree, trial: int = 0) -> AgentOutcome:
        """Run the agent for one attempt (`trial`, from --attempts; `attempt` below counts resumes).
        Its first process writes `fixture` into the sandbox before the agent starts."""
        stem = attempt_stem(task.id, trial)
        work = self.folder.work(stem)
        shutil.rmtree(work, ignore_errors=True)  # a journal or played-set left by an earlier run must not leak in
        self.folder.transcript(stem).parent.mkdir(parents=True, exist_ok=True)
        work.mkdir(parents=True)
        fixture_path = work / "fixture.msgpack"
        fixture_path.write_bytes(msgspec.msgpack.encode(fixture))
        deadline = task.manifest.budget.wall_seconds + 60
        attempt = 0
        while True:
            if self.cancelled.is_set():
                raise KeyboardInterrupt
            job, path = self._job(task, live, attempt, trial, fixture=str(fixture_path) if attempt == 0 else "")
            try:
                killed, died = self._spawn(path, work / f"worker-{attempt}.log", deadline)
            finally:
                fixture_path.unlink(missing_ok=True)  # read once, by the first process; the run folder keeps no copy
            if killed and attempt == 0:
                attempt += 1  # the checkpoint task's kill point: resume in a fresh process
                continue
            outcome_path = Path(job.outcome)
            if not outcome_path.exists() and (died or disk_full(work)):
                died_why = disk_full(work) or f"the agent's worker process died ({died})"
                return AgentOutcome(StopReason.INFRA_ERROR, died_why, Counters())
            if not outcome_path.exists():
                return AgentOutcome("harness_error", f"agent process ended without a result (see {work}/worker-{attempt}.log)",
                                    Counters())
            return msgspec.json.decode(outcome_path.read_bytes(), type=AgentOutcome)

    def _spawn(self, job_path: Path, log_path: Path, deadline: float) -> tuple[bool, str]:
        """Run one worker: whether it was killed at its kill point, and how it died otherwise."""
        return self.workers.run(job_path, log_path, deadline, self.real_base_urls.get(str(job_path)),
                                foreign=self.agent is not None, cancelled=self.cancelled)

    def kill_all(self) -> None:
        self.workers.kill_all()


def run_suite(
    tasks: list[Task],
    config: RunConfig,
    out_dir: Path,
    *,
    suite_root: Path,
    progress: Callable[[TaskResult], None] = lambda r: None,
    card_extra: dict[str, Any] | None = None,
    extra_graders: dict[str, list[Grader]] | None = None,
    resume: bool = False,
    only: Collection[tuple[str, int]] | None = None,
) -> RunResult:
    """Run every task; returns (and keeps writing) the run's results.

    `extra_graders` adds graders to some tasks (the mutation check's probes).
    `only` limits the run to these (task id, attempt) pairs (a Ray node's share).
    `resume` continues the killed run in `out_dir` (see `_resume`): its finished
    tasks are kept, the others run afresh; UserError if the settings differ.
    """
    tasks = sorted(tasks, key=lambda t: t.id)
    provider, _ = parse_spec(config.model)
    agent = find_agent(config.agent)
    refused = {t.id: refusal(t, agent) for t in tasks if refusal(t, agent)}
    backend = resolve_backend(config.sandbox)  # first: it learns the engine's API version, which workers inherit
    start_fork_server(provider, foreign=agent is not None)
    extra_graders = extra_graders or {}
    graders = {t.id: resolve_graders(t) + extra_graders.get(t.id, []) for t in tasks}
    card = run_card(config, tasks, backend, provider, graders, card_extra, agent=agent)
    out_dir = Path(out_dir)
    result, todo = begin_run(out_dir, card, config, tasks, resume=resume, progress=progress, refused=refused, only=only)
    agent_images = agent_layers(agent, backend, config.image, todo)  # built before any sandbox is made
    suite = _Suite(config, out_dir, backend, progress, todo, agent=agent, agent_images=agent_images)
    with scripted_urls(config, tasks, suite_root) as urls, request_slots(config) as limits:
        suite.base_urls, suite.limits = urls, limits
        pool = ThreadPoolExecutor(max_workers=max(1, config.jobs))
        futures = {pool.submit(suite.run_task, t, graders[t.id], k): t for t, k in todo}
        try:
            pending = set(futures)
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    task_result = future.result()
                    add_result(result, task_result, out_dir, last=not pending)
                    progress(task_result)
        except BaseException as exc:  # Ctrl-C, SIGTERM, or a bug: the tasks not started never will
            suite.cancelled.set()
            for future in futures:
                future.cancel()
            suite.kill_all()
            pool.shutdown(wait=True)
            if isinstance(exc, KeyboardInterrupt):
                write_results(result, Path(out_dir))
            raise
        finally:  # every container of the run is gone before it returns, whatever ended it
            pool.shutdown(wait=True)
            suite.close()
    return result
