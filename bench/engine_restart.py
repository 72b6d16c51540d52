"""The engine restarted under the 22-task replay (issue 24's first "done when").

Starts a Docker engine of its own (own socket, data root and exec root; the sandbox
image loaded from the main engine, which is never touched), replays the known-fix
arm over every task at -j 2 once undisturbed, then again with that engine restarted
(SIGTERM, started again) 7 s in. Prints both wall times, whether the vectors and
sealed tree hashes are identical, the reruns per task, whether any result reads as a
harness bug, and the containers left. Needs root and dockerd.

    .venv/bin/python bench/engine_restart.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

from own_engine import OwnEngine  # noqa: E402

RUN = [sys.executable, "-m", "endstate", "eval", "--model", "scripted/reference", "--replay",
       "cassettes/scripted-reference", "-j", "2"]


def _tasks(out: Path) -> list[dict]:
    return json.loads((out / "results.json").read_text())["tasks"]


def main() -> None:
    scratch = Path(tempfile.mkdtemp(prefix="engine-restart-"))
    engine = OwnEngine()
    try:
        engine.start()
        engine.load_image()
        env = {**os.environ, "DOCKER_HOST": engine.url}
        started = time.monotonic()
        subprocess.run([*RUN, "--out", str(scratch / "whole")], cwd=ROOT, env=env, capture_output=True, check=True)
        print(f"undisturbed: {time.monotonic() - started:.0f} s")
        started = time.monotonic()
        run = subprocess.Popen([*RUN, "--out", str(scratch / "restarted")], cwd=ROOT, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(7)
        down = time.monotonic()
        engine.restart()
        print(f"engine restarted 7 s in, answering again {time.monotonic() - down:.1f} s later")
        code = run.wait()
        print(f"restarted: {time.monotonic() - started:.0f} s, exit {code}")
        whole, restarted = _tasks(scratch / "whole"), _tasks(scratch / "restarted")
        key = lambda tasks: [(t["task_id"], t["outcome"], t["tree_hash"]) for t in tasks]  # noqa: E731
        print(f"passed {sum(t['outcome'] == 'pass' for t in restarted)}/{len(restarted)}; "
              f"same vector and tree hashes as undisturbed: {key(whole) == key(restarted)}")
        print("reruns:", {t["task_id"]: t["infra_retries"] for t in restarted if t["infra_retries"]})
        print("any harness bug or model failure:", any(t["outcome"] == "error" for t in restarted))
        client = engine.client()
        print("containers left:", len(client.api.containers(all=True)))
        client.close()
    finally:
        engine.remove()


if __name__ == "__main__":
    main()
