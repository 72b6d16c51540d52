"""The gate in front of a benchmark row: were the control arms run, on the same
footing, and did they behave?

A score means something only if, on the very same task pack, image, harness
version and graders, the no-edit arm failed every task (no grader accepts the
untouched fixture) and the known-fix arm passed every task (every task can be
passed). A row that cannot show this is reported "not verified", with the reason.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from endstate.report._runs import attempts_by_task, same_grading
from endstate.run import RunOutcome, RunResult, attempt_stem

__all__ = ["ControlArm", "check_control", "gate_reasons", "unswap", "NO_CONTROLS"]

NO_CONTROLS = "no control arms given (pass --controls NULL_RUN REF_RUN)"


class ControlArm(msgspec.Struct, frozen=True):
    #: "null" (must fail every task) or "reference" (must pass every task).
    role: str
    path: str
    model: str
    task_pack_hash: str
    image_id: str
    harness_version: str
    #: Task attempts the arm ran (its tasks times --attempts) and how many of them passed.
    tasks: int
    passes: int
    ok: bool
    problem: str = ""


def _examples(ids: list[str]) -> str:
    return ", ".join(ids[:3]) + (f" and {len(ids) - 3} more" if len(ids) > 3 else "")


def check_control(role: str, path: Path, result: RunResult) -> ControlArm:
    # Counted and named by attempt: an arm run with --attempts 2 passed 8 of 8 attempts, not "8/4".
    tasks = [t for attempts in attempts_by_task(result).values() for t in attempts]
    passes = [attempt_stem(t.task_id, t.attempt) for t in tasks if t.outcome == RunOutcome.PASS]
    unclean = [attempt_stem(t.task_id, t.attempt) for t in tasks
               if t.outcome in (RunOutcome.ERROR, RunOutcome.DIVERGENCE, RunOutcome.INFRA_ERROR)]
    problem = ""
    if not tasks:
        problem = f"the {role} arm ran no task"
    elif unclean:
        problem = f"the {role} arm errored or diverged on {len(unclean)} task(s) ({_examples(unclean)}): it did not run cleanly"
    elif role == "null" and passes:
        problem = (f"the null arm passed {len(passes)} task(s) ({_examples(passes)}): "
                   "a grader accepts an untouched fixture")
    elif role == "reference" and len(passes) < len(tasks):
        failed = [attempt_stem(t.task_id, t.attempt) for t in tasks if t.outcome != RunOutcome.PASS]
        problem = (f"the reference arm failed {len(failed)} task(s) ({_examples(failed)}): "
                   "a known fix does not pass, so a failure there says nothing about the model")
    card = result.card
    return ControlArm(role, str(path), card.model, card.task_pack_hash, card.image_id, card.endstate_version,
                      len(tasks), len(passes), not problem, problem)


def _mismatches(run: RunResult, arm: ControlArm, control: RunResult) -> list[str]:
    card, reasons = run.card, []
    if card.task_pack_hash != arm.task_pack_hash:
        reasons.append(f"the {arm.role} arm ran another task pack ({arm.task_pack_hash[:12]}, "
                       f"this row {card.task_pack_hash[:12]})")
    if card.image_id != arm.image_id:
        reasons.append(f"the {arm.role} arm ran on another image ({arm.image_id[:19] or 'none'}, "
                       f"this row {card.image_id[:19] or 'none'})")
    if card.endstate_version != arm.harness_version:
        reasons.append(f"the {arm.role} arm ran another harness version ({arm.harness_version}, "
                       f"this row {card.endstate_version})")
    if reasons:  # what to do, said once per arm: runs made elsewhere (committed ones too) never match an image built here
        reasons[-1] += (f": run the arm where this row ran, on its suite (`endstate eval --model scripted/{arm.role} "
                        f"--suite SUITE --out DIR`), and pass that folder")
    grading = same_grading(run, control)
    if grading:
        reasons.append(f"the {arm.role} arm was graded differently: {grading}")
    missing = sorted({t.task_id for t in run.tasks} - {t.task_id for t in control.tasks})
    if missing:
        reasons.append(f"the {arm.role} arm did not run {len(missing)} of this row's task(s) ({_examples(missing)})")
    return reasons


def unswap(controls: list[tuple[ControlArm, RunResult]]) -> list[tuple[ControlArm, RunResult]]:
    """The arms, each told in one line when they were given the wrong way round: a null arm
    that passed everything beside a reference arm that passed nothing is not two broken graders."""
    arms = {arm.role: (arm, result) for arm, result in controls}
    if set(arms) != {"null", "reference"}:
        return controls
    (null, null_run), (ref, ref_run) = arms["null"], arms["reference"]
    if not (null_run.tasks and ref_run.tasks and all(t.outcome == RunOutcome.PASS for t in null_run.tasks)
            and all(t.outcome == RunOutcome.FAIL for t in ref_run.tasks)):
        return controls
    problem = (f"the control arms look swapped: {null.path} ({null.model}) passed every task and {ref.path} "
               f"({ref.model}) failed every one; give them as --controls NULL_RUN REF_RUN")
    return [(msgspec.structs.replace(arm, problem=problem), result) for arm, result in controls]


def gate_reasons(runs: list[RunResult], controls: list[tuple[ControlArm, RunResult]] | None) -> list[str]:
    """Why a row (its repeated runs) is not verified; empty when it is."""
    if not controls:
        return [NO_CONTROLS]
    reasons = list(dict.fromkeys(arm.problem for arm, _ in controls if not arm.ok))
    for run in runs:
        unscored = [t.task_id for t in run.tasks if t.outcome == RunOutcome.INFRA_ERROR]
        if unscored:
            reasons.append(f"{len(unscored)} task attempt(s) ended in infra_error ({_examples(unscored)}): the "
                           "machinery failed under them, they are unscored; rerun them with `--resume`")
        for arm, control in controls:
            reasons += [r for r in _mismatches(run, arm, control) if r not in reasons]
    return reasons
