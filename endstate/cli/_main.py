"""The command line: parse, call one library function, print.

User errors (bad manifests, unknown providers, missing cassettes, no engine) are
printed as one line and exit with code 2; nothing here prints a traceback for them.
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from typing import Any

import click

from endstate import __version__
from endstate.cli._adequacy import ADEQUACY_OPTION, report_made
from endstate.cli._errors import _unmade_on_error, _user_errors
from endstate.cli._export import export_command
from endstate.cli._fork import _eval_fork, _not_plain_record, _record_options, _replay_options
from endstate.cli._grade import grade_command, regrade_command
from endstate.cli._import import import_group, show_check
from endstate.cli._run import FOLDER, _load, _reap, _run, _run_options, _slug
from endstate.errors import UserError

__all__ = ["main"]


@click.group()
@click.version_option(__version__, prog_name="endstate")
def main() -> None:
    """Evaluate coding agents by the end state they leave in a sandbox."""
    # A CI job being cancelled sends SIGTERM: clean up as for Ctrl-C (results kept,
    # sandboxes removed) instead of dying with containers left behind. A command started
    # in the background by a script inherits SIGINT ignored: handle it all the same.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _terminate)


def _terminate(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


# -- tasks -----------------------------------------------------------------------------
@main.group()
def tasks() -> None:
    """Inspect and check the task suite."""


@tasks.command("check")
@click.option("--suite", type=click.Path(path_type=Path), default=Path("tasks"), show_default=True)
@click.option("--task", "only", multiple=True, help="Check only this task id (repeatable).")
@click.option("-j", "--jobs", type=click.IntRange(1, 64), default=2, show_default=True)
@click.option("--sandbox", type=click.Choice(["auto", "docker", "local"]), default="auto", show_default=True)
@click.option("--image", default=None, help="Sandbox image (default: endstate's own).")
@_user_errors
def tasks_check(suite: Path, only: tuple[str, ...], jobs: int, sandbox: str, image: str | None) -> None:
    """Graders must FAIL on the fixture, PASS with solution/, FAIL on every hack."""
    from endstate.checks import check_catchers, check_tasks
    from endstate.run import resolve_graders
    from endstate.sandbox import DEFAULT_IMAGE, resolve_backend
    from endstate.task import load_suite

    _reap()

    loaded, errors = load_suite(suite, only=list(only) or None)
    for error in errors:
        click.echo(f"endstate: error: {error}", err=True)
    graders, usable = {}, []
    for task in loaded:
        try:
            graders[task.id] = resolve_graders(task)
            check_catchers(task, graders[task.id])
            usable.append(task)
        except UserError as exc:
            errors.append(exc)
            click.echo(f"endstate: error: {exc}", err=True)
    for task in usable:
        if not (task.root / "probe").is_dir():
            click.echo(f"endstate: warning: task {task.id} has no probe/: nothing checks it outside a test process; "
                       "add probe/probe.py and probe/expected.json (see docs/tasks.md#the-probe)", err=True)
    backend = resolve_backend(sandbox)
    click.echo(f"checking {len(usable)} task(s) in {backend} sandboxes, -j {jobs}")

    reports = check_tasks(usable, graders, backend=backend, image=image or DEFAULT_IMAGE, jobs=jobs,
                          progress=show_check)
    bad = [r for r in reports if not r.ok]
    click.echo(f"{len(reports) - len(bad)} of {len(reports)} task(s) check out"
               + (f"; {len(errors)} failed to load" if errors else ""))
    if errors:
        sys.exit(2)
    if bad:
        sys.exit(1)


@tasks.command("adequacy")
@click.option("--suite", type=click.Path(path_type=Path), default=Path("tasks"), show_default=True)
@click.option("--task", "only", multiple=True, help="Measure only this task id (repeatable).")
@click.option("-j", "--jobs", type=click.IntRange(1, 64), default=2, show_default=True)
@click.option("--sandbox", type=click.Choice(["auto", "docker", "local"]), default="auto", show_default=True)
@click.option("--image", default=None, help="Sandbox image (default: endstate's own).")
@click.option("--json", "json_out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write every task's rows (with its wall time) to this JSON file.")
@_user_errors
def tasks_adequacy(suite: Path, only: tuple[str, ...], jobs: int, sandbox: str, image: str | None,
                   json_out: Path | None) -> None:
    """Wrong fixes (mutants of solution/) must FAIL; right fixes and rewrites of it must PASS."""
    from endstate.cli._adequacy import measure

    _reap()
    sys.exit(measure(suite, list(only), jobs=jobs, sandbox=sandbox, image=image, json_out=json_out))


@tasks.command("new")
@click.argument("task_id")
@click.option("--suite", type=click.Path(path_type=Path), default=Path("tasks"), show_default=True,
              help="Folder the task is written into.")
@click.option("--repo", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
              help="A local git repository holding the fix.")
@click.option("--fix", default=None, help="The fix: a commit (its parent is the fixture) or a range A..B.")
@click.option("--tests", "test_globs", multiple=True,
              help="Glob of test files (repeatable; default: tests/**, test_*.py, *_test.py, conftest.py ...).")
@click.option("--visible-tests", is_flag=True, help="Put the fix's tests in the fixture too (the agent sees them).")
@click.option("--dockerfile", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="Give the task its own image, built from this Dockerfile (copied to image/Dockerfile).")
@click.option("--test-command", default=None,
              help="How the project's tests run, without targets (e.g. 'PYTHONPATH=src python -m pytest -q'); "
                   "default: read from the project's layout and test configuration.")
@click.option("--issue", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="A file with the bug report the fix answers; its text joins the prompt.")
@click.option("--sandbox", type=click.Choice(["auto", "docker", "local"]), default="auto", show_default=True)
@click.option("--image", default=None, help="Sandbox image (default: endstate's own).")
@ADEQUACY_OPTION
@_user_errors
def tasks_new(task_id: str, suite: Path, repo: Path | None, fix: str | None, test_globs: tuple[str, ...],
              visible_tests: bool, dockerfile: Path | None, test_command: str | None, issue: Path | None,
              sandbox: str, image: str | None, adequacy: bool) -> None:
    """A task from a fix commit (--repo, --fix), checked; or a blank, documented skeleton."""
    from endstate.authoring import DEFAULT_TEST_GLOBS, new_blank_task, new_task_from_fix
    from endstate.checks import check_tasks
    from endstate.run import resolve_graders
    from endstate.sandbox import DEFAULT_IMAGE, resolve_backend
    from endstate.task import load_task

    if (repo is None) != (fix is None):
        raise UserError("--repo and --fix go together: the repository and the commit that fixed the bug")
    if repo is None:
        with _unmade_on_error(suite / task_id):  # no half-written skeleton to refuse the next try
            folder = new_blank_task(task_id, suite=suite)
        click.echo(f"wrote {folder}: fill it in, then `endstate tasks check --suite {suite} --task {task_id}`")
        return
    backend = resolve_backend(sandbox)
    folder = new_task_from_fix(task_id, repo=repo, fix=fix, suite=suite, backend=backend, image=image or DEFAULT_IMAGE,
                               test_globs=test_globs or DEFAULT_TEST_GLOBS, visible_tests=visible_tests,
                               dockerfile=dockerfile, test_command=test_command, issue=issue, log=click.echo)
    click.echo(f"wrote {folder}; prompt.md is the commit message: rewrite it as the bug report an agent gets")
    click.echo(f"checking {folder} (fixture, solution, each hack, reference)")
    task = load_task(folder)
    reports = check_tasks([task], {task.id: resolve_graders(task)}, backend=backend, image=image or DEFAULT_IMAGE,
                          progress=show_check)
    if adequacy:
        report_made([task] if reports[0].ok else [], backend=backend, image=image or DEFAULT_IMAGE)
    sys.exit(0 if all(r.ok for r in reports) else 1)


# -- image -----------------------------------------------------------------------------
@main.group()
def image() -> None:
    """The sandbox image."""


@image.command("build")
@click.option("--tag", default=None, help="Image tag (default: endstate's own).")
@click.option("--seed", "offline_seed", type=click.Choice(["auto", "always", "never"]), default="auto",
              show_default=True, help="Seed the base image with debootstrap when it cannot be pulled.")
@_user_errors
def image_build(tag: str | None, offline_seed: str) -> None:
    """Build the sandbox image (seeding its base offline where no registry answers), and on it the
    harness's runtime every grading container mounts."""
    from endstate.sandbox import DEFAULT_IMAGE, build_image, connect, runtime_volume

    image_id = build_image(tag or DEFAULT_IMAGE, offline_seed=offline_seed, log=lambda line: click.echo(line))
    if (tag or DEFAULT_IMAGE) == DEFAULT_IMAGE:
        click.echo(f"the harness's runtime: volume {runtime_volume(connect(), lambda line: click.echo(line))}")
    click.echo(f"{tag or DEFAULT_IMAGE} {image_id}")


