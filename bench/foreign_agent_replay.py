"""A foreign agent's committed recordings, replayed three times (mini-swe-agent with SmolLM2 by default).

    python bench/foreign_agent_replay.py            # three replays, -j 2
    python bench/foreign_agent_replay.py --runs 5
    python bench/foreign_agent_replay.py --recorded cassettes/mini-swe-agent-scripted-reference
    python bench/foreign_agent_replay.py --recorded cassettes/claude-code-scripted-reference
    python bench/foreign_agent_replay.py --recorded cassettes/codex-scripted-null

Each replay is one `endstate eval --agent mini-swe-agent --suite tasks --replay
cassettes/mini-swe-agent-smollm2 -j 2`, offline (no server, no key), timed from outside.
Printed: each replay's wall, whether the pass/fail vectors and sealed tree hashes of the
replays are identical (the comparison `eval --repeat` prints), and whether they equal the
live run's committed in bench/results/mini-swe-agent-smollm2. The tasks a foreign agent
cannot be graded on are refused by name in every replay (they are errors in the vector).
CI replays once (tests/e2e/test_foreign_agent_smollm2.py); this is the threefold check.
`--recorded` replays another folder of mini-swe-agent recordings instead (the scripted
control arms: CI replays the reference arm once, against its live run's results in
bench/results/mini-swe-agent-scripted-reference, and a third of the null arm's tasks).
The agent is the one the folder is named after (claude-code-..., codex-...), and a folder
whose live run is kept in bench/results/<folder> is compared with it too: the control arms
of Claude Code and Codex, whose whole sets CI does not replay (it replays a sample of each,
tests/e2e/test_installed_agents.py).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from _common import ROOT, timed

from endstate.report import compare_repeats
from endstate.run import read_results

RECORDED = "cassettes/mini-swe-agent-smollm2"
LIVE = ROOT / "bench" / "results" / "mini-swe-agent-smollm2"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--recorded", default=RECORDED, help="a folder of a foreign agent's recordings")
    args = parser.parse_args()
    folder = Path(args.recorded).name
    agent = next((name for name in ("claude-code", "codex") if folder.startswith(name + "-")), "mini-swe-agent")
    kept = ROOT / "bench" / "results" / folder
    live = read_results(LIVE) if args.recorded == RECORDED else read_results(kept) if (kept / "results.json").is_file() else None
    # The full suite (the tasks it refuses included), or the tasks a control arm was recorded on.
    tasks = [] if args.recorded == RECORDED else [a for p in sorted((ROOT / args.recorded).glob("*.cassette")) for a in ("--task", p.stem)]
    results = []
    with tempfile.TemporaryDirectory(prefix="endstate-foreign-replay-") as scratch:
        for run in range(1, args.runs + 1):
            out = Path(scratch) / f"run-{run}"
            wall, proc = timed("eval", "--agent", agent, "--suite", "tasks", "--replay", args.recorded,
                               *tasks, "-j", "2", "--out", str(out))
            result = read_results(out)
            refused = sum(t.stop_reason == "refused" for t in result.tasks)
            print(f"replay {run}: {wall:.1f} s wall, exit {proc.returncode}, "
                  f"{sum(t.outcome == 'pass' for t in result.tasks)}/{len(result.tasks)} passed, {refused} refused")
            results.append(result)
    report, identical = compare_repeats(results)
    print(report)
    same_as_live = live is None or all(
        r.vector == live.vector and {t.task_id: t.tree_hash for t in r.tasks} == {t.task_id: t.tree_hash for t in live.tasks}
        for r in results)
    if live is not None:
        print(f"equal to the live run's vector and tree hashes: {'yes' if same_as_live else 'NO'}")
    sys.exit(0 if identical and same_as_live else 1)


if __name__ == "__main__":
    main()
