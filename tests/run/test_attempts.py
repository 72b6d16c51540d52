"""`--attempts K`: each task runs K times with seeds seed..seed+K-1, a cassette per
attempt, and every attempt kept in the results. Real CLI, real sandbox."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest
from cli_runner import run_endstate

from endstate.cassettes import load

ROOT = Path(__file__).resolve().parents[2]
TASK = "bugfix-lru-eviction"


@pytest.mark.docker
def test_attempts_record_a_cassette_each_with_its_seed_and_replay(tmp_path: Path) -> None:
    cassettes = tmp_path / "cassettes"
    ran = run_endstate("record", "--model", "scripted/reference", "--task", TASK, "--attempts", "2", "--seed", "7",
                       "--cassettes", str(cassettes), "--out", str(tmp_path / "live"), "-j", "2")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert sorted(p.name for p in cassettes.iterdir()) == [f"{TASK}.attempt-1.cassette", f"{TASK}.cassette"]
    seeds = [json.loads(load(cassettes / name).interactions[0].request.body)["seed"]
             for name in (f"{TASK}.cassette", f"{TASK}.attempt-1.cassette")]
    assert seeds == [7, 8]

    ran = run_endstate("eval", "--model", "scripted/reference", "--task", TASK, "--attempts", "2", "--seed", "7",
                       "--replay", str(cassettes), "--out", str(tmp_path / "replay"), "-j", "2")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    results = msgspec.json.decode((tmp_path / "replay" / "results.json").read_bytes())
    assert results["card"]["attempts"] == 2
    assert [(t["task_id"], t["attempt"], t["outcome"]) for t in results["tasks"]] == [
        (TASK, 0, "pass"), (TASK, 1, "pass")]
    assert (tmp_path / "replay" / "transcripts" / f"{TASK}.attempt-1.json").is_file()
    diff = (tmp_path / "replay" / "diffs" / f"{TASK}.attempt-1.diff").read_text()
    assert diff.startswith("--- a/cachekit/lru.py\n+++ b/cachekit/lru.py\n")

    report = run_endstate("report", str(tmp_path / "replay"), "--out", str(tmp_path / "report"))
    assert "100% (k=2)" in report.stdout, report.stdout + report.stderr
