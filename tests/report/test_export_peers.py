"""The exports checked by the peers' own tools, not by a schema written here: the ATIF by Harbor's
`TrajectoryValidator` (Harbor 0.26 writes ATIF-v1.8) and the `atif` package's models (1.8), run
from the venv `make peers` makes; the Inspect log read by the oldest inspect_ai endstate claims,
from a venv of its own, as by the pinned one. Over a committed control run (22 real transcripts)
and the synthetic run of test_export_offline (thinking blocks, an infra_error, arguments that
are no JSON). tests/report/test_export_inspect_view.py opens the log in both one's viewers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
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


def _thinking_run(run: Path) -> Path:
    """A run of two tasks, one an infra error, whose transcripts hold thinking and arguments that are no JSON."""
    broken = TaskResult("bugfix-b", "bugfix", "infra_error", reason="the engine went away")
    write_results(RunResult(card(tasks=2), [task("bugfix-a", "pass"), broken]), run)
    (run / "transcripts").mkdir()
    for stem in ("bugfix-a", "bugfix-b"):
        (run / "transcripts" / f"{stem}.json").write_text(json.dumps(TRANSCRIPT))
    return run


def test_harbor_and_atif_accept_the_atif_of_a_committed_run(tmp_path):
    export_run(ROOT / "bench" / "results" / "controls" / "scripted-reference", "atif", tmp_path)
    lines = _validated(tmp_path)
    assert len(lines) == 22 and all(line.endswith(": checked") for line in lines), lines


def test_harbor_and_atif_accept_thinking_an_infra_error_and_unparsed_arguments(tmp_path):
    run = _thinking_run(tmp_path / "run")
    export_run(run, "atif", tmp_path / "atif")
    assert _validated(tmp_path / "atif") == ["bugfix-a.json: checked", "bugfix-b.json: checked"]


#: Run by an inspect_ai: what a reader of the log sees of it, as JSON.
_READ = """
import json, sys
import inspect_ai
from inspect_ai.log import read_eval_log
log = read_eval_log(sys.argv[1])
def content(m):
    return m.content if isinstance(m.content, str) else [[type(c).__name__, getattr(c, "reasoning", None) or
                                                         getattr(c, "text", None)] for c in m.content]
print(json.dumps({"version": inspect_ai.__version__, "status": log.status, "model": log.eval.model,
    "times": [log.stats.started_at, log.stats.completed_at], "epochs": log.eval.config.epochs,
    "accuracy": log.results.scores[0].metrics["accuracy"].value,
    "samples": [[s.id, s.epoch, s.scores and {k: [v.value, v.answer] for k, v in s.scores.items()},
                 [[m.role, content(m), [c.function for c in getattr(m, "tool_calls", None) or []]] for m in s.messages]]
                for s in log.samples]}))
"""


def _read(python: str, log: Path) -> dict:
    ran = subprocess.run([python, "-c", _READ, str(log)], capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr[-3000:]
    return json.loads(ran.stdout)


def test_the_oldest_inspect_claimed_reads_the_log_as_the_pinned_one_does(tmp_path):
    """The log is read alike by the inspect_ai the `export` extra pins and by the oldest endstate says
    reads it (OLDEST_READER, in its own venv): a committed control run, and a run with thinking blocks,
    an infra_error and arguments that are no JSON."""
    from endstate.report._inspect_log import OLDEST_READER

    oldest = Path(os.environ["ENDSTATE_INSPECT_OLDEST"]) / "python"
    run = _thinking_run(tmp_path / "run")
    for folder in (ROOT / "bench" / "results" / "controls" / "scripted-reference", run):
        log = tmp_path / f"{folder.name}.eval"
        export_run(folder, "inspect", log)
        old, pinned = _read(str(oldest), log), _read(sys.executable, log)
        assert old.pop("version") == OLDEST_READER and pinned.pop("version") != OLDEST_READER
        assert old == pinned
        assert pinned["status"] == "success" and all(pinned["times"]) and len(pinned["samples"]) in (2, 22)
    reasoning = pinned["samples"][0][3][2][1]  # the synthetic run's first answer: its thinking, then no text
    assert reasoning == [["ContentReasoning", "The bug is in total()."], ["ContentReasoning", "ENCRYPTED"]], reasoning
