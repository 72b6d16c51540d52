"""The ATIF export checked by the peers' own validators, not by a schema written here: Harbor's
`TrajectoryValidator` (Harbor 0.26 writes ATIF-v1.8) and the `atif` package's models (1.8), run
from the venv `make peers` makes. Over a committed control run (22 real transcripts) and the
synthetic run of test_export_offline (thinking blocks, an infra_error, arguments that are no JSON)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from report_helpers import card, task
from test_export_offline import TRANSCRIPT

from endstate.report import export_run
from endstate.run._results import RunResult, TaskResult, write_results

pytestmark = pytest.mark.peers

ROOT = Path(__file__).resolve().parents[2]

#: Run in the peers' venv: every file through both validators; prints one line per problem.
_CHECK = """
import json, sys
from pathlib import Path
import atif
from harbor.utils.trajectory_validator import TrajectoryValidator
for path in sorted(Path(sys.argv[1]).glob("*.json")):
    validator = TrajectoryValidator()
    if not validator.validate(path):
        print(f"{path.name}: harbor: {validator.errors}")
    try:
        atif.Trajectory.model_validate(json.loads(path.read_text()))
    except Exception as exc:
        print(f"{path.name}: atif: {exc}")
    print(f"{path.name}: checked")
"""


def _validated(folder: Path) -> list[str]:
    python = Path(os.environ["ENDSTATE_PEERS"]) / "python"
    ran = subprocess.run([str(python), "-c", _CHECK, str(folder)], capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr
    return ran.stdout.splitlines()


def test_harbor_and_atif_accept_the_atif_of_a_committed_run(tmp_path):
    export_run(ROOT / "bench" / "results" / "controls" / "scripted-reference", "atif", tmp_path)
    lines = _validated(tmp_path)
    assert len(lines) == 22 and all(line.endswith(": checked") for line in lines), lines


def test_harbor_and_atif_accept_thinking_an_infra_error_and_unparsed_arguments(tmp_path):
    run = tmp_path / "run"
    broken = TaskResult("bugfix-b", "bugfix", "infra_error", reason="the engine went away")
    write_results(RunResult(card(tasks=2), [task("bugfix-a", "pass"), broken]), run)
    (run / "transcripts").mkdir()
    for stem in ("bugfix-a", "bugfix-b"):
        (run / "transcripts" / f"{stem}.json").write_text(json.dumps(TRANSCRIPT))
    export_run(run, "atif", tmp_path / "atif")
    assert _validated(tmp_path / "atif") == ["bugfix-a.json: checked", "bugfix-b.json: checked"]
