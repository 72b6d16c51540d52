"""A hostile agent program installed the ways Claude Code and Codex are, getting nowhere.

The agent itself (not its model) tries egress by IP and by name, the Docker socket, the
host's gateway, the proxy's other paths and other hosts (its host side), and looks for the
key in the environment, every process's environment and command line, and the files it can
read. It ships as an npm package in the two forms the shipped program agents use:
- `npm-node`: a `bin` script run by Debian's Node from the layer (Claude Code's form), Node
  trying its own connection before starting the probes;
- `npm-binary`: an executable inside the package started by absolute path, no Node (Codex's
  form, whose package carries a static binary).
Each reports what it reached through the proxy, as an honest agent would, and the report
says: blocked, every one; the key is the placeholder in the sandbox and the real one is in no
recording and no result.
"""

from __future__ import annotations

import gzip
import io
import json
import tarfile
from pathlib import Path

import pytest
from cli_runner import run_endstate
from e2e_helpers import TASKS

from endstate.models import ScriptedServer
from endstate.run import read_results

HERE = Path(__file__).resolve().parents[1] / "agents"
SECRET = "sk-endstate-hostile-program-0123456789abcdef"
TASK = "bugfix-lru-eviction"
BINARY = "vendor/x86_64-unknown-linux-musl/bin/hostile"


def _tarball(folder: Path, name: str, files: dict[str, tuple[str, int]]) -> Path:
    """An npm package tarball (`npm pack`'s layout), the same bytes every time."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.USTAR_FORMAT) as archive:
        for path, (text, mode) in sorted(files.items()):
            data = text.encode()
            info = tarfile.TarInfo(f"package/{path}")
            info.size, info.mode, info.mtime = len(data), mode, 0
            archive.addfile(info, io.BytesIO(data))
    packed = folder / f"{name}-1.0.0.tgz"
    with open(packed, "wb") as out, gzip.GzipFile(fileobj=out, mode="wb", mtime=0) as zipped:
        zipped.write(raw.getvalue())
    return packed


def _agent_file(folder: Path, form: str) -> Path:
    probes = (HERE / "hostile_agent.py").read_text()
    package = {"name": "endstate-hostile", "version": "1.0.0"}
    if form == "npm-node":
        package["bin"] = {"endstate-hostile": "hostile.js"}
        files = {"hostile.js": ((HERE / "hostile_agent.js").read_text(), 0o755), "hostile.py": (probes, 0o644)}
        install, program = 'debian = ["nodejs"]', "endstate-hostile"
    else:
        files = {BINARY: ("#!/usr/bin/env python3\n" + probes, 0o755)}
        install, program = "", f"/opt/endstate/agents/hostile-{form}/npm/node_modules/endstate-hostile/{BINARY}"
    files["package.json"] = (json.dumps(package), 0o644)
    tarball = _tarball(folder, f"endstate-hostile-{form}", files)
    agent = folder / f"hostile-{form}.toml"
    agent.write_text(f"""\
name = "hostile-{form}"
[install]
npm = [{json.dumps(str(tarball))}]
{install}
[run]
program = "{program}"
env = {{ HOSTILE_LOOKS_FOR = "{SECRET[::-1]}" }}
[model]
base_url_env = "OPENAI_BASE_URL"
api_key_env = "OPENAI_API_KEY"
name_env = "HOSTILE_MODEL"
""")
    return agent


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.parametrize("form", ["npm-node", "npm-binary"])
def test_a_hostile_agent_program_installed_from_npm_gets_nowhere(tmp_path, form):
    agent = _agent_file(tmp_path, form)
    with ScriptedServer(TASKS) as server:
        ran = run_endstate("record", "--agent", str(agent), "--model", "openai-compatible/null",
                           "--base-url", server.base_url_for("null", TASK), "--task", TASK,
                           "--cassettes", str(tmp_path / "cassettes"), "--out", str(tmp_path / "run"),
                           env={"OPENAI_API_KEY": SECRET}, timeout=1800)
    transcript = (tmp_path / "run" / "transcripts" / f"{TASK}.json").read_text()
    lines = [x for x in json.loads(transcript)[-1]["content"].splitlines() if x.startswith("HOSTILE-REPORT ")]
    assert lines, (ran, transcript[-2000:])
    report = json.loads(lines[0].removeprefix("HOSTILE-REPORT "))
    assert report.pop("placeholder-key") == "endstate-proxy-holds-the-key"
    assert ("node-egress" in report) == (form == "npm-node"), report
    assert all(value.startswith("blocked: ") for value in report.values()), report
    assert {"egress-ip", "egress-dns", "host-gateway", "docker-socket", "docker-socket-run"} <= set(report)
    assert report["proxy-other-path"] == report["proxy-traversal"] == "blocked: PermissionError"
    assert report["proxy-other-host"] == "blocked: PermissionError" and report["key"] == "blocked: LookupError"
    result = read_results(tmp_path / "run")
    assert result.card.agent.startswith(f"hostile-{form}@") and result.card.agent_version == ""
    assert result.tasks[0].counters.steps == 1 and result.tasks[0].outcome == "fail", ran
    cassette = tmp_path / "cassettes" / f"{TASK}.cassette"
    shown = run_endstate("cassette", "show", str(cassette)).out
    assert " 1 interaction" in shown and "/chat/completions" in shown and SECRET not in shown
    assert SECRET.encode() not in cassette.read_bytes() and SECRET not in (tmp_path / "run" / "results.json").read_text()