# -- eval and record ----------------------------------------------------------------------
@main.command("eval")
@_run_options
@_replay_options
@click.option("--repeat", type=click.IntRange(1, 20), default=1, show_default=True,
              help="Run the suite N times and compare pass/fail vectors and tree hashes.")
@click.option("--expect", type=click.Choice(["pass", "fail"]), default=None,
              help="Exit non-zero unless every task has this outcome (for control arms).")
@click.option("--overwrite", is_flag=True, help="Replace the run an --out folder already holds.")
@_user_errors
def eval_command(suite: Path, only: tuple[str, ...], out: Path | None, replay: Path | None, match: str,
                 repeat: int, expect: str | None, overwrite: bool, fork_at: int | None, **kwargs: Any) -> None:
    """Run the suite against a model, live or replayed from cassettes, and grade it."""
    if overwrite and kwargs["resume"]:  # one keeps the run in --out, the other replaces it
        raise click.UsageError("--resume continues the run in --out and --overwrite replaces it: pass one of them")
    extra = {"mode": "replay", "cassettes": str(replay), "match": match} if replay else {}
    out, extra = _eval_fork(out, replay, fork_at, kwargs) if fork_at is not None else (out, extra)
    _run(suite, only, out, repeat, expect, replace_out=overwrite, **kwargs, **extra)


