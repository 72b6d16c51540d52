"""`endstate tasks import`: tasks from an evaluation set in another format. endstate.authoring
makes them; for SWE-bench this command then checks each and keeps those that check out."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from endstate.cli._adequacy import ADEQUACY_OPTION, report_made
from endstate.cli._errors import _user_errors

__all__ = ["import_group", "show_check", "why_not"]


def show_check(report) -> None:
    """One `tasks check` row, and a line for each case that did not come out as expected."""
    mark = "ok  " if report.ok else "FAIL"
    detail = report.error or ", ".join(
        f"{r.case}={r.outcome}" + (f"[{'/'.join(r.failing)}]" if r.failing else "") for r in report.rows
    )
    click.echo(f"{mark} {report.task_id:40s} {detail}")
    for row in report.rows:
        if not row.ok:
            click.echo(f"       {row.case}: expected {row.expected}, got {row.outcome}: {row.note}")
        elif row.note:  # ok, with something the author should know (too few impossible twins)
            click.echo(f"       {row.case}: {row.note}")


def why_not(check) -> str:
    """Why a task does not check out, as one line: its error, or each case that came out wrong."""
    return check.error or "; ".join(f"{r.case}: expected {r.expected}, got {r.outcome}" + (f" ({r.note[:400]})" if r.note else "")
                                    for r in check.rows if not r.ok)


@click.group("import")
def import_group() -> None:
    """Tasks from an evaluation set in another format."""


@import_group.command("swebench")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--repos", type=click.Path(exists=True, file_okay=False, path_type=Path), required=True,
              help="Folder of local clones: owner__name, owner/name or name (.git optional).")
@click.option("--out", type=click.Path(path_type=Path), default=Path("tasks"), show_default=True,
              help="Folder the tasks are written into.")
@click.option("-j", "--jobs", type=click.IntRange(1, 64), default=2, show_default=True)
@click.option("--sandbox", type=click.Choice(["auto", "docker", "local"]), default="auto", show_default=True)
@click.option("--image", default=None, help="Sandbox image (default: endstate's own).")
@click.option("--dockerfile", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="Give every task this image (copied to image/Dockerfile), not one made from the project's "
                   "declared dependencies.")
@ADEQUACY_OPTION
@_user_errors
def tasks_import_swebench(file: Path, repos: Path, out: Path, jobs: int, sandbox: str, image: str | None,
                          dockerfile: Path | None, adequacy: bool) -> None:
    """One checked task per instance of a SWE-bench JSONL file, from local clones (no network)."""
    from endstate.authoring import import_swebench, keep_checked
    from endstate.checks import check_tasks
    from endstate.run import resolve_graders
    from endstate.sandbox import DEFAULT_IMAGE, resolve_backend
    from endstate.task import load_task

    backend, image = resolve_backend(sandbox), image or DEFAULT_IMAGE
    report = import_swebench(file, repos, out, backend=backend, image=image, dockerfile=dockerfile, log=click.echo)
    tasks = [load_task(Path(folder)) for _, folder in report.made.values()]
    if tasks:  # made, then checked: what does not check out is removed and said why
        click.echo(f"checking {len(tasks)} task(s) (fixture, solution, each hack, reference)")
    for check in check_tasks(tasks, {t.id: resolve_graders(t) for t in tasks}, backend=backend, image=image,
                             jobs=jobs, progress=show_check):
        keep_checked(report, check.task_id, None if check.ok else why_not(check))
    if adequacy:
        kept = set(report.written)
        report_made([t for t in tasks if t.id in kept], backend=backend, image=image, jobs=jobs)
    for skipped in report.skipped:
        click.echo(f"endstate: not written: {skipped.reason}", err=True)
    click.echo(f"{len(report.written)} task(s) written to {out} and checked"
               + (f"; {len(report.skipped)} instance(s) not written" if report.skipped else ""))
    if report.skipped:
        sys.exit(2 if report.bad_input else 1)


@import_group.command("harbor")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--out", type=click.Path(path_type=Path), default=Path("tasks"), show_default=True,
              help="Folder the tasks are written into.")
@click.option("--base", default=None,
              help="Build each task's Dockerfile FROM this image instead (e.g. endstate-sandbox:2).")
@click.option("--base-image", "base_image", multiple=True, metavar="FROM=TO",
              help="Where a Dockerfile builds FROM the image FROM, build FROM TO instead (repeatable).")
@_user_errors
def tasks_import_harbor(paths: tuple[Path, ...], out: Path, base: str | None, base_image: tuple[str, ...]) -> None:
    """One task per Harbor task folder (or dataset folder of them), graded by its tests/test.sh."""
    from endstate.authoring import base_images, import_harbor

    written = import_harbor(list(paths), out, base=base, images=base_images(base_image), log=click.echo)
    click.echo(f"{len(written)} task(s) written to {out}: check them with `endstate tasks check --suite {out}`")
