"""How a command ends on an error: one line and an exit code, never a traceback for bad input."""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import sys
from collections.abc import Callable, Iterator
from functools import wraps
from pathlib import Path
from typing import Any

import click

from endstate.errors import EndstateError, UserError, cannot_write

__all__ = ["_unmade_on_error", "_user_errors"]


def _user_errors(command: Callable[..., Any]) -> Callable[..., Any]:
    @wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except UserError as exc:
            click.echo(f"endstate: error: {exc}", err=True)
            sys.exit(exc.exit_code)
        except EndstateError as exc:
            click.echo(f"endstate: {type(exc).__name__}: {exc}", err=True)
            sys.exit(1)
        except OSError as exc:  # a write no helper caught, to a full or read-only folder: one line all the same
            exc = _copy_error(exc)
            if exc.errno not in (errno.EROFS, errno.ENOSPC, errno.EDQUOT):
                raise
            flag, folder = _output_option()
            if exc.filename:
                folder = Path(exc.filename).parent
            click.echo(f"endstate: error: {cannot_write(folder or '.', exc, flag)}", err=True)
            sys.exit(2)
        except KeyboardInterrupt:
            click.echo(f"endstate: interrupted; {_kept_on_interrupt()}", err=True)
            sys.exit(130)

    return wrapper


def _kept_on_interrupt() -> str:
    """What an interrupted command leaves: a run (eval, record) keeps its finished tasks, to resume;
    other commands (tasks check, grade, ...) write no result to keep, and say none."""
    context = click.get_current_context(silent=True)
    if context is not None and context.info_name in ("eval", "record"):
        return "finished results are on disk, sandboxes removed: the same command with --resume continues the run"
    return "sandboxes removed"


#: The options a command names where it writes with, the first a command has being the one to name.
_OUTPUT_OPTIONS = (("out", "--out"), ("json_out", "--json"), ("cassettes", "--cassettes"), ("suite", "--suite"))


def _output_option() -> tuple[str, Path | None]:
    """The option that chose where the running command writes (and its value, None for its
    default), for the fix to name: `tasks new` writes into --suite, eval into --out."""
    context = click.get_current_context(silent=True)
    params = context.params if context is not None else {}
    for name, flag in _OUTPUT_OPTIONS:
        if name in params:
            return flag, None if params[name] is None else Path(params[name])
    return "--out", None


def _copy_error(exc: OSError) -> OSError:
    """shutil.copytree gathers its failures into one shutil.Error (no errno, the first failure
    only as text): the first failure as the OSError it was, so a full disk reads as one."""
    if not isinstance(exc, shutil.Error) or not exc.args or not isinstance(exc.args[0], list) or not exc.args[0]:
        return exc
    _, dst, why = exc.args[0][0]
    code = re.match(r"\[Errno (\d+)\]", str(why))
    return OSError(int(code.group(1)), os.strerror(int(code.group(1))), dst) if code else exc


@contextlib.contextmanager
def _unmade_on_error(folder: Path) -> Iterator[None]:
    """Remove `folder` when the block fails having made it (a full disk mid-write): a half-written
    folder would be mistaken for a finished one, or refuse the next try as already there."""
    made = not folder.exists()
    try:
        yield
    except BaseException:
        if made:
            shutil.rmtree(folder, ignore_errors=True)
        raise
