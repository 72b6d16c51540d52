"""Seal, stage, grade: what happens to an end state between the agent's last step
and its verdicts.

    agent stops -> its sandbox is stopped (no process of the agent survives)
                -> seal: the workspace is read once, links as links, caches left out,
                   hashed and snapshotted
                -> a fresh grading sandbox (made while the agent worked) receives exactly
                   the snapshot, read-only to the user tests run as, plus the harness's
                   own test entry point
                -> the probe, if the task has one, runs the end state there while
                   nothing held out exists anywhere in that container
                -> the held-out tests are staged there
                -> every grader runs, then `end_state` (the checks every task gets)

`Guards` (endstate.guards) are the switches the mutation check turns off one at a time.
Sealing returns a `Grading`: the sealed sandbox (what graders see) and what grading keeps
while it grades it, which every later step is given.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import msgspec

from endstate.errors import CommandWedged, ContainerGone, SandboxError
from endstate.grading._integrity import end_state
from endstate.grading._joint import plan_joint
from endstate.grading._probe import PROBE
from endstate.grading._resolve import Grader, run_grader
from endstate.grading._runners import LOG_RUNNERS
from endstate.grading._state import Grading
from endstate.grading._testrun import (
    HARNESS_DIR,
    REPORT_DIR,
    collected_folders,
    harness_files,
    plant_canaries,
    start_warm_runner,
)
from endstate.grading._twins import named_by_case, plan_twins, twin_seed
from endstate.grading._verdict import Verdict
from endstate.guards import Guards
from endstate.sandbox import (
    SNAPSHOT_MAX_BYTES,
    WORKDIR,
    FileEntry,
    RuntimeGuards,
    Sandbox,
    SandboxLimits,
    SealedSandbox,
    Tree,
    cache_paths,
    open_sandbox,
    without_caches,
)

__all__ = ["Grading", "GradingBox", "install_harness", "prepare_grading_sandbox", "seal_end_state", "seal_overlay",
           "stage_holdout", "prepare_test_runs", "grade", "INTEGRITY"]

#: The name the always-on end-state checks report under.
INTEGRITY = "end_state"


def install_harness(box: Sandbox) -> None:
    """The harness's test entry point (read-only) and the folder its reports go to: root's and
    sticky, like /tmp, so that root (who holds no DAC_OVERRIDE) makes each run's report folder in
    it as it makes the run's scratch copy, and a test process can reach only its own."""
    box.put_harness_trees({HARNESS_DIR: (harness_files(), "root"), REPORT_DIR: ({}, "scratch")})


def prepare_grading_sandbox(backend: str, image: str, limits: SandboxLimits, name_hint: str, *,
                            run_id: str = "", guards: Guards = Guards()) -> Sandbox:
    """A fresh sandbox from the pristine image with the harness's test entry point in it
    (`run_id`: the run whose label it carries; `guards`: its runtime's are read)."""
    box = open_sandbox(backend, image=image, limits=limits, name_hint=f"grade-{name_hint}", run_id=run_id,
                       grading=True, runtime=RuntimeGuards(own_path=guards.runtime_path, blank_env=guards.environment_blanked,
                                                           blind_config=guards.runtime_config_blind))
    try:
        box.ready()  # what the first graded command needs is opened now, off the critical path
        install_harness(box)
    except BaseException:
        box.close()
        raise
    return box


class GradingBox:
    """A grading sandbox made in the background while the agent works; closed with the task."""

    def __init__(self, pool: ThreadPoolExecutor, backend: str, image: str, limits: SandboxLimits, name_hint: str,
                 *, run_id: str = "", guards: Guards = Guards()):
        self._future: Future[Sandbox] = pool.submit(prepare_grading_sandbox, backend, image, limits, name_hint,
                                                    run_id=run_id, guards=guards)

    def get(self) -> Sandbox:
        return self._future.result()

    def close(self) -> None:
        try:
            box = self._future.result()
        except BaseException:
            return
        box.close()


def _blind_snapshot(raw: Tree) -> Tree:
    """What sealing used to see (mutant): regular files only, caches left out."""
    return {path: entry for path, entry in without_caches(raw).items() if not entry.link}


