"""A hostile agent program, installed from a wheel like any agent, finds no way out: no
egress, no Docker socket, nothing through the proxy but its declared endpoint, and the
key nowhere in the sandbox.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from endstate.models import ScriptedServer
from endstate.suite import read_results

from e2e_helpers import TASKS, endstate

HOSTILE = Path(__file__).resolve().parents[1] / "agents" / "hostile_agent.py"
SECRET = "sk-endstate-hostile-test-0123456789abcdef"


def _hostile_wheel(folder: Path) -> Path:
    wheel = folder / "endstate_hostile-0.1-py3-none-any.whl"
    info = "endstate_hostile-0.1.dist-info"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("endstate_hostile/__init__.py", "")
        archive.writestr("endstate_hostile/__main__.py", HOSTILE.read_text())
        archive.writestr(f"{info}/METADATA", "Metadata-Version: 2.1\nName: endstate-hostile\nVersion: 0.1\n")
        archive.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        archive.writestr(f"{info}/RECORD", "")
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
        ran = endstate("record", "--agent", str(agent), "--model", "openai-compatible/null",
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
    shown = endstate("cassette", "show", str(cassette)).out
    assert " 1 interaction" in shown and "/chat/completions" in shown and SECRET not in shown
    assert SECRET.encode() not in cassette.read_bytes() and SECRET not in (tmp_path / "run" / "results.json").read_text()
