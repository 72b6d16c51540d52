"""`endstate export`: a run written in another tool's format. The writers are endstate.report's."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from endstate.errors import UserError

__all__ = ["export_command"]


@click.command("export")
@click.argument("run", type=click.Path(path_type=Path), required=False)
# A plain string, not a click.Choice: an unknown format is one line from export_run, not a usage screen.
@click.option("--format", "format_", required=True,
              help="atif: one Harbor ATIF trajectory per task; inspect: one Inspect .eval log; "
                   "harbor: the tasks of --suite as Harbor tasks.")
@click.option("--suite", type=click.Path(path_type=Path), default=None,
              help="With --format harbor: the tasks to write.")
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="Where to write (default: RUN/atif/ or RUN/inspect.eval; runs/harbor/SUITE/ for harbor).")
@click.option("--overwrite", is_flag=True, help="Replace what an earlier export wrote there.")
def export_command(run: Path | None, format_: str, suite: Path | None, out: Path | None, overwrite: bool) -> None:
    """Write a run's trajectories and verdicts, or a suite's tasks, in a format other tools read (docs/export.md)."""
    from endstate.report import export_run

    try:
        if format_ == "harbor":
            return _export_tasks(run, suite, out, overwrite)
        if run is None:
            raise UserError(f"export --format {format_} takes a run folder: `endstate export RUN --format {format_}`")
        report = export_run(run, format_, out, overwrite=overwrite)
    except UserError as exc:
        click.echo(f"endstate: error: {exc}", err=True)
        sys.exit(exc.exit_code)
    for stem, why in report.missing.items():
        click.echo(f"endstate: task {stem} not exported: {why}", err=True)
    click.echo(f"{len(report.exported)} task attempt(s) written to {report.path}"
               + (f"; {len(report.missing)} left out (above)" if report.missing else ""))
    if report.missing:
        sys.exit(1)


def _export_tasks(run: Path | None, suite: Path | None, out: Path | None, overwrite: bool) -> None:
    """`export --format harbor --suite S`: every task of S as a Harbor task in --out."""
    from endstate.authoring import export_harbor_task
    from endstate.task import load_suite

    if run is not None or suite is None:
        raise UserError("export --format harbor writes tasks, not a run: "
                        "`endstate export --format harbor --suite tasks`")
    tasks, errors = load_suite(suite)
    if errors:
        raise UserError(str(errors[0]))
    out = out or Path("runs") / "harbor" / suite.resolve().name  # never beside the suite: tasks-harbor/ is imports
    held = next((out / task.id for task in tasks if (out / task.id).exists()), None)
    if held is not None and not overwrite:
        raise UserError(f"{held} already exists (an earlier export, maybe edited since): pass --overwrite to "
                        "replace it, or another --out")
    left_out = []
    for task in tasks:
        try:
            lost = export_harbor_task(task, out)
        except UserError as exc:
            left_out.append(task.id)
            click.echo(f"endstate: {exc}", err=True)
            continue
        if lost:
            click.echo(f"task {task.id}: its verifier does not do {', '.join(lost)} "
                       "(docs/harbor.md#exporting-endstates-tasks-as-harbor-tasks)")
    click.echo(f"{len(tasks) - len(left_out)} task(s) written to {out}"
               + (f"; {len(left_out)} left out" if left_out else ""))
    if left_out:
        sys.exit(1)
