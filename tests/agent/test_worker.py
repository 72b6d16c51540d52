"""The worker process: what it writes is scrubbed, and an input error is one line, not a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import msgspec

from endstate.agent._worker import AgentJob, AgentOutcome
from endstate.cassettes import CassetteJob
from endstate.task import Budget

KEY = "sk-worker-KEY-0123456789"
RUN = "import sys; from endstate.agent._worker import forked_main; forked_main(sys.argv[1], sys.argv[2], None, " \
      "sys.argv[3])"


def test_a_missing_cassette_is_an_input_error_in_one_scrubbed_line(tmp_path):
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    # The key ends up inside a message: the cassette path (as a base URL's query) holds it.
    cassette = tmp_path / f"key={KEY}" / "t.cassette"
    job = AgentJob(
        task_id="t", prompt="fix it", sandbox={"backend": "local", "workspace": str(workspace)},
        model="openai-compatible/m", settings={}, budget=Budget(), journal=str(tmp_path / "journal.json"),
        transcript=str(tmp_path / "transcript.json"), outcome=str(tmp_path / "outcome.json"),
        base_url="http://u:REDACTED@127.0.0.1:9/v1", cassette=CassetteJob(mode="replay", path=str(cassette)),
    )
    job_path, log = tmp_path / "job.json", tmp_path / "worker.log"
    job_path.write_bytes(msgspec.json.encode(job))
    done = subprocess.run([sys.executable, "-c", RUN, str(job_path), str(log), f"http://u:{KEY}@127.0.0.1:9/v1"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    outcome = msgspec.json.decode(Path(job.outcome).read_bytes(), type=AgentOutcome)
    assert outcome.stop_reason == "input_error"
    assert outcome.detail.startswith("no cassette for task t at ") and "key=REDACTED" in outcome.detail
    text = log.read_text()
    assert text == f"endstate: error: {outcome.detail}\n"
    assert KEY not in text and KEY not in Path(job.outcome).read_text() and "Traceback" not in text
