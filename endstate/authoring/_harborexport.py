"""endstate's own tasks written as Harbor tasks (`endstate export --format harbor --suite S`).

    task.toml             [agent] / [verifier] timeouts, [environment] limits, a separate verifier
                          that reads the end state (/app) as an artifact
    instruction.md        the prompt
    environment/          FROM the task's image, the fixture copied to /app (the working folder)
    tests/                the verifier's image (tests/Dockerfile: the tests baked in), test.sh and
                          verify.py, the held-out tests, the fixture files the graders compare with
    solution/solve.sh     the oracle: writes the solution's files, removes what it deletes

Harbor's verifier is a script, endstate's graders are functions: verify.py does what the
built-in graders check with files and commands (`tests_pass` and `holdout` commands and
their test counts, `files_unchanged`, `changed_paths_within`). What it cannot do is listed
as the export's losses: `no_new_skips`, graders of the task's own, probes, `requires`, the
impossible twins, and the seal (Harbor's artifact copy is not endstate's).
"""

from __future__ import annotations

import base64
import json
import shlex
import shutil
from pathlib import Path

from endstate.authoring._harborspec import (
    HarborAgent,
    HarborEnvironment,
    HarborTask,
    HarborVerifier,
    harbor_text,
)
from endstate.errors import UserError
from endstate.sandbox import DEFAULT_IMAGE, Tree
from endstate.task import Task

__all__ = ["HARBOR_WORKDIR", "export_harbor_task"]

#: Where a Harbor task's agent works (its Dockerfile's WORKDIR).
HARBOR_WORKDIR = "/app"

#: The built-in graders verify.py does, by short name: the rest are the export's losses.
_KEPT = {"tests_pass", "holdout", "files_unchanged", "changed_paths_within"}

_VERIFY = '''"""The verifier of a task exported by endstate: the end state is /app (an artifact)."""
import fnmatch, json, os, re, shutil, subprocess, sys

spec = json.load(open("/tests/spec.json"))
fixture = "/tests/fixture"


def files(root):
    found = {}
    for folder, _, names in os.walk(root):
        for name in names:
            path = os.path.join(folder, name)
            with open(path, "rb") as handle:
                found[os.path.relpath(path, root)] = handle.read()
    return found


def verdict():
    before, after = files(fixture), files("/app")
    changed = sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p)
                     and not p.endswith((".pyc", ".pyo")) and "__pycache__" not in p.split("/")
                     and ".pytest_cache" not in p.split("/"))
    for path in changed:
        if any(fnmatch.fnmatch(path, glob) for glob in spec["unchanged"]):
            return f"files_unchanged: {path} changed"
        if spec["within"] is not None and not any(fnmatch.fnmatch(path, g) for g in spec["within"]):
            return f"changed_paths_within: {path} is outside {spec['within']}"
    shutil.copytree("/tests/holdout", "/app", dirs_exist_ok=True)
    for grader, command, least in spec["commands"]:
        ran = subprocess.run(command, shell=True, cwd="/app", capture_output=True, text=True)
        passed = sum(int(n) for n in re.findall(r"(\\d+) passed", ran.stdout))
        if ran.returncode != 0:
            return f"{grader}: `{command}` exited {ran.returncode}: {ran.stdout[-500:]}"
        if passed < least:
            return f"{grader}: `{command}` ran {passed} passing test(s), fewer than {least}"
    return ""


why = verdict()
print(why or "pass")
os.makedirs("/logs/verifier", exist_ok=True)
open("/logs/verifier/reward.txt", "w").write("0\\n" if why else "1\\n")
'''

_TEST_SH = "#!/bin/bash\nexec python3 /tests/verify.py\n"


def _write(root: Path, tree: Tree) -> None:
    for path, entry in tree.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if entry.link:
            target.symlink_to(entry.link)
        else:
            target.write_bytes(entry.data)
            target.chmod(entry.mode & 0o777 or 0o644)


