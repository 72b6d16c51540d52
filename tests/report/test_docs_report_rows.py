"""The rows docs/local-model.md shows under its `endstate report` command are the rows that
command prints on the committed results, cell for cell up to the `...` it cuts them at.

The page once showed one pooled row (k=2) where the command, run as written, prints a row per
seed: the report pools folders only when their run cards agree whole.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from cli_runner import invoke_endstate

ROOT = Path(__file__).resolve().parents[2]


def _block(page: Path) -> tuple[list[str], list[str]]:
    """The command (its continuation lines joined) and the lines shown under it."""
    text = page.read_text()
    block = next(b for b in re.findall(r"```\n(.*?)```", text, re.S) if b.startswith("endstate report "))
    command, shown = block.split("\n", 1)
    while command.endswith("\\"):
        rest, shown = shown.split("\n", 1)
        command = command[:-1] + " " + rest.strip()
    return shlex.split(command)[1:], [line for line in shown.splitlines() if line.strip()]


def _cells(line: str) -> list[str]:
    return re.split(r"\s{2,}", line.strip())


def test_the_local_model_page_shows_the_rows_its_command_prints(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    args, shown = _block(ROOT / "docs" / "local-model.md")
    ran = invoke_endstate(*args, "--out", str(tmp_path))
    assert ran.code == 0, ran
    printed = [_cells(line) for line in ran.out.splitlines() if line.startswith("openai-compatible ")]
    expected = [_cells(line.removesuffix("...")) for line in shown]
    assert [row[:len(want)] for row, want in zip(printed, expected)] == expected and len(printed) == len(expected)
