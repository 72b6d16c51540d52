"""What one agent step costs in endstate, against mini-swe-agent on the same trajectory.

    python bench/per_step.py               # 3 interleaved rounds
    python bench/per_step.py --rounds 5

Both agents play the same scripted trajectory of STEPS bash commands in the same image,
and the same trajectory cut to no command at all. Each run is a whole process, timed
from outside; per step = (wall(STEPS steps) - wall(0 steps)) / STEPS, so start-up,
container creation and grading cancel out and what is left is the step loop: the model
turn, the permission check, the command in the sandbox and the bookkeeping.

- endstate: `endstate eval --model scripted/reference` on a throwaway one-task suite
  whose reference trajectory is the commands (the scripted server answers each turn).
- mini-swe-agent 2.4.6, in a venv of its own under /tmp (never a dependency of
  endstate), with its DeterministicModel and its DockerEnvironment on the same image.

Runs alternate (endstate 10, endstate 0, mini 10, mini 0, ...) so load from other
work on the machine falls on both; read the ratio, and the median over rounds.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from _common import timed

from endstate.agent import Policy
from endstate.sandbox import DEFAULT_IMAGE

STEPS = 10
COMMANDS = [
    "printf 'alpha\\nbeta\\n' > notes.txt",
    "cat notes.txt",
    "wc -l notes.txt",
    "ls -la",
    "grep -n beta notes.txt",
    "sed -n 1p notes.txt",
    "echo gamma >> notes.txt",
    "tail -n 1 notes.txt",
    "sort -r notes.txt",
    "cp notes.txt copy.txt",
]
MINI_VERSION = "2.4.6"
MINI_VENV = Path("/tmp/endstate-bench-mini-swe-agent")

_MINI_DRIVER = """
import json, subprocess, sys
from minisweagent.agents.default import DefaultAgent
from minisweagent.environments.docker import DockerEnvironment
from minisweagent.models.test_models import DeterministicModel, make_output

image, commands = sys.argv[1], json.loads(sys.argv[2])
outputs = [make_output(f"step {i}", [{"command": c}], cost=0.0) for i, c in enumerate(commands)]
outputs.append(make_output("done", [{"command": "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"}], cost=0.0))
env = DockerEnvironment(image=image, cwd="/workspace")
try:
    agent = DefaultAgent(DeterministicModel(outputs=outputs, cost_per_call=0.0), env,
                         system_template="You run commands.", instance_template="{{task}}", cost_limit=0)
    result = agent.run("Run the scripted commands.")
    assert result.get("exit_status") == "Submitted", result
    assert agent.n_calls == len(commands) + 1, agent.n_calls
finally:
    subprocess.run(["docker", "rm", "-f", env.container_id], capture_output=True)
    env.container_id = None
"""


def _endstate_suite(root: Path, commands: list[str]) -> Path:
    task = root / "steps"
    (task / "fixture").mkdir(parents=True)
    (task / "fixture" / "README.md").write_text("A scratch folder.\n")
    (task / "prompt.md").write_text("Run the scripted commands.\n")
    (task / "task.toml").write_text(textwrap.dedent("""\
        id = "steps"
        category = "bugfix"
        description = "A fixed trajectory of shell commands, for timing"

        [budget]
        max_steps = 30

        # Answered from the sealed snapshot: no test run, the same cost with 0 or 10 steps.
        [[graders]]
        name = "endstate.grading:files_unchanged"
        args = { paths = ["README.md"] }
        """))
    steps = "".join(f"[[steps]]\ncalls = [{{ tool = \"bash\", args = {{ command = {json.dumps(c)} }} }}]\n\n"
                    for c in commands)
    (task / "reference.toml").write_text(steps + '[[steps]]\nsay = "Done."\n')
    return root


def _endstate_run(suite: Path, out: Path) -> float:
    shutil.rmtree(out, ignore_errors=True)
    elapsed, proc = timed("eval", "--suite", str(suite), "--model", "scripted/reference", "--out", str(out))
    tasks = json.loads((out / "results.json").read_text())["tasks"]
    if tasks[0]["outcome"] != "pass":
        sys.exit(f"endstate's run did not pass: {tasks[0]['reason']}\n{proc.stdout[-1000:]}")
    return elapsed


def _mini_python() -> Path | None:
    """The venv's interpreter with mini-swe-agent installed, or None (said why) when it cannot be."""
    python = MINI_VENV / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(MINI_VENV)], check=True)
    probe = subprocess.run([str(python), "-c", "import minisweagent; print(minisweagent.__version__)"],
                           capture_output=True, text=True)
    if probe.stdout.strip() != MINI_VERSION:
        install = subprocess.run([str(python), "-m", "pip", "install", "-q", f"mini-swe-agent=={MINI_VERSION}"],
                                 capture_output=True, text=True)
        if install.returncode:
            print(f"mini-swe-agent {MINI_VERSION} could not be installed, endstate alone: {install.stderr[-500:]}")
            return None
    if not shutil.which("docker"):
        print("mini-swe-agent drives the `docker` CLI, which is not on PATH here: endstate alone")
        return None
    return python


def _mini_run(python: Path, driver: Path, commands: list[str], image: str) -> float:
    started = time.perf_counter()
    proc = subprocess.run([str(python), str(driver), image, json.dumps(commands)], capture_output=True, text=True,
                          env={"PATH": "/usr/local/bin:/usr/bin:/bin", "MSWEA_SILENT_STARTUP": "1",
                               "HOME": str(MINI_VENV)})
    elapsed = time.perf_counter() - started
    if proc.returncode:
        sys.exit(f"mini-swe-agent's run failed:\n{proc.stdout[-1500:]}\n{proc.stderr[-1500:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--image", default=DEFAULT_IMAGE)
    options = parser.parse_args()
    policy = Policy.load()
    denied = [c for c in COMMANDS if not policy.check("bash", {"command": c}).allowed]
    if denied:
        sys.exit(f"endstate's policy denies {denied[0]!r}: the trajectory must run as written in both agents")
    python = _mini_python()
    per_step: dict[str, list[float]] = {"endstate": [], "mini-swe-agent": []}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        suites = {n: _endstate_suite(tmp / f"suite-{n}", COMMANDS[:n]) for n in (STEPS, 0)}
        driver = tmp / "mini_driver.py"
        driver.write_text(_MINI_DRIVER)
        for round_ in range(1, options.rounds + 1):
            walls = {n: _endstate_run(suites[n], tmp / "out") for n in (STEPS, 0)}
            per_step["endstate"].append((walls[STEPS] - walls[0]) / STEPS)
            line = f"round {round_}: endstate {walls[STEPS]:5.2f} s / {walls[0]:5.2f} s"
            if python is not None:
                mini = {n: _mini_run(python, driver, COMMANDS[:n], options.image) for n in (STEPS, 0)}
                per_step["mini-swe-agent"].append((mini[STEPS] - mini[0]) / STEPS)
                line += f"; mini-swe-agent {mini[STEPS]:5.2f} s / {mini[0]:5.2f} s"
            print(line + f" ({STEPS} steps / 0 steps)")
    ours = statistics.median(per_step["endstate"])
    print(f"per step, median of {options.rounds}: endstate {ours * 1000:.0f} ms", end="")
    if per_step["mini-swe-agent"]:
        theirs = statistics.median(per_step["mini-swe-agent"])
        print(f", mini-swe-agent {MINI_VERSION} {theirs * 1000:.0f} ms; endstate / mini = {ours / theirs:.2f}x "
              "(target <= 1.0x)")
    else:
        print()


if __name__ == "__main__":
    main()
