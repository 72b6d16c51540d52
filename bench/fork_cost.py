"""What a fork spends: the reference arm's recordings forked at turn K onto the null and the
reference arms, tokens asked of the model live against the full live run of that arm.

    python bench/fork_cost.py [--fork-at K] [-j N] [--task ID ...]     # default K 2, -j 2, every task

A fork's turns before K are served from cassettes/scripted-reference and cost nothing; the
tokens it spends are the usage of the answers it recorded live (from turn K on). The full
live run of an arm is its recording in cassettes/scripted-<arm>. Prints, per arm, the
tasks, their outcomes, the tokens spent forked and live, and the tokens of the prefix
the fork was served without asking.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from endstate.cassettes import load  # noqa: E402

REFERENCE = ROOT / "cassettes" / "scripted-reference"


def tokens(path: Path, *, live_from: int = 0) -> int:
    """Input plus output tokens of the answers in a cassette from agent turn `live_from` on."""
    spent = 0
    for interaction in load(path).interactions:
        if (interaction.request.turn or 0) < live_from:
            continue
        usage = json.loads(interaction.response.body).get("usage") or {}
        spent += int(usage.get("prompt_tokens", 0)) + int(usage.get("completion_tokens", 0))
    return spent


def fork(arm: str, fork_at: int, jobs: int, tasks: list[str], out: Path) -> dict[str, dict]:
    only = [part for task in tasks for part in ("--task", task)]
    ran = subprocess.run([sys.executable, "-m", "endstate", "eval", "--replay", str(REFERENCE), "--fork-at",
                          str(fork_at), "--model", f"scripted/{arm}", "-j", str(jobs), *only, "--out", str(out)],
                         cwd=ROOT, capture_output=True, text=True)
    if not (out / "results.json").is_file():
        sys.exit(f"the fork onto {arm} did not run:\n{ran.stdout}{ran.stderr}")
    return {t["task_id"]: t for t in json.loads((out / "results.json").read_text())["tasks"]}


def main(argv: list[str]) -> None:
    def value(flag: str, default: str) -> str:
        return argv[argv.index(flag) + 1] if flag in argv else default

    fork_at, jobs = int(value("--fork-at", "2")), int(value("-j", "2"))
    tasks = [argv[i + 1] for i, a in enumerate(argv) if a == "--task"]
    with tempfile.TemporaryDirectory(prefix="fork-cost-") as tmp:
        for arm in ("null", "reference"):
            results = fork(arm, fork_at, jobs, tasks, Path(tmp) / arm)
            forked = live = prefix = 0
            for task, result in sorted(results.items()):
                provenance = result.get("provenance") or {}
                cassette = Path(tmp) / arm / "cassettes" / f"{task}.cassette"
                if provenance.get("live_from") is not None and cassette.is_file():
                    forked += tokens(cassette, live_from=provenance["live_from"])
                live += tokens(ROOT / "cassettes" / f"scripted-{arm}" / f"{task}.cassette")
                parent = REFERENCE / f"{task}.cassette"
                prefix += tokens(parent) - tokens(parent, live_from=fork_at)
            outcomes = [r["outcome"] for r in results.values()]
            print(f"fork of scripted-reference at turn {fork_at} onto scripted/{arm}: {len(results)} tasks, "
                  f"{outcomes.count('pass')} pass, {outcomes.count('fail')} fail, "
                  f"{len(outcomes) - outcomes.count('pass') - outcomes.count('fail')} other")
            ratio = forked / live if live else 0.0
            print(f"  tokens spent live: forked {forked}, full live run {live} (fork/live {ratio:.2f}); "
                  f"the prefix served from the cassettes held {prefix}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
