"""Synthetic runs for report tests: results written here, so the tests do not depend
on a committed run that a new image or task pack would change."""

from __future__ import annotations

import json
from pathlib import Path

from endstate.run._results import GraderVerdict, RunCard, RunResult, TaskResult, write_results

ROOT = Path(__file__).resolve().parents[2]
PACK = "a" * 64
IMAGE_ID = "sha256:" + "b" * 64
GRADERS = ("tests_pass", "holdout")
DIVERGENCE = ("replay diverged in task x at agent turn 0: request 393bcd9c has no recorded answer\n"
              "--- recorded #0\n+++ this request\n@@ -1 +1 @@\n-settings: {\"temperature\": 0.0}\n"
              "+settings: {\"temperature\": 0.5}\n")


def card(model: str = "scripted/reference", *, pack: str = PACK, image_id: str = IMAGE_ID, version: str = "0.1.0",
         tasks: int = 3, attempts: int = 1, graders: dict[str, tuple[str, ...]] | None = None) -> RunCard:
    return RunCard(endstate_version=version, model=model, provider=model.split("/")[0], temperature=0.0, seed=0,
                   retry_ceiling=0, tool_choice="auto", network_policy="none", sandbox_backend="docker",
                   image="endstate-sandbox:1", image_id=image_id, task_pack_hash=pack, tasks=tasks,
                   attempts=attempts, graders=graders or {})


def task(task_id: str, outcome: str, *, category: str = "bugfix", attempt: int = 0, steps: int = 3,
         failing: str = "tests_pass") -> TaskResult:
    verdicts = [GraderVerdict(g, "fail" if (outcome == "fail" and g == failing) else "pass",
                              "tests: 1 of 4 failed" if (outcome == "fail" and g == failing) else "") for g in GRADERS]
    if outcome == "divergence":  # never graded: the reason is the request diff
        return TaskResult(task_id, category, outcome, attempt=attempt, reason=DIVERGENCE)
    result = TaskResult(task_id, category, outcome, attempt=attempt, verdicts=verdicts,
                        failing_grader=failing if outcome == "fail" else "",
                        reason="tests: 1 of 4 failed" if outcome == "fail" else "")
    result.counters.steps = steps
    return result


def run(outcomes: dict[str, str | list[str]], model: str = "scripted/reference", **card_options) -> RunResult:
    """`outcomes`: task id -> outcome, or a list of outcomes, one per attempt."""
    tasks = []
    for task_id, outcome in sorted(outcomes.items()):
        category = task_id.split("-")[0]
        for k, o in enumerate([outcome] if isinstance(outcome, str) else outcome):
            tasks.append(task(task_id, o, category=category, attempt=k))
    attempts = max(len(o) if isinstance(o, list) else 1 for o in outcomes.values())
    graders = {tid: GRADERS for tid in outcomes}
    card_options.setdefault("graders", graders)
    return RunResult(card(model, tasks=len(outcomes), attempts=attempts, **card_options), tasks)


def write(folder: Path, result: RunResult) -> Path:
    write_results(result, folder)
    return folder


#: A failed task's transcript with a denial and a compaction summary, and its diff.
TRANSCRIPT = [
    {"role": "system", "content": "You are a software engineer."},
    {"role": "user", "content": "Fix the bug.\n\nProgress so far (the earlier conversation was compacted):\nread lru.py"},
    {"role": "assistant", "content": "Let me look.", "tool_calls": [
        {"id": "call_0", "name": "bash", "arguments": "{\"command\": \"rm -rf tests\"}"}]},
    {"role": "tool", "content": "denied: denied by policy rule 'recursive-delete'", "tool_call_id": "call_0"},
    {"role": "assistant", "tool_calls": [
        {"id": "call_1", "name": "read_file", "arguments": "{\"path\": \"lru.py\"}"}]},
    {"role": "tool", "content": "</script><script>window.pwned = 1</script>", "tool_call_id": "call_1"},
    {"role": "assistant", "content": "Done."},
]
DIFF = "--- a/lru.py\n+++ b/lru.py\n@@ -1,2 +1,2 @@\n-if len(d) >= cap:\n+elif len(d) >= cap:\n"


def write_run_with_details(folder: Path, outcomes: dict[str, str], model: str = "openai/some-model") -> Path:
    """A run folder as `endstate eval` leaves it: results, transcripts and diffs beside them."""
    write(folder, run(outcomes, model))
    (folder / "transcripts").mkdir(exist_ok=True)
    (folder / "diffs").mkdir(exist_ok=True)
    for task_id in outcomes:
        (folder / "transcripts" / f"{task_id}.json").write_text(json.dumps(TRANSCRIPT))
        (folder / "diffs" / f"{task_id}.diff").write_text(DIFF)
    return folder
