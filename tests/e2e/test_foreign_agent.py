"""An installed agent (mini-swe-agent) under record and replay, and a hostile agent program.

The committed recordings of both control arms through mini-swe-agent replay offline
(network none in every sandbox, no server, no key). Each task costs ~10 s of mini-swe-agent
starting up (importing litellm alone takes ~5 CPU-s), so CI replays a sample and
`bench/foreign_agent_replay.py` replays every task, three times and more:
- the reference arm, on one core task of each category, to the pass/fail
  vector, sealed tree hashes, stop reasons and counters of the live run that recorded it
  (bench/results/mini-swe-agent-scripted-reference), all passing; `python
  bench/foreign_agent_replay.py --recorded cassettes/mini-swe-agent-scripted-reference`
  replays all 12;
- the null arm, on two core tasks, failing each: what it shows (the program
  submitting at once and its end state graded) is the same on every task; `--recorded
  cassettes/mini-swe-agent-scripted-null` replays all 12.
A hostile agent program, installed from a wheel like any agent, finds no way out: no egress,
no Docker socket, nothing through the proxy but its declared endpoint, and the key nowhere
in the sandbox.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
from cli_runner import run_endstate
from e2e_helpers import CASSETTES, ROOT, TASKS

from endstate.models import ScriptedServer
from endstate.run import read_results
from endstate.task import load_suite

REFERENCE = CASSETTES / "mini-swe-agent-scripted-reference"
NULL = CASSETTES / "mini-swe-agent-scripted-null"
#: The live run that recorded REFERENCE (recorded again on 2026-12-02: cassettes identical to these).
REFERENCE_LIVE = ROOT / "bench" / "results" / "mini-swe-agent-scripted-reference"
CORE = sorted(t.id for t in load_suite(TASKS)[0] if t.manifest.category.value in ("bugfix", "feature", "refactor"))
HOSTILE = Path(__file__).resolve().parents[1] / "agents" / "hostile_agent.py"
SECRET = "sk-endstate-hostile-test-0123456789abcdef"


def _tasks(ids: list[str]) -> list[str]:
    return [arg for task in ids for arg in ("--task", task)]


def test_the_committed_recordings_cover_the_core_tasks():
    assert len(CORE) == 12
    for folder in (REFERENCE, NULL):
        assert sorted(p.stem for p in folder.glob("*.cassette")) == CORE, folder


def test_a_foreign_agents_cassette_replays_only_with_that_agent(tmp_path):
    ran = run_endstate("eval", "--replay", str(REFERENCE), "--task", CORE[0], "--out", str(tmp_path))
    assert ran.code == 2 and "recorded with agent mini-swe-agent@" in ran.err and "--agent mini-swe-agent" in ran.err


def test_cassette_diff_names_the_first_turn_where_the_arms_part():
    ran = run_endstate("cassette", "diff", str(REFERENCE / f"{CORE[0]}.cassette"), str(NULL / f"{CORE[0]}.cassette"))
    assert ran.code == 1 and "turn 0" in ran.out, ran


@pytest.mark.docker
@pytest.mark.slow
def test_the_reference_arm_replays_offline_to_the_live_runs_end_states(tmp_path):
    sample = CORE[1::4]
    ran = run_endstate("eval", "--agent", "mini-swe-agent", "--replay", str(REFERENCE), *_tasks(sample), "-j", "2",
                       "--expect", "pass", "--out", str(tmp_path), timeout=3600)
    assert ran.code == 0, ran
    replayed, live = read_results(tmp_path), read_results(REFERENCE_LIVE)
    assert replayed.card.agent == live.card.agent and replayed.card.agent.startswith("mini-swe-agent@")
    assert live.vector == [(task, "pass") for task in CORE]
    assert replayed.vector == [(task, "pass") for task in sample] and len(sample) == 3
    before = {t.task_id: t for t in live.tasks}
    for task in replayed.tasks:  # the same end state and the same counted run as live
        assert task.unplayed == 0 and task.counters.steps > 0, task.task_id
        assert (task.tree_hash, task.stop_reason, task.counters) == (
            before[task.task_id].tree_hash, before[task.task_id].stop_reason, before[task.task_id].counters), task.task_id


@pytest.mark.docker
@pytest.mark.slow
def test_the_null_arm_replays_and_fails_every_task(tmp_path):
    sample = CORE[::6]
    ran = run_endstate("eval", "--agent", "mini-swe-agent", "--replay", str(NULL), *_tasks(sample), "-j", "2",
                       "--expect", "fail", "--out", str(tmp_path), timeout=3600)
    assert ran.code == 0, ran
    result = read_results(tmp_path)
    assert [t.task_id for t in result.tasks] == sample and len(sample) == 2
    assert all(t.outcome == "fail" and t.counters.steps == 1 for t in result.tasks)


def _hostile_wheel(folder: Path) -> Path:
    wheel = folder / "endstate_hostile-0.1-py3-none-any.whl"
    info = "endstate_hostile-0.1.dist-info"
    files = {"endstate_hostile/__init__.py": "", "endstate_hostile/__main__.py": HOSTILE.read_text(),
             f"{info}/METADATA": "Metadata-Version: 2.1\nName: endstate-hostile\nVersion: 0.1\n",
             f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
             f"{info}/RECORD": ""}
    with zipfile.ZipFile(wheel, "w") as archive:  # fixed dates: the same wheel, the same cached layer
        for name, text in files.items():
            archive.writestr(zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0)), text)
    return wheel


@pytest.mark.docker
def test_a_hostile_agent_program_gets_nowhere(tmp_path):
    agent = tmp_path / "hostile.toml"
    agent.write_text(f"""\
name = "hostile"
[install]
requirements = [{json.dumps(str(_hostile_wheel(tmp_path)))}]
[run]
module = "endstate_hostile"
env = {{ HOSTILE_LOOKS_FOR = "{SECRET[::-1]}" }}
[model]
base_url_env = "OPENAI_BASE_URL"
api_key_env = "OPENAI_API_KEY"
name_env = "HOSTILE_MODEL"
""")
    task = "bugfix-lru-eviction"
    with ScriptedServer(TASKS) as server:
        ran = run_endstate("record", "--agent", str(agent), "--model", "openai-compatible/null",
                           "--base-url", server.base_url_for("null", task), "--task", task,
                           "--cassettes", str(tmp_path / "cassettes"), "--out", str(tmp_path / "run"),
                           env={"OPENAI_API_KEY": SECRET}, timeout=1800)
    transcript = (tmp_path / "run" / "transcripts" / f"{task}.json").read_text()
    line = next(x for x in json.loads(transcript)[-1]["content"].splitlines() if x.startswith("HOSTILE-REPORT "))
    report = json.loads(line.removeprefix("HOSTILE-REPORT "))
    assert report.pop("placeholder-key") == "endstate-proxy-holds-the-key"
    assert all(value.startswith("blocked: ") for value in report.values()), report
    assert report["proxy-other-path"] == report["proxy-traversal"] == "blocked: PermissionError"
    assert report["proxy-other-host"] == "blocked: PermissionError" and report["key"] == "blocked: LookupError"
    result = read_results(tmp_path / "run")
    assert result.tasks[0].counters.steps == 1 and result.tasks[0].outcome == "fail", ran
    cassette = (tmp_path / "cassettes" / f"{task}.cassette")
    shown = run_endstate("cassette", "show", str(cassette)).out
    assert " 1 interaction" in shown and "/chat/completions" in shown and SECRET not in shown
    assert SECRET.encode() not in cassette.read_bytes() and SECRET not in (tmp_path / "run" / "results.json").read_text()
