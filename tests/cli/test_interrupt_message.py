"""What Ctrl-C says depends on the command: only a run keeps finished results.

`tasks check` interrupted said "finished results are on disk", where it writes none.
"""

from __future__ import annotations

import click
import pytest

from endstate.cli._errors import _user_errors


def _interrupted(name: str, capsys) -> str:
    @click.command(name)
    @_user_errors
    def command() -> None:
        raise KeyboardInterrupt

    with pytest.raises(SystemExit) as stopped:
        command.main([], prog_name=name, standalone_mode=False)
    assert stopped.value.code == 130
    return capsys.readouterr().err


@pytest.mark.parametrize("name", ["eval", "record"])
def test_a_run_says_its_results_are_kept_and_how_to_continue(name, capsys):
    assert _interrupted(name, capsys) == ("endstate: interrupted; finished results are on disk, sandboxes removed: "
                                          "the same command with --resume continues the run\n")


@pytest.mark.parametrize("name", ["check", "grade", "adequacy", "mutate"])
def test_a_command_that_keeps_no_results_claims_none(name, capsys):
    assert _interrupted(name, capsys) == "endstate: interrupted; sandboxes removed\n"
