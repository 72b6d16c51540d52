"""The docker program, for the few things endstate asks of the engine as its command line does
them (a build from a folder with the host's BuildKit, `cp` and `diff` of a created container).

One timeout and one wording for its failures; every container it makes (`run`, `create`)
carries the owner labels the reaper reads (see `_reaper`), as the SDK's containers do.
"""

from __future__ import annotations

import secrets
import subprocess

from endstate.errors import SandboxUnavailable
from endstate.sandbox._reaper import owner_labels

__all__ = ["CLI_TIMEOUT_S", "docker_cli"]

#: A build of a task's image on a loaded machine ends well inside this; a wedged engine does not.
CLI_TIMEOUT_S = 900.0

#: The subcommands that make a container.
_MAKES_A_CONTAINER = ("run", "create")


def docker_cli(*args: str, why: str, input: bytes | None = None,
               timeout: float = CLI_TIMEOUT_S) -> subprocess.CompletedProcess[bytes]:
    """`docker ARGS`, its output captured (a non-zero exit is the caller's to read). Raises
    SandboxUnavailable, starting with `why` (what the caller was doing), when the program is
    missing or runs past `timeout`."""
    argv = ["docker", *args]
    if args and args[0] in _MAKES_A_CONTAINER:
        labels = [f"--label={key}={value}" for key, value in owner_labels(secrets.token_hex(8)).items()]
        argv = ["docker", args[0], *labels, *args[1:]]
    try:
        return subprocess.run(argv, input=input, capture_output=True, timeout=timeout)
    except FileNotFoundError:
        raise SandboxUnavailable(f"{why}: install the docker client") from None
    except subprocess.TimeoutExpired:
        raise SandboxUnavailable(f"{why}: `docker {args[0]}` ran past {timeout / 60:.0f} minutes: check the "
                                 "engine (`docker info`)") from None
