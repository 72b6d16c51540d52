"""`endstate grade` and `endstate regrade`: an end state graded outside a run.

`grade` is the command auditors and CI scripts call: one line, and an exit code a script
can branch on (GRADE_EXIT). `regrade` grades a run's kept end states again with the tasks
as they are now and writes a new run beside the old, which `compare` pairs with it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from endstate.cli._errors import _user_errors
from endstate.errors import SandboxError, UserError

__all__ = ["GRADE_EXIT", "grade_command", "regrade_command"]

#: `endstate grade`'s exit code per outcome; bad input (a missing folder, a broken task) exits 2.
GRADE_EXIT = {"pass": 0, "fail": 1, "error": 3}


def _one_line(text: str) -> str:
    return " ".join(text.split())


@click.command("grade")
@click.option("--task", "task_dir", required=True, type=click.Path(path_type=Path), help="The task's folder.")
@click.option("--tree", "tree_dir", required=True, type=click.Path(path_type=Path),
              help="The end state: the folder that stands for the agent's /workspace.")
@click.option("--sandbox", type=click.Choice(["auto", "docker", "local"]), default="auto", show_default=True)
@click.option("--image", default=None, help="Sandbox image (default: endstate's own).")
def grade_command(task_dir: Path, tree_dir: Path, sandbox: str, image: str | None) -> None:
    """Grade TREE as an end state of TASK: PASS (exit 0), FAIL (1), bad input (2), could not grade (3)."""
    from endstate.grading import Outcome
    from endstate.run import grade_tree
    from endstate.sandbox import DEFAULT_IMAGE, resolve_backend
    from endstate.task import load_task

    try:
        if not (task_dir / "task.toml").is_file():
            raise UserError(f"--task {task_dir}: no task.toml there (pass a task's folder, e.g. tasks/<id>)")
        task = load_task(task_dir)
        verdict = grade_tree(task, tree_dir, resolve_backend(sandbox), image or DEFAULT_IMAGE)
    except UserError as exc:
        click.echo(f"endstate: error: {_one_line(str(exc))}", err=True)
        sys.exit(exc.exit_code)
    except SandboxError as exc:  # the machinery, not the end state: no verdict
        click.echo(f"ERROR {task_dir.name}: the sandbox failed: {_one_line(str(exc))}")
        sys.exit(GRADE_EXIT["error"])
    why = f": {verdict.failing_grader}: {_one_line(verdict.reason)}" if verdict.outcome is not Outcome.PASS else ""
    click.echo(f"{verdict.outcome.upper()} {task.id}{why}")
    sys.exit(GRADE_EXIT[verdict.outcome])


@click.command("regrade")
@click.argument("run", type=click.Path(path_type=Path))
@click.option("--suite", type=click.Path(path_type=Path), default=Path("tasks"), show_default=True,
              help="The tasks as they are now (a changed verifier or held-out set).")
@click.option("--out", type=click.Path(path_type=Path), default=None, help="The new run folder (default: RUN-regrade).")
@_user_errors
def regrade_command(run: Path, suite: Path, out: Path | None) -> None:
    """Grade RUN's kept end states again with the tasks of --suite; no agent runs, no model is asked."""
    from endstate.run import regrade_run

    out = out or run.with_name(run.name + "-regrade")
    if (out / "results.json").exists() or (out / "run.json").exists():
        raise UserError(f"--out {out} already holds a run (results.json or run.json): pass another --out")
    result = regrade_run(run, suite, out, log=click.echo)
    click.echo(f"{len(result.tasks)} attempt(s) graded again in {out}; pair them with `endstate compare {run} {out}`")
