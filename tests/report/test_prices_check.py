"""A price table that prices none of the runs' models is refused: USD would read n/a with no word why."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_runner import run_endstate
from report_helpers import run, write

OUTCOMES = {"bugfix-a": "pass", "bugfix-b": "fail"}


@pytest.fixture
def gpt_run(tmp_path: Path) -> Path:
    return write(tmp_path / "gpt", run(OUTCOMES, "openai/gpt-4.1-2025-04-14"))


@pytest.mark.parametrize("command", ["report", "view"])
def test_a_misspelt_model_name_in_the_price_table_is_one_line_naming_both(tmp_path, gpt_run, command):
    prices = tmp_path / "prices.toml"
    prices.write_text('["openai/gpt-4.1-2025-04-41"]\ninput = 2.0\noutput = 8.0\n')
    ran = run_endstate(command, str(gpt_run), "--prices", str(prices), "--out" if command == "report" else "-o",
                       str(tmp_path / "out"))
    assert ran.returncode == 2, ran
    assert ran.stderr == (f"endstate: error: --prices {prices} has no price for openai/gpt-4.1-2025-04-14, so its USD "
                          "would be n/a: the table prices openai/gpt-4.1-2025-04-41; name the model exactly as the run "
                          'does (["openai/gpt-4.1-2025-04-14"]) or by provider (["openai/*"])\n'), ran
    assert not (tmp_path / "out").exists()


def test_a_table_that_prices_the_run_by_provider_is_used(tmp_path, gpt_run):
    prices = tmp_path / "prices.toml"
    prices.write_text('["openai/*"]\ninput = 2.0\noutput = 8.0\n')
    ran = run_endstate("report", str(gpt_run), "--prices", str(prices), "--out", str(tmp_path / "out"))
    assert ran.returncode == 0, ran
    assert "n/a" not in ran.stdout.splitlines()[2], ran.stdout
