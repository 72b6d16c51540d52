"""`endstate tasks adequacy`: what it prints. The measure itself is endstate.checks'."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click
import msgspec

from endstate.errors import UserError

if TYPE_CHECKING:
    from endstate.checks import TaskAdequacy

__all__ = ["ADEQUACY_OPTION", "measure", "report_made", "show_adequacy"]

#: `tasks new` and `tasks import swebench` measure what they make unless told not to.
ADEQUACY_OPTION = click.option(
    "--adequacy/--no-adequacy", default=True, show_default=True,
    help="Then grade mutants of each kept task's solution (they must fail) and print its kill rate.")


def measure(suite: Path, only: list[str], *, jobs: int, sandbox: str, image: str | None,
            json_out: Path | None) -> int:
    """Measure and print every task's adequacy; the exit code (0 adequate, 1 not, 2 bad input)."""
    from endstate.checks import MutantOutcome, adequacy_of_tasks
    from endstate.run import make_folder, resolve_graders, write_atomically
    from endstate.sandbox import DEFAULT_IMAGE, resolve_backend
    from endstate.task import load_suite

    if json_out is not None:  # a folder that refuses the file is found now, not after minutes of sandboxes
        make_folder(json_out.parent, "--json")
    loaded, errors = load_suite(suite, only=only or None)
    graders = {}
    for task in loaded:
        try:
            graders[task.id] = resolve_graders(task)
        except UserError as exc:
            errors.append(exc)
    for error in errors:
        click.echo(f"endstate: error: {error}", err=True)
    usable = [t for t in loaded if t.id in graders]
    backend = resolve_backend(sandbox)
    click.echo(f"measuring the adequacy of {len(usable)} task(s) in {backend} sandboxes, -j {jobs}")
    reports = adequacy_of_tasks(usable, graders, backend=backend, image=image or DEFAULT_IMAGE, jobs=jobs,
                                progress=lambda r: show_adequacy(r, suite / r.task_id))
    judged = sum(len(r.mutants) - r.count(MutantOutcome.EQUIVALENT) for r in reports)
    killed = sum(r.count(MutantOutcome.KILLED) for r in reports)
    click.echo(f"{sum(len(r.mutants) for r in reports)} mutant(s), {killed} killed, "
               f"{sum(r.count(MutantOutcome.SURVIVED) for r in reports)} survived, "
               f"{sum(r.count(MutantOutcome.EQUIVALENT) for r in reports)} equivalent: kill rate "
               + (f"{killed / judged:.0%}" if judged else "n/a")
               + f"; {sum(r.ok for r in reports)} of {len(reports)} task(s) adequate")
    if json_out is not None:
        write_atomically(json_out, msgspec.json.format(msgspec.json.encode(reports)) + b"\n", "--json")
    return 2 if errors else 0 if all(r.ok for r in reports) else 1


def _indented(text: str) -> str:
    return "".join(f"         {line}\n" for line in text.splitlines())


def show_adequacy(report: TaskAdequacy, folder: Path) -> None:
    """One line per task, then each survivor with its diff and each right fix that failed."""
    from endstate.checks import MutantOutcome, triage_hint
    from endstate.grading import Outcome

    rate = report.kill_rate
    right = sum(r.outcome == Outcome.PASS for r in report.right)
    click.echo(f"{'ok  ' if report.ok else 'FAIL'} {report.task_id:40s} "
               + (report.error or f"{len(report.mutants)} made, {report.count(MutantOutcome.KILLED)} killed, "
                  f"{report.count(MutantOutcome.SURVIVED)} survived, {report.count(MutantOutcome.EQUIVALENT)} equivalent, kill rate "
                  f"{'n/a' if rate is None else f'{rate:.0%}'}; right fixes {right}/{len(report.right)} pass"))
    for mutant in report.mutants:
        if mutant.outcome in (MutantOutcome.SURVIVED, MutantOutcome.ERROR):
            click.echo(f"       {mutant.outcome} {mutant.id}" + (f": {mutant.note}" if mutant.note else ""))
            click.echo(_indented(mutant.diff), nl=False)
            if mutant.outcome == MutantOutcome.SURVIVED:
                click.echo(f"       {triage_hint(folder, mutant.id)}")
    for row in report.right:
        if row.outcome != Outcome.PASS:
            failing = f" [{'/'.join(row.failing)}]" if row.failing else ""
            click.echo(f"       right fix {row.case} {row.outcome}s{failing}: {row.note}")
            click.echo(_indented(row.diff), nl=False)
    for stale in report.stale:
        click.echo(f"       {folder / 'adequacy.toml'} names {stale}, which is no longer made: remove it")
    if report.recorded and not report.error:
        counted = report.measured()
        click.echo(f"       {folder / 'adequacy.toml'} [measured] says {report.recorded}, counted "
                   f"{counted.line()}: write mutants = {counted.mutants}, killed = {counted.killed}, "
                   f"equivalent = {counted.equivalent}")


def report_made(tasks: list, *, backend: str, image: str, jobs: int = 2) -> None:
    """The adequacy of tasks just made and checked (`tasks new`, `tasks import swebench`), one
    row per task after the check rows; a weak task is flagged with its survivors and what to do
    about them, but is kept: its tests were never written to grade agents, and a person decides."""
    from endstate.checks import adequacy_of_tasks
    from endstate.run import resolve_graders

    if not tasks:
        return
    roots = {task.id: Path(task.root) for task in tasks}
    click.echo(f"adequacy of {len(tasks)} new task(s): each mutant of the solution must fail, each rewrite pass")
    reports = adequacy_of_tasks(tasks, {t.id: resolve_graders(t) for t in tasks}, backend=backend, image=image,
                                jobs=jobs, progress=lambda r: show_adequacy(r, roots[r.task_id]))
    weak = [r.task_id for r in reports if not r.ok]
    if weak:
        click.echo(f"weak: {', '.join(weak)}: add the held-out tests that kill the survivors above, or record "
                   "them as equivalent (docs/adequacy.md)")
