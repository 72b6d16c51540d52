"""How a command ends on an error: one line and an exit code, never a traceback for bad input."""

from __future__ import annotations

import errno
import sys
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Any

import click

from endstate.errors import EndstateError, UserError, cannot_write

__all__ = ["_user_errors"]


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
            if exc.errno not in (errno.EROFS, errno.ENOSPC, errno.EDQUOT):
                raise
            click.echo(f"endstate: error: {cannot_write(Path(exc.filename or '.').parent, exc)}", err=True)
            sys.exit(2)
        except KeyboardInterrupt:
            click.echo("endstate: interrupted; finished results are on disk, sandboxes removed", err=True)
            sys.exit(130)

    return wrapper
