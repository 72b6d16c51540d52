"""The one way tests run the real CLI: `python -m endstate ARGS` in a subprocess, output captured.

Tests take it as the `cli` fixture (tests/conftest.py), as pytest's own tests take
`pytester.run`; helper modules that build runs for several tests import `run_endstate`.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Long enough for an end-to-end run over a suite on a loaded machine; a hang still ends.
TIMEOUT_S = 1200.0


class Ran(subprocess.CompletedProcess):
    """A finished run of the CLI: `code`, `out` and `err` are short names for `returncode`,
    `stdout` and `stderr`; printed (as in an assertion message) it shows the ends of both streams."""

    @property
    def code(self) -> int:
        return self.returncode

    @property
    def out(self) -> str:
        return self.stdout

    @property
    def err(self) -> str:
        return self.stderr

    @property
    def output(self) -> str:
        """Both streams, stdout first: where a one-line error is looked for, whichever stream it is on."""
        return self.stdout + self.stderr

    def __repr__(self) -> str:
        return f"exit {self.code}\n--- stdout\n{self.out[-4000:]}\n--- stderr\n{self.err[-4000:]}"


def argv(*args: str, wrap: Callable[[list[str]], list[str]] | None = None, without: str = "") -> list[str]:
    """The command line; `without` names a package the CLI then cannot import, as if not installed."""
    if without:
        code = (f"import sys; sys.modules[{without!r}] = None; from endstate.cli import main; "
                "sys.argv = ['endstate', *sys.argv[1:]]; main()")
        command = [sys.executable, "-c", code, *args]
    else:
        command = [sys.executable, "-m", "endstate", *args]
    return wrap(command) if wrap is not None else command


def environment(env: Mapping[str, str] | None = None, unset: Iterable[str] = ()) -> dict[str, str]:
    """This process's environment with `env` laid over it and the names in `unset` taken out."""
    merged = {**os.environ, **(env or {})}
    for name in unset:
        merged.pop(name, None)
    return merged


def run_endstate(*args: str, env: Mapping[str, str] | None = None, unset: Iterable[str] = (), cwd: Path = ROOT,
                 timeout: float = TIMEOUT_S, wrap: Callable[[list[str]], list[str]] | None = None,
                 without: str = "") -> Ran:
    """Run `python -m endstate ARGS` to its end (`wrap` prefixes the command, as `unshare -n` does)."""
    done = subprocess.run(argv(*args, wrap=wrap, without=without), cwd=cwd, env=environment(env, unset), capture_output=True,
                          text=True, timeout=timeout)
    return Ran(done.args, done.returncode, done.stdout, done.stderr)


def invoke_endstate(*args: str, env: Mapping[str, str] | None = None) -> Ran:
    """Run the CLI in this process (click's CliRunner), for commands that end before any sandbox
    starts: the same `Ran`, without an interpreter's start-up."""
    from click.testing import CliRunner

    from endstate.cli import main

    result = CliRunner().invoke(main, list(args), env=dict(env or {}))
    return Ran(["endstate", *args], result.exit_code, result.stdout, result.stderr)


def start_endstate(*args: str, env: Mapping[str, str] | None = None, cwd: Path = ROOT, capture: bool = True,
                   new_session: bool = False) -> subprocess.Popen:
    """Start `python -m endstate ARGS` and return at once, for tests that signal or kill it: its output
    is captured (read it with `finish`) or, with `capture=False`, thrown away; `new_session` puts it
    in a process group of its own, so that a signal to the group reaches its workers too."""
    stream = subprocess.PIPE if capture else subprocess.DEVNULL
    return subprocess.Popen(argv(*args), cwd=cwd, env=environment(env), stdout=stream, stderr=stream, text=True,
                            start_new_session=new_session)


def finish(proc: subprocess.Popen, timeout: float = TIMEOUT_S) -> Ran:
    """Wait for a started run and capture what it printed."""
    out, err = proc.communicate(timeout=timeout)
    return Ran(proc.args, proc.returncode, out, err)


class Cli:
    """The `cli` fixture: `cli.run(ARGS...)` runs the CLI to its end in a subprocess, `cli.invoke(ARGS...)`
    in this process, `cli.start(ARGS...)` starts it and `cli.finish(proc)` waits for what it printed."""

    run = staticmethod(run_endstate)
    invoke = staticmethod(invoke_endstate)
    start = staticmethod(start_endstate)
    finish = staticmethod(finish)