@main.command("record")
@_run_options
@_record_options
@_user_errors
def record_command(only: tuple[str, ...], out: Path | None, cassettes: Path | None, overwrite: bool,
                   record_mode: str | None, replay: Path | None, fork_at: int | None, **kwargs: Any) -> None:
    """A live run that records every model exchange into cassettes."""
    if not kwargs["model"]:
        raise click.UsageError("Missing option '--model'.")
    folder = cassettes or Path("cassettes") / _slug(kwargs["agent"], kwargs["model"])
    from endstate.cassettes import RunMode, cassette_file
    from endstate.run import attempt_stem

    if (special := _not_plain_record(folder, record_mode, replay, fork_at, kwargs["executor"])) is not None:
        return _run(kwargs.pop("suite"), only, out, 1, None, **kwargs, **special)
    if not overwrite and not kwargs["resume"]:  # resuming keeps finished tasks' cassettes, redoes the rest
        loaded, _ = _load(kwargs["suite"], only)
        paths = [cassette_file(folder, attempt_stem(t.id, k)) for t in loaded for k in range(kwargs["attempts"])]
        existing = [str(path) for path in paths if path.exists()]
        if existing:
            raise UserError(f"{len(existing)} cassette(s) already exist, e.g. {existing[0]}: "
                            "pass --overwrite to replace them, or --cassettes to write elsewhere")
    suite = kwargs.pop("suite")  # the folder is made once the run's checks passed (_run)
    _run(suite, only, out, 1, None, mode=RunMode.RECORD, cassettes=str(folder), overwrite=overwrite, **kwargs)


# -- mutation check -------------------------------------------------------------------------
@main.command("mutate")
@click.option("--suite", type=click.Path(path_type=Path), default=Path("tasks"), show_default=True)
@click.option("--replay", type=click.Path(path_type=Path), default=Path("cassettes/scripted-reference"),
              show_default=True, help="Cassettes of the known-fix arm to replay.")
