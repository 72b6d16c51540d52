"""`endstate export` over a real run: the ATIF files' own rules (Harbor's validators check them
in `make peers`: tests/report/test_export_peers.py), the
`.eval` log read back with inspect_ai itself, the same run exported twice byte for byte,
and bad input refused in one line.

The run is made once for the module by replaying the committed reference cassettes over
two tasks copied from tasks/: one as it is (a pass), one whose `changed_paths_within`
grader is narrowed to README.md (the known fix changes invoicing/money.py, so a fail,
named by that grader). Narrowing a grader changes the task's hash, hence `--match sequence`:
the agent's side of the run is the recorded one, request for request.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_runner import run_endstate

from endstate.errors import UserError
from endstate.report import export_run
from endstate.run import read_results

pytestmark = pytest.mark.docker

ROOT = Path(__file__).resolve().parents[2]
PASSING, FAILING = "bugfix-lru-eviction", "bugfix-invoice-rounding"


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("export")
    for task in (PASSING, FAILING):
        shutil.copytree(ROOT / "tasks" / task, base / "suite" / task)
    manifest = base / "suite" / FAILING / "task.toml"
    narrowed = manifest.read_text().replace('paths = ["invoicing/money.py"]', 'paths = ["README.md"]')
    assert narrowed != manifest.read_text()
    manifest.write_text(narrowed)
    ran = run_endstate("eval", "--suite", str(base / "suite"), "--model", "scripted/reference", "--replay",
                       str(ROOT / "cassettes" / "scripted-reference"), "--match", "sequence", "-j", "2",
                       "--out", str(base / "run"))
    outcomes = {t.task_id: t.outcome for t in read_results(base / "run").tasks}
    assert outcomes == {PASSING: "pass", FAILING: "fail"}, ran.stdout + ran.stderr
    return base / "run"


@pytest.fixture(scope="module")
def exported(run) -> dict[str, Path]:
    paths = {}
    for format_, name in (("atif", "atif"), ("inspect", "inspect.eval")):
        ran = run_endstate("export", str(run), "--format", format_)
        assert ran.returncode == 0, ran.stderr
        assert ran.stdout.strip() == f"2 task attempt(s) written to {run / name}"
        paths[format_] = run / name
    return paths


def _transcript(run: Path, task: str) -> list[dict]:
    return json.loads((run / "transcripts" / f"{task}.json").read_text())


# -- ATIF ---------------------------------------------------------------------------------
def test_every_atif_trajectory_declares_v1_8_and_keeps_atifs_step_rules(run, exported):
    files = sorted(exported["atif"].glob("*.json"))
    assert [f.stem for f in files] == sorted([PASSING, FAILING])
    for path in files:
        trajectory = json.loads(path.read_text())
        assert trajectory["schema_version"] == "ATIF-v1.8", path.name
        # Step ids run 1, 2, 3 ...; a result's source_call_id names a call of its own step.
        steps = trajectory["steps"]
        assert [s["step_id"] for s in steps] == list(range(1, len(steps) + 1)), path.name
        for step in steps:
            calls = {c["tool_call_id"] for c in step.get("tool_calls") or []}
            for result in (step.get("observation") or {}).get("results", []):
                assert result.get("source_call_id") in calls | {None}, (path.name, step["step_id"])


def test_atif_keeps_every_call_its_result_and_the_verdict(run, exported):
    results = {t.task_id: t for t in read_results(run).tasks}
    for task, result in results.items():
        trajectory = json.loads((exported["atif"] / f"{task}.json").read_text())
        transcript = _transcript(run, task)
        calls = [c for s in trajectory["steps"] for c in s.get("tool_calls") or []]
        answered = [r for s in trajectory["steps"] for r in (s.get("observation") or {}).get("results", [])]
        assert len(calls) == result.counters.tool_calls == sum(len(m.get("tool_calls") or []) for m in transcript)
        assert len(answered) == sum(m["role"] == "tool" for m in transcript)
        assert all(r["source_call_id"] for r in answered)  # each result tied to its call
        assert trajectory["agent"]["model_name"] == "scripted/reference"
        assert trajectory["final_metrics"]["total_prompt_tokens"] == result.counters.input_tokens
        verdict = trajectory["extra"]["endstate"]
        assert (verdict["outcome"], verdict["reward"], verdict["tree_hash"]) == (
            result.outcome, 1.0 if result.outcome == "pass" else 0.0, result.tree_hash)
    failing = json.loads((exported["atif"] / f"{FAILING}.json").read_text())["extra"]["endstate"]
    assert failing["failing_grader"] == "changed_paths_within"
    assert "changed_paths_within" in failing["explanation"]


# -- Inspect ------------------------------------------------------------------------------
def test_inspect_reads_the_log_back_with_the_runs_scores(run, exported):
    from inspect_ai.log import read_eval_log

    log = read_eval_log(str(exported["inspect"]))
    results = {t.task_id: t for t in read_results(run).tasks}
    assert log.status == "success" and log.eval.model == "scripted/reference"
    assert log.eval.created == time.strftime("%Y-%m-%dT%H:%M:%S+00:00",
                                             time.gmtime(int((run / "results.json").stat().st_mtime)))
    assert sorted(s.id for s in log.samples) == sorted(results) and {s.epoch for s in log.samples} == {1}
    assert {s.id: s.scores["endstate"].value for s in log.samples} == {PASSING: "C", FAILING: "I"}
    (score,) = log.results.scores
    assert score.metrics["accuracy"].value == 0.5 and score.scored_samples == 2
    for sample in log.samples:
        result, transcript = results[sample.id], _transcript(run, sample.id)
        assert len(sample.messages) == len(transcript)
        calls = [c for m in sample.messages if m.role == "assistant" for c in m.tool_calls or []]
        assert len(calls) == result.counters.tool_calls > 0
        tools = [m for m in sample.messages if m.role == "tool"]
        assert [m.tool_call_id for m in tools] == [c.id for c in calls]
        assert [m.function for m in tools] == [c.function for c in calls]
        assert sample.metadata["tree_hash"] == result.tree_hash
        assert sample.output.usage.input_tokens == result.counters.input_tokens
    failing = next(s for s in log.samples if s.id == FAILING)
    assert "changed_paths_within" in failing.scores["endstate"].explanation


def test_inspect_cli_dumps_the_log(exported):
    inspect = Path(sys.executable).with_name("inspect")
    dumped = subprocess.run([str(inspect), "log", "dump", str(exported["inspect"])], capture_output=True, text=True,
                            timeout=120)
    assert dumped.returncode == 0, dumped.stderr
    assert json.loads(dumped.stdout)["results"]["scores"][0]["metrics"]["accuracy"]["value"] == 0.5


# -- determinism --------------------------------------------------------------------------
def test_the_same_run_exports_to_the_same_bytes(run, exported, tmp_path):
    time.sleep(2.1)  # past the 2-second grain of a zip entry's date: a clock that leaked would show
    for format_, name in (("atif", "atif"), ("inspect", "again.eval")):
        ran = run_endstate("export", str(run), "--format", format_, "--out", str(tmp_path / name))
        assert ran.returncode == 0, ran.stderr
    first = sorted(exported["atif"].glob("*.json"))
    assert [f.read_bytes() for f in first] == [(tmp_path / "atif" / f.name).read_bytes() for f in first]
    assert (tmp_path / "again.eval").read_bytes() == exported["inspect"].read_bytes()
    assert not list(run.glob("*.partial")) and not list(tmp_path.glob("*.partial"))


# -- bad input ----------------------------------------------------------------------------
def _refused(ran: subprocess.CompletedProcess, *named: str) -> None:
    assert ran.returncode == 2 and ran.stdout == "", ran
    assert len(ran.stderr.splitlines()) == 1 and ran.stderr.startswith("endstate: error: "), ran.stderr
    assert "Traceback" not in ran.stderr and all(n in ran.stderr for n in named), ran.stderr


def test_a_folder_that_is_no_run_is_refused_in_one_line(tmp_path):
    _refused(run_endstate("export", str(tmp_path), "--format", "atif"), str(tmp_path), "results.json")
    _refused(run_endstate("export", str(tmp_path / "absent"), "--format", "inspect"), str(tmp_path / "absent"))
    (tmp_path / "results.json").write_text("{")
    _refused(run_endstate("export", str(tmp_path), "--format", "inspect"), "results.json")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json"]  # nothing written


def test_an_unknown_format_is_refused_in_one_line(run):
    _refused(run_endstate("export", str(run), "--format", "csv"), "'csv'", "atif, inspect")
    assert not (run / "csv").exists()


def test_an_attempt_without_transcript_is_named_and_the_rest_exported(run, tmp_path):
    copy = tmp_path / "run"
    shutil.copytree(run, copy, ignore=shutil.ignore_patterns("work", "atif", "*.eval"))
    (copy / "transcripts" / f"{FAILING}.json").unlink()
    ran = run_endstate("export", str(copy), "--format", "atif")
    assert ran.returncode == 1 and "Traceback" not in ran.stderr, ran
    assert ran.stderr.startswith(f"endstate: task {FAILING} not exported: no transcript at "), ran.stderr
    assert [p.stem for p in (copy / "atif").iterdir()] == [PASSING]


def test_the_inspect_format_without_inspect_ai_says_what_to_install(run, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "inspect_ai", None)  # `import inspect_ai` now raises ImportError
    with pytest.raises(UserError, match=r"pip install 'endstate\[export\]'"):
        export_run(run, "inspect", tmp_path / "x.eval")
    assert not (tmp_path / "x.eval").exists()