def _solve(fixture: Tree, solution: Tree) -> str:
    lines = ["#!/bin/bash", "# The oracle: the task's solution, written over the fixture.", "set -euo pipefail",
             f"cd {HARBOR_WORKDIR}"]
    for path in sorted(set(fixture) - set(solution)):
        lines.append(f"rm -f {shlex.quote(path)}")
    for path in sorted(p for p in solution if fixture.get(p) != solution[p]):
        entry, quoted = solution[path], shlex.quote(path)
        lines.append(f"mkdir -p \"$(dirname {quoted})\"")
        if entry.link:
            lines.append(f"ln -sfn {shlex.quote(entry.link)} {quoted}")
            continue
        lines += [f"base64 -d > {quoted} <<'ENDSTATE_EOF'", base64.encodebytes(entry.data).decode().rstrip("\n"),
                  "ENDSTATE_EOF", f"chmod {entry.mode & 0o777 or 0o644:o} {quoted}"]
    return "\n".join(lines) + "\n"


def _manifest(task: Task) -> str:
    m = task.manifest
    verifier = max([float(g.args.get("timeout", 0) or 0) for g in m.graders] + [600.0])
    harbor = HarborTask(
        version="1.0", artifacts=[HARBOR_WORKDIR], metadata={"category": m.category.value, "tags": ["endstate"]},
        verifier=HarborVerifier(timeout_sec=verifier, environment_mode="separate"),
        agent=HarborAgent(timeout_sec=m.budget.wall_seconds, user=m.sandbox.user),
        environment=HarborEnvironment(cpus=m.sandbox.cpus, memory_mb=m.sandbox.memory_mb,
                                      healthcheck=m.sandbox.healthcheck))
    return harbor_text(harbor, ["The verifier reads the end state from the working folder (an artifact), in its own "
                              "container;", "the agent is endstate's (uid 1000) unless the task says root."])


def export_harbor_task(task: Task, out: Path) -> list[str]:
    """Write `task` as the Harbor task `out/<id>`; returns what the export loses (the graders
    verify.py cannot do). Raises UserError for a task Harbor's format cannot hold."""
    m = task.manifest
    if m.seal.paths or m.sandbox.dockerfile or m.sandbox.image:
        raise UserError(f"task {task.id}: it has its own image or seals files outside /workspace: "
                        "`export --format harbor` writes tasks on endstate's sandbox image only")
    spec: dict = {"unchanged": [], "within": None, "commands": []}
    lost = []
    for grader in m.graders:
        short = grader.name.rpartition(":")[2]
        if not grader.name.startswith("endstate.grading:") or short not in _KEPT:
            lost.append(short)
        elif short == "files_unchanged":
            spec["unchanged"] += list(grader.args.get("paths", []))
        elif short == "changed_paths_within":
            spec["within"] = (spec["within"] or []) + list(grader.args.get("paths", []))
        elif "tests" in grader.args:  # ids read from a wider run, or another runner's: verify.py counts every test
            raise UserError(f"task {task.id}: its {short} grades the ids it lists of what its command runs (`tests`), "
                            "which the exported verifier cannot read: `export --format harbor` cannot hold it")
        else:
            spec["commands"].append([short, str(grader.args["command"]), int(grader.args.get("min_tests", 1))])
    if (task.root / "probe").is_dir():
        lost.append("probe")
    folder = out / task.id
    if folder.exists():
        shutil.rmtree(folder)
    fixture = task.fixture()
    _write(folder / "environment" / "app", fixture)
    owner = "0:0" if m.sandbox.user == "root" else "1000:1000"  # the agent owns its working folder
    image = f"FROM {DEFAULT_IMAGE}\nUSER root\nCOPY --chown={owner} app/ {HARBOR_WORKDIR}/\nWORKDIR {HARBOR_WORKDIR}\n"
    (folder / "environment" / "Dockerfile").write_text(image)
    tests = folder / "tests"
    _write(tests / "fixture", fixture)
    _write(tests / "holdout", task.holdout() if (task.root / "holdout").is_dir() else {})
    (tests / "spec.json").write_text(json.dumps(spec, indent=2, sort_keys=True) + "\n")
    (tests / "verify.py").write_text(_VERIFY)
    (tests / "test.sh").write_text(_TEST_SH)
    (tests / "test.sh").chmod(0o755)
    (tests / "Dockerfile").write_text(f"# The verifier's image: the tests baked in.\nFROM {DEFAULT_IMAGE}\n"
                                      f"USER root\nCOPY . /tests/\nWORKDIR {HARBOR_WORKDIR}\n")
    (folder / "solution").mkdir(parents=True)
    (folder / "solution" / "solve.sh").write_text(_solve(fixture, task.solution()))
    (folder / "solution" / "solve.sh").chmod(0o755)
    (folder / "instruction.md").write_text(task.prompt)
    (folder / "task.toml").write_text(_manifest(task))
    return lost
