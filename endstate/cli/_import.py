"""`endstate tasks import`: tasks from an evaluation set in another format. endstate.authoring
makes them; for SWE-bench this command then checks each and keeps those that check out."""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

import click

from endstate.cli._adequacy import ADEQUACY_OPTION, report_made
from endstate.cli._errors import _user_errors
from endstate.cli._run import FOLDER

__all__ = ["import_group", "show_check", "why_not", "cause_of", "summary"]


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


def why_not(check, passing_fixture: str = "") -> str:
    """Why a task does not check out, as one line: its error, or each case that came out wrong
    (`passing_fixture`: what a fixture that passed every grader is said to mean, where the caller knows)."""
    def note(row) -> str:
        return passing_fixture if passing_fixture and row.case == "fixture" and row.outcome == "pass" else row.note
    return check.error or "; ".join(f"{r.case}: expected {r.expected}, got {r.outcome}" + (f" ({note(r)[:400]})" if note(r) else "")
                                    for r in check.rows if not r.ok)


#: A SWE-bench record's fixture that passes: SWE-bench lists as FAIL_TO_PASS what failed in its run of the base
#: commit, which a flaky or unreachable service can have failed (requests 863's and 1724's httpbin.org tests,
#: none of them the fix's).
_PASSING_BASE = ("the base commit passes every FAIL_TO_PASS test in the task's image, which SWE-bench's run of it saw "
                 "fail: an empty patch would pass")


@click.group("import")
def import_group() -> None:
    """Tasks from an evaluation set in another format."""


@import_group.command("swebench")
@click.argument("source")
@click.option("--repos", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
              help="Folder of local clones: owner__name, owner/name or name (.git optional).")
@click.option("--images", type=click.Choice(["swebench"]), default=None,
              help="Each task's image and fixture are SWE-bench's own image of the instance (no clone needed).")
@click.option("--images-registry", default="swebench", show_default=True, metavar="[HOST:PORT/]NAMESPACE",
              help="Where --images swebench pulls from (Docker Hub's swebench unless told).")
@click.option("--out", type=FOLDER, default=Path("imported"), show_default=True,
              help="Folder the tasks are written into (not the shipped suite `tasks`, unless you say so).")
@click.option("--split", default="test", show_default=True, help="The split of a dataset given by name.")
@click.option("--instance", "instances", multiple=True, metavar="ID", help="Only this instance (repeatable).")
@click.option("--filter", "pattern", default="", metavar="REGEX", help="Only the instances whose id it matches.")
@click.option("--repo", "repos_named", multiple=True, metavar="OWNER/NAME",
              help="Only the instances of this repository (repeatable).")
@click.option("-j", "--jobs", type=click.IntRange(1, 64), default=2, show_default=True)
@click.option("--sandbox", type=click.Choice(["auto", "docker", "local"]), default="auto", show_default=True)
@click.option("--image", default=None, help="Sandbox image (default: endstate's own).")
@click.option("--dockerfile", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="Give every task this image (copied to image/Dockerfile), not one made from the project's "
                   "declared dependencies.")
@ADEQUACY_OPTION
@_user_errors
def tasks_import_swebench(source: str, repos: Path | None, images: str | None, images_registry: str, out: Path,
                          split: str, instances: tuple[str, ...], pattern: str, repos_named: tuple[str, ...], jobs: int,
                          sandbox: str, image: str | None, dockerfile: Path | None, adequacy: bool) -> None:
    """One checked task per instance of a SWE-bench dataset, from local clones, or in SWE-bench's own
    instance images (--images swebench: no clone needed).

    SOURCE is the dataset: a parquet file (as published; needs pyarrow), a JSON list, a JSONL file,
    or a dataset name read through the `datasets` library (the `swebench` extra) where the Hub is in reach.
    """
    from endstate.authoring import Selection, import_swebench, keep_checked
    from endstate.checks import check_tasks
    from endstate.run import resolve_graders
    from endstate.sandbox import DEFAULT_IMAGE, resolve_backend
    from endstate.task import load_task

    if repos is None and images is None:
        raise click.UsageError("give --repos (a folder of local clones) or --images swebench")
    if images and dockerfile:
        raise click.UsageError("--images swebench and --dockerfile both name the tasks' image: keep one")
    backend, image = resolve_backend(sandbox), image or DEFAULT_IMAGE
    if images and backend != "docker":
        raise click.UsageError("--images swebench needs a Docker engine: its tasks run in SWE-bench's images")
    select = Selection(ids=instances, pattern=pattern, repos=repos_named)
    report = import_swebench(source, repos, out, backend=backend, image=image, dockerfile=dockerfile, split=split,
                             select=select, images=images_registry if images else None, log=click.echo,
                             refused=lambda skipped, seconds: _outcome(skipped.instance_id, seconds, skipped.reason),
                             jobs=jobs)
    tasks = [load_task(Path(folder)) for _, folder in report.made.values()]
    if tasks:  # made, then checked: what does not check out is removed and said why
        click.echo(f"checking {len(tasks)} task(s) (fixture, solution, each hack, reference)")

    def checked(check) -> None:
        show_check(check)
        why = None if check.ok else why_not(check, _PASSING_BASE)
        keep_checked(report, check.task_id, why)
        _outcome(check.task_id, report.seconds.get(check.task_id, 0.0) + check.seconds,
                 None if why is None else f"does not check out: {why}")

    check_tasks(tasks, {t.id: resolve_graders(t) for t in tasks}, backend=backend, image=image, jobs=jobs,
                progress=checked)
    if adequacy:
        kept = set(report.written)
        report_made([t for t in tasks if t.id in kept], backend=backend, image=image, jobs=jobs)
    for skipped in report.skipped:
        click.echo(f"endstate: not written: {skipped.reason}", err=True)
    click.echo(summary(report))
    click.echo(f"{len(report.written)} task(s) written to {out} and checked"
               + (f"; {len(report.skipped)} instance(s) not written" if report.skipped else ""))
    if report.skipped:
        sys.exit(2 if report.bad_input else 1)