@click.option("--model", default="scripted/reference", show_default=True, help="Model the cassettes were recorded with.")
@click.option("--mutant", "names", multiple=True, help="Run only this mutant (repeatable).")
@click.option("-j", "--jobs", type=click.IntRange(1, 64), default=2, show_default=True)
@click.option("--sandbox", type=click.Choice(["auto", "docker", "local"]), default="auto", show_default=True)
@click.option("--image", default=None)
@click.option("--out", type=click.Path(path_type=Path), default=Path("runs/mutate"), show_default=True)
@_user_errors
def mutate_command(suite: Path, replay: Path, model: str, names: tuple[str, ...], jobs: int, sandbox: str,
                   image: str | None, out: Path) -> None:
    """Disable one harness guard at a time; every mutant must turn its probe tasks red."""
    from endstate.cassettes import RunMode
    from endstate.checks import run_mutation_check, select_mutants
    from endstate.models import RunSettings
    from endstate.run import RunConfig
    from endstate.sandbox import DEFAULT_IMAGE
    from endstate.task import load_suite

    mutants = select_mutants(list(names))
    loaded, errors = load_suite(suite)
    for error in errors:
        click.echo(f"endstate: error: {error} (task skipped)", err=True)
    config = RunConfig(model=model, settings=RunSettings(), sandbox=sandbox, image=image or DEFAULT_IMAGE, jobs=jobs,
                       mode=RunMode.REPLAY, cassettes=str(replay), match="sequence")
    _reap()
    report = run_mutation_check(loaded, config, out, suite_root=suite, mutants=mutants, progress=click.echo)
    click.echo("")
    click.echo("control (every guard in place): " + ("as expected" if report.control_ok else "NOT as expected"))
    for task_id, outcome, why in report.control:
        click.echo(f"  {task_id:40s} {outcome}" + (f"  ({why[:80]})" if why else ""))
    killed = sum(m.killed for m in report.mutants)
    click.echo(f"{killed} of {len(report.mutants)} mutant(s) killed")
    sys.exit(0 if report.ok else 1)


# -- cassettes ------------------------------------------------------------------------------
@main.group()
def cassette() -> None:
    """Read and compare recordings."""


@cassette.command("show")
@click.argument("path", type=click.Path(path_type=Path))
@_user_errors
def cassette_show(path: Path) -> None:
    """Print a recording: its header, then each turn's request and response."""
    from endstate.cassettes import show

    click.echo(show(path))


@cassette.command("diff")
@click.argument("a", type=click.Path(path_type=Path))
@click.argument("b", type=click.Path(path_type=Path))
@_user_errors
def cassette_diff(a: Path, b: Path) -> None:
    """The first turn where two recordings of a task diverge. Exit 0 if identical, 1 if not."""
    from endstate.cassettes import diff

    identical, text = diff(a, b)
    click.echo(text)
    sys.exit(0 if identical else 1)


# -- local model ----------------------------------------------------------------------------
@main.command("serve-local")
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default=True,
              help="Loopback port to serve on; 0 picks a free one.")
@click.option("--n-ctx", type=click.IntRange(512, 8192), default=4096, show_default=True,
              help="Context window in tokens; a prompt that does not fit is refused with HTTP 400.")
@_user_errors
def serve_local(port: int, n_ctx: int) -> None:
    """Serve SmolLM2-135M with llama.cpp on this machine, in the foreground, until Ctrl-C."""
    from endstate.models import MODEL_ALIAS, LocalModelServer, describe_exit

    server = LocalModelServer(port=port, n_ctx=n_ctx, output=sys.stderr)
    click.echo("starting the llama.cpp server (its log follows on stderr)...", err=True)
    try:
        with server:
            click.echo(f"serving openai-compatible/{MODEL_ALIAS} at {server.base_url}")
            # tool_choice "required" is answered with HTTP 500 by this server (see endstate.models._local).
            click.echo(f"record with:  endstate record --model openai-compatible/{MODEL_ALIAS} "
                       f"--base-url {server.base_url} --tool-choice auto")
            click.echo("Ctrl-C stops the server")
            code = server.wait()
    except KeyboardInterrupt:
        click.echo("endstate: server stopped", err=True)
        return
    raise click.ClickException(f"the llama.cpp server {describe_exit(code)}")


