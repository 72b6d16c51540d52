"""--max-usd: a live run stops once the priced spend of its finished tasks reaches the
ceiling, leaves the rest for --resume, and an unpriced model is refused in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runner import run_endstate

ROOT = Path(__file__).resolve().parents[2]
TASKS = ["bugfix-booking-overlap", "bugfix-invoice-rounding", "bugfix-lru-eviction"]
# One US dollar per million tokens: bugfix-booking-overlap alone reads about 12,000 input tokens.
PRICES = '["scripted-responses/reference"]\ninput = 1.0\noutput = 1.0\n'


def test_an_unpriced_model_with_a_ceiling_is_one_line_error(tmp_path):
    ran = run_endstate("eval", "--model", "openai-responses/o4-mini", "--task", TASKS[0], "--max-usd", "5",
                       "--out", str(tmp_path / "run"), env={"OPENAI_API_KEY": "sk-placeholder"})
    assert ran.returncode == 2, ran.stdout + ran.stderr
    lines = ran.stderr.strip().splitlines()
    assert len(lines) == 1 and "--max-usd needs a price for openai-responses/o4-mini" in lines[0], ran.stderr
    assert "Traceback" not in ran.stderr and not (tmp_path / "run").exists()


@pytest.mark.docker
def test_the_ceiling_stops_the_run_and_resume_finishes_it(tmp_path):
    (tmp_path / "prices.toml").write_text(PRICES)
    tasks = [arg for task in TASKS for arg in ("--task", task)]
    out = tmp_path / "run"
    ran = run_endstate("eval", "--model", "scripted-responses/reference", *tasks, "--max-usd", "0.001",
                       "--prices", str(tmp_path / "prices.toml"), "--out", str(out))
    assert ran.returncode == 3, ran.stdout + ran.stderr
    assert "spend ceiling reached: the finished tasks cost $0.01" in ran.stderr
    assert f"continue with --resume --out {out}" in ran.stderr
    finished = json.loads((out / "results.json").read_text())["tasks"]
    assert [(t["task_id"], t["outcome"]) for t in finished] == [(TASKS[0], "pass")]
    ran = run_endstate("eval", "--model", "scripted-responses/reference", *tasks, "--resume", "--out", str(out))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    finished = json.loads((out / "results.json").read_text())["tasks"]
    assert [(t["task_id"], t["outcome"]) for t in finished] == [(t, "pass") for t in TASKS]