def seal_end_state(stopped: Any, fixture: Tree, box: Sandbox, guards: Guards = Guards(), *,
                   max_bytes: int = SNAPSHOT_MAX_BYTES) -> Grading:
    """Seal the agent's (stopped) sandbox and give the grading sandbox exactly what was sealed."""
    raw = stopped.get_tree(max_bytes=max_bytes, sealing=True)
    return seal_overlay(raw, fixture, box, guards)


def seal_overlay(raw: Tree, fixture: Tree, box: Sandbox, guards: Guards = Guards()) -> Grading:
    """The same for a tree in hand (a task check's overlay, or a snapshot already read).
    Nothing reaches the grading sandbox until `stage_holdout`."""
    if guards.full_snapshot:
        snapshot, graded = without_caches(raw), without_caches(raw)
    else:
        snapshot, graded = _blind_snapshot(raw), raw
    sealed = SealedSandbox(box, snapshot, fixture)
    return Grading(sealed, box, guards, graded=graded if guards.fresh_grading_container else {},
                   ignored_caches=cache_paths(raw))


def stage_holdout(grading: Grading, holdout: Tree, graders: Sequence[Grader] = (),
                  guards: Guards = Guards()) -> None:
    """Give the grading sandbox the sealed tree, the held-out tests and the canaries (one per
    folder that holds tests and that the test graders' runs collect), all read-only to the test user: in one write, or, where `graders`
    hold a probe, the sealed tree first, then the probe, then the rest (see `_probe_first`)."""
    sealed, sealed_under = grading.sealed, grading.guards
    if guards.outside_check and guards.probe_first and grading.graded:
        _probe_first(grading, graders)
    staged = dict(holdout)
    if sealed_under.twins:  # drawn afresh per staging, from a secret no sandbox sees
        commands = [g.args["command"] for g in graders if isinstance(g.args.get("command"), str)]
        grading.twin_plan = plan_twins(holdout, twin_seed(secrets.token_bytes(32), sealed.tree_hash),
                                       values=sealed_under.value_twins, named=named_by_case(commands))
    if sealed_under.tamper_guard and _runs_the_images_pytest(graders):
        paths = set(sealed.paths()) | set(holdout)
        canaries = plant_canaries(paths, collected_folders(_pytest_commands(graders), paths) if graders else None)
        grading.canaries = [(name, marks) for name, _, marks in canaries.values()]
        staged.update({path: source for path, (_, source, _) in canaries.items()})
    trees = {WORKDIR: ({**grading.graded, **staged}, "root")}
    if sealed_under.tamper_guard:
        # The guard trusts code in files the agent left as the fixture had them.
        listing = msgspec.json.encode(sorted(sealed.changed_paths()))
        trees[HARNESS_DIR] = ({"changed.json": FileEntry(0o644, listing)}, "root")
    grading.box.put_harness_trees(trees)
    grading.staged.update(staged)
    if grading.graded:  # what each test run copies into its scratch folder
        hidden = _apart(holdout, sealed.fixture_paths())
        grading.visible = {**grading.graded, **{path: entry for path, entry in staged.items() if path not in hidden}}
        grading.graded = {**grading.graded, **staged}
    grading.stage_done = True


def _runs_the_images_pytest(graders: Sequence[Grader]) -> bool:
    """Whether a test run of `graders` is the harness's pytest's, whose guard reads the canaries: any but
    built-in test graders that all name a log runner (`_runners.py`: no guard is in the project's own
    program, which would run a canary as one of its tests: pytest's own `copy_example` copies a folder
    of tests with the canary in it). Unknown graders (none given) are taken to run it."""
    builtin = all(g.name.startswith("endstate.grading") for g in graders)
    tests = [g for g in graders if g.short_name in ("tests_pass", "holdout")]
    return not (builtin and tests and all(g.args.get("runner", "pytest") != "pytest" for g in tests))