# -- report ---------------------------------------------------------------------------------
@main.command("report")
@click.argument("runs", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--controls", type=click.Path(exists=True, path_type=Path), nargs=2, default=None,
              metavar="NULL_RUN REF_RUN", help="Run folders of the no-edit and known-fix arms every row is gated by.")
@click.option("--strict", is_flag=True, help="Exit 1 when any row is not verified by the control arms.")
@click.option("--prices", type=click.Path(exists=True, path_type=Path), default=None,
              help="TOML price table: [\"provider/model\"] input = USD per 1M tokens, output = ...")
@click.option("--out", type=FOLDER, default=None,
              help="Folder for report.json/.html [default: report/ in the run folder, or the runs' shared folder].")
@click.option("--overwrite", is_flag=True, help="Replace a report already in --out.")
@_user_errors
def report_command(runs: tuple[Path, ...], controls: tuple[Path, Path] | None, strict: bool, prices: Path | None,
                   out: Path | None, overwrite: bool) -> None:
    """The benchmark table and gated card over one or more run folders (JSON and HTML)."""
    from endstate.report import benchmark, check_priced, default_out, load_prices, render_text, write_report

    table = load_prices(prices)
    report = benchmark(list(runs), table, controls or None)
    if prices is not None:
        check_priced([row.model for row in report.rows], table, prices)
    json_path, html_path = write_report(report, out or default_out(list(runs), "report"), overwrite=overwrite)
    click.echo(render_text(report))
    click.echo(f"report: {json_path}, {html_path}")
    if strict and not report.verified:
        click.echo("endstate: --strict: a row is not verified by the control arms (reasons above)", err=True)
        sys.exit(1)


@main.command("compare")
@click.argument("base", type=click.Path(exists=True, path_type=Path))
@click.argument("cand", type=click.Path(exists=True, path_type=Path))
@click.option("--by", "by", type=click.Choice(["category"]), default=None, help="Also compare per category.")
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON.")
@_user_errors
def compare_command(base: Path, cand: Path, by: str | None, as_json: bool) -> None:
    """Pair two runs task by task: both rates, the paired difference, discordant counts, exact McNemar p."""
    import msgspec

    from endstate.report import compare_folders, render_comparison

    comparison = compare_folders(base, cand, by_category=by == "category")
    if as_json:
        click.echo(msgspec.json.format(msgspec.json.encode(comparison), indent=2))
    else:
        click.echo(render_comparison(comparison))


@main.command("view")
@click.argument("runs", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("-o", "--out", type=FOLDER, default=None,
              help="The HTML file [default: report.html in the run folder, or the runs' shared folder].")
@click.option("--overwrite", is_flag=True, help="Replace the file at --out if there is one.")
@click.option("--controls", type=click.Path(exists=True, path_type=Path), nargs=2, default=None,
              metavar="NULL_RUN REF_RUN", help="Control arms that gate the table (as for `report`).")
@click.option("--prices", type=click.Path(exists=True, path_type=Path), default=None, help="TOML price table.")
@_user_errors
def view_command(runs: tuple[Path, ...], out: Path | None, overwrite: bool, controls: tuple[Path, Path] | None,
                 prices: Path | None) -> None:
    """One self-contained, offline HTML file to read runs by: table, card, plots, every task's details.

    Given two or more runs of the same task pack, the page opens with the first paired
    against each other one: compare's figures, the flipped tasks, both sides of each."""
    from endstate.report import benchmark, check_priced, default_out, load_prices, write_view

    notes: list[str] = []
    table = load_prices(prices)
    if prices is not None:
        check_priced([row.model for row in benchmark(list(runs), table, None).rows], table, prices)
    path = write_view(list(runs), out or default_out(list(runs), "report.html"), table, controls or None,
                      notes, overwrite=overwrite)
    for note in notes:
        click.echo(f"endstate: {note}", err=True)
    click.echo(f"report: {path} ({path.stat().st_size // 1024} KiB; open it in any browser, offline)")


main.add_command(export_command)  # `endstate export`: endstate/cli/_export.py
main.add_command(grade_command)  # `endstate grade` and `regrade`: endstate/cli/_grade.py
main.add_command(regrade_command)
tasks.add_command(import_group)  # `endstate tasks import`: endstate/cli/_import.py
