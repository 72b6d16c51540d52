"""`endstate export`: a run written in another tool's format. The writers are endstate.report's."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from endstate.errors import UserError

__all__ = ["export_command"]


@click.command("export")
@click.argument("run", type=click.Path(path_type=Path))
# A plain string, not a click.Choice: an unknown format is one line from export_run, not a usage screen.
@click.option("--format", "format_", required=True,
              help="atif: one Harbor ATIF trajectory per task; inspect: one Inspect .eval log.")
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="Where to write (default: RUN/atif/ or RUN/inspect.eval).")
def export_command(run: Path, format_: str, out: Path | None) -> None:
    """Write a run's trajectories and verdicts in a format other tools read (docs/export.md)."""
    from endstate.report import export_run

    try:
        report = export_run(run, format_, out)
    except UserError as exc:
        click.echo(f"endstate: error: {exc}", err=True)
        sys.exit(exc.exit_code)
    for stem, why in report.missing.items():
        click.echo(f"endstate: task {stem} not exported: {why}", err=True)
    click.echo(f"{len(report.exported)} task attempt(s) written to {report.path}"
               + (f"; {len(report.missing)} left out (above)" if report.missing else ""))
    if report.missing:
        sys.exit(1)