def _pytest_commands(graders: Sequence[Grader]) -> list[str | None]:
    """The command of each grader whose test run is the image's pytest's (None for one not known: a grader
    of the task's own, a test grader with its default command)."""
    commands: list[str | None] = []
    for g in graders:
        builtin = g.name.startswith("endstate.grading")
        if builtin and g.short_name in ("tests_pass", "holdout") and g.args.get("runner", "pytest") == "pytest":
            commands.append(g.args.get("command") if isinstance(g.args.get("command"), str) else None)
        elif not builtin:
            commands.append(None)
    return commands


def _tests_the_runner(graders: Sequence[Grader]) -> bool:
    """Whether a test grader of `graders` runs a runner that is the graded tree itself (pytest's own)."""
    return any(g.name.startswith("endstate.grading") and g.short_name in ("tests_pass", "holdout")
               and isinstance(g.args.get("runner"), str) and g.args["runner"] in LOG_RUNNERS
               and LOG_RUNNERS[g.args["runner"]].is_the_tree for g in graders)


def _apart(holdout: Tree, fixture: Iterable[str]) -> set[str]:
    """The held-out files a visible-only run is not given: those in a top folder of their own
    (`tests_holdout/`). A held-out file inside the project's own folders (a test file the fix
    changed, a new one beside the others) is part of the project's test run as the task states it:
    its `tests_pass` counted it (`tasks new`, the SWE-bench import), so that run still has it.
    The project's folders are the fixture's, never the end state's: a folder the agent made
    beside the held-out one cannot make it the project's."""
    tops = {path.split("/", 1)[0] for path in fixture}
    return {path for path in holdout if path.split("/", 1)[0] not in tops}


def _probe_first(grading: Grading, graders: Sequence[Grader]) -> None:
    """Run the probe graders while the grading container holds the sealed tree alone. The probe
    is the first end-state process there: whatever it leaves behind that no wipe reaches (kernel
    state of the container's namespaces) it left before any held-out file existed to read."""
    probes = [g for g in graders if g.short_name == PROBE]
    if not probes:
        return
    grading.box.put_harness_trees({WORKDIR: (grading.graded, "root")})
    grading.probe_verdicts = [run_grader(g, grading.sealed) for g in probes]


def prepare_test_runs(grading: Grading, graders: list[Grader], guards: Guards = Guards(), *,
                      warm: bool = True) -> None:
    """Before the first test run (once per grading; later calls do nothing): start the warm entry
    point in a fresh grading sandbox (`warm`: the probe has run, or will not), and plan the visible
    tests into the first held-out half's process where the graders allow (see _joint.py)."""
    if grading.test_runs_ready:
        return
    grading.test_runs_ready = True
    if grading.graded and guards.warm_start and warm:
        start_warm_runner(grading)
    grading.joint = plan_joint(grading, graders)


def grade(grading: Grading, graders: list[Grader], guards: Guards = Guards()) -> list[tuple[str, Verdict]]:
    """Every grader's verdict, then the end-state checks' (unless that guard is off)."""
    sealed = grading.sealed
    if grading.has_box and not grading.stage_done:
        stage_holdout(grading, {})  # nothing held out: the graded tree still has to get there
    if not guards.outside_check:  # mutant: nothing runs the end state outside a test process
        graders = [g for g in graders if g.short_name != PROBE]
    # The probe runs before any test process has run in this container: nothing a test run
    # left behind (a file in /tmp) can tell the program it is being probed. Verdicts keep their order.
    probed = iter(grading.probe_verdicts)  # run at staging, before any held-out file was there
    early = {i: next(probed, None) or run_grader(g, sealed) for i, g in enumerate(graders) if g.short_name == PROBE}
    prepare_test_runs(grading, graders, guards)
    verdicts = [(g.short_name, early[i] if i in early else run_grader(g, sealed)) for i, g in enumerate(graders)]
    if guards.end_state_checks:
        try:
            verdicts.append((INTEGRITY, end_state(sealed, scan_source=not _tests_the_runner(graders))))
        except (CommandWedged, ContainerGone):
            raise  # a fault of the machinery (see run_grader)
        except SandboxError as exc:
            verdicts.append((INTEGRITY, Verdict.error(f"end-state checks failed: {exc}")))
    return verdicts