#: How much of why an instance was refused its progress line shows (the whole reason is listed at the end).
_LINE_REASON = 300


def _outcome(instance_id: str, seconds: float, reason: str | None) -> None:
    """One instance's line, as it is settled: its id, ok or refused with the cause, and the seconds of work."""
    if reason is None:
        click.echo(f"ok       {instance_id}  {seconds:.0f} s")
        return
    cause = _without_id(reason, instance_id)
    cause = cause if len(cause) <= _LINE_REASON else cause[:_LINE_REASON - 3] + "..."
    click.echo(f"refused  {instance_id or '-'}  {seconds:.0f} s  {cause}")


def _without_id(reason: str, instance_id: str) -> str:
    for prefix in (f"instance {instance_id}: ", f"instance {instance_id} "):
        if instance_id and reason.startswith(prefix):
            return reason[len(prefix):]
    return reason


def cause_of(reason: str, instance_id: str) -> str:
    """The kind of a refusal, for the summary: its reason up to the first detail (`field `patch` does
    not apply at base_commit`, `does not check out (solution)`, `no clone of django/django ...`), with
    what differs from one instance to the next (the id quoted, a count) left out."""
    text = _without_id(reason, instance_id)
    if text.startswith("does not check out: "):
        return "does not check out (" + re.split(r": | \(", text[len("does not check out: "):], maxsplit=1)[0] + ")"
    if " (instance " in text.split(": ", 1)[0]:  # a record of the file that does not decode
        text = text.split(": ", 1)[1] if ": " in text else text
    text = re.sub(r"holds (['\"]).*?\1(?=, which)", "holds an id", text)
    # Which test: the instance's own (`test ID (and N more of FAIL_TO_PASS) needs the network`, `fails ID`).
    text = re.sub(r"\btest \S+::\S+(?: \(and \d+ more of [^)]*\))? needs", "a test needs", text)
    text = re.sub(r"\bfails \S+::\S+(?: \(and \d+ more\))?", "fails a test", text)
    text = re.sub(r"(needs the network) \([^)]*\)", r"\1", text)  # whichever host it names
    head, _, rest = text.partition(": ")
    if re.fullmatch(r"field `\w+`", head) and rest:  # the field alone says too little: what is wrong with it
        head += ": " + re.sub(r"\d+", "N", re.split(r": | \(", rest, maxsplit=1)[0])
    return re.split(r" \(", head, maxsplit=1)[0][:120]


def summary(report) -> str:
    """`checked out N of M`, and the refused counted by cause, most first."""
    total = len(report.written) + len(report.skipped)
    causes = Counter(cause_of(s.reason, s.instance_id) for s in report.skipped)
    ranked = sorted(causes.items(), key=lambda item: (-item[1], item[0]))
    return (f"checked out {len(report.written)} of {total}"
            + ("; refused: " + "; ".join(f"{n} {cause}" for cause, n in ranked) if ranked else ""))


@import_group.command("harbor")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--out", type=FOLDER, default=Path("imported"), show_default=True,
              help="Folder the tasks are written into (not the shipped suite `tasks`, unless you say so).")
@click.option("--overwrite", is_flag=True, help="Replace tasks already in --out (an edited prompt.md with them).")
@click.option("--base", default=None,
              help="Build each task's Dockerfile FROM this image instead (e.g. endstate-sandbox:2).")
@click.option("--base-image", "base_image", multiple=True, metavar="FROM=TO",
              help="Where a Dockerfile builds FROM the image FROM, build FROM TO instead (repeatable).")
@_user_errors
def tasks_import_harbor(paths: tuple[Path, ...], out: Path, overwrite: bool, base: str | None,
                        base_image: tuple[str, ...]) -> None:
    """One task per Harbor task folder (or dataset folder of them), graded by its tests/test.sh."""
    from endstate.authoring import base_images, import_harbor

    written = import_harbor(list(paths), out, base=base, images=base_images(base_image), log=click.echo,
                            overwrite=overwrite)
    click.echo(f"{len(written)} task(s) written to {out}: check them with `endstate tasks check --suite {out}`")
