"""How Harbor starts a task's container, done the same way at import: the image's ENTRYPOINT first (then
`sleep infinity`, Harbor's command), the task's healthcheck until it passes, `[environment] env` in the
image; and the compose file whose sidecar containers endstate does not start."""

from __future__ import annotations

import json
import re
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from endstate.errors import UserError
from endstate.sandbox import Healthcheck, wait_healthy

__all__ = ["IDLE", "env_layer", "entrypoint", "healthy_in", "sidecars", "started"]

Docker = Callable[..., subprocess.CompletedProcess]

#: What Harbor's container runs once its image's ENTRYPOINT hands over (Harbor's compose files say so).
IDLE = "sleep infinity"


def entrypoint(tag: str, docker: Docker) -> list[str]:
    """The image's ENTRYPOINT, which Harbor's container (and endstate's sandbox) runs first."""
    seen = docker("image", "inspect", "--format", "{{json .Config.Entrypoint}}", tag)
    return (json.loads(seen.stdout or b"null") or []) if seen.returncode == 0 else []


def started(name: str, run: subprocess.CompletedProcess, docker: Docker, wait_s: float = 60.0) -> None:
    """Wait until the container `name` runs `IDLE`: its ENTRYPOINT has done what it does first.
    UserError, in one line, when it never gets there."""
    deadline = time.monotonic() + wait_s
    while run.returncode == 0 and time.monotonic() < deadline:
        top = docker("top", name, "-o", "args")
        if top.returncode != 0 or IDLE.encode() in top.stdout:
            break
        time.sleep(0.2)
    state = docker("inspect", "--format", "{{.State.Running}} {{.State.ExitCode}}", name).stdout.decode().split()
    if run.returncode != 0 or state[:1] != ["true"]:
        said = (run.stderr + docker("logs", "--tail", "1", name).stderr).decode().strip().splitlines()[-1:]
        raise UserError(f"image's ENTRYPOINT did not start (exit {state[1] if len(state) > 1 else '?'}): "
                        f"{said[0] if said else '(nothing)'}")


def healthy_in(name: str, workdir: str, check: Healthcheck, docker: Docker) -> None:
    """The task's healthcheck in the started container `name`, as the agent's sandbox runs it."""
    def run(command: str, timeout: float) -> tuple[int, str]:
        try:
            ran = docker("exec", "-w", workdir, name, "timeout", "-k", "5", f"{timeout:g}", "bash", "-c", command)
        except subprocess.TimeoutExpired:
            return 124, "timed out"
        return ran.returncode, (ran.stdout + ran.stderr).decode(errors="replace")

    try:
        wait_healthy(check, run)
    except UserError as exc:
        said = str(exc).replace("before the agent did anything", "before the oracle ran")
        raise UserError(said.replace("the task's healthcheck", "healthcheck", 1)) from None  # said as "task t: its ..."


def env_layer(env: dict[str, str]) -> str:
    """Dockerfile lines setting `env` in the image (a Harbor task's `[environment] env`): the agent's
    commands, its oracle's and its verifier's all have it, as in Harbor's container."""
    if not env:
        return ""
    quoted = {name: '"' + re.sub(r'(["\\$])', r"\\\1", value) + '"' for name, value in sorted(env.items())}
    return ("\n# -- added by `endstate tasks import harbor`: task.toml's [environment] env\n"
            + "".join(f"ENV {name}={value}\n" for name, value in quoted.items()))


def sidecars(folder: Path) -> None:
    """UserError, in one line, for a task whose environment/ holds a compose file starting containers
    beside the agent's (Harbor merges it into its own: `main` is the agent's)."""
    for name in ("docker-compose.yaml", "docker-compose.yml", "compose.yaml", "compose.yml"):
        compose = folder / "environment" / name
        if not compose.is_file():
            continue
        import yaml  # type: ignore[import-untyped]  # loaded only where a compose file is read

        try:
            services = (yaml.safe_load(compose.read_text()) or {}).get("services") or {}
        except (yaml.YAMLError, AttributeError):
            raise UserError(f"{compose}: not a compose file endstate can read: fix it") from None
        others = sorted(str(s) for s in services if s != "main")
        if others:
            raise UserError(f"{compose}: its services {', '.join(others)} are containers of their own beside the "
                            "agent's, which endstate does not start: a task that needs them cannot be done here")
