"""What a Harbor task's own files say: its task.toml's fields, endstate's own settings beside it
(endstate.toml), its Dockerfile's working folder and user, the test file beside its test.sh, what
its separate verifier's image installs."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from endstate.authoring._harbortools import apt_packages
from endstate.errors import UserError

__all__ = ["HARBOR_FIELDS", "VERIFIER_IMAGE", "check_fields", "dockerfile_user", "dockerfile_workdir", "endstate_settings", "held_test_file",
           "memory_mb", "number", "read_toml", "verifier_packages"]

#: The files of tests/ that build a separate verifier's image (tests baked in): a recipe, not tests.
VERIFIER_IMAGE = ("Dockerfile", ".dockerignore", "docker-compose.yaml")


def read_toml(path: Path) -> dict:
    try:
        return tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{path}: not valid TOML ({exc}): fix the file") from None


#: The fields of a Harbor task.toml, by table: one not listed is a typo that would do nothing (a
#: verifier with no timeout), so it is refused. `metadata` is free. endstate's own settings are
#: not here: they live in endstate.toml beside it (`endstate_settings`). `artifacts` and the
#: verifier's `environment_mode` say how Harbor hands the end state to a separate verifier;
#: endstate grades in a fresh container of its own either way.
HARBOR_FIELDS: dict[str, tuple[str, ...]] = {
    "": ("version", "metadata", "verifier", "agent", "environment", "solution", "artifacts"),
    "verifier": ("timeout_sec", "env", "environment_mode"),
    "agent": ("timeout_sec",),
    "environment": ("build_timeout_sec", "docker_image", "cpus", "memory", "memory_mb", "storage", "storage_mb",
                    "gpus", "gpu_types", "allow_internet"),
    "solution": ("env",),
}


def check_fields(table: dict, path: Path) -> None:
    """UserError naming the first field of a Harbor task.toml that no table of it has, with the valid ones."""
    for section, known in HARBOR_FIELDS.items():
        fields = table if not section else table.get(section, {})
        if not isinstance(fields, dict):
            raise UserError(f"{path}: `{section}` is {fields!r}: it is a table ([{section}])")
        for key in fields:
            if key not in known:
                where = f"field `{section}.{key}`" if section else f"top-level field `{key}`"
                raise UserError(f"{path}: {where} is not a Harbor task field: valid ones"
                                f"{f' in [{section}]' if section else ''} are {', '.join(known)}")


def number(table: dict, section: str, key: str, path: Path) -> float | None:
    value = table.get(section, {}).get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise UserError(f"{path}: field `{section}.{key}` is {value!r}: give a positive number")
    return float(value)


def memory_mb(table: dict, path: Path) -> int | None:
    env = table.get("environment", {})
    if "memory_mb" in env:
        return int(number(table, "environment", "memory_mb", path) or 0) or None
    value = env.get("memory")
    if value is None:
        return None
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([MG])i?B?\s*", str(value), re.IGNORECASE)
    if not match:
        raise UserError(f"{path}: field `environment.memory` is {value!r}: give a size such as \"2G\" or \"512M\"")
    size = float(match[1]) * (1024 if match[2].upper() == "G" else 1)
    return int(size)


def dockerfile_workdir(dockerfile: str) -> str:
    workdir = "/app"
    for line in dockerfile.splitlines():
        words = line.split()
        if len(words) >= 2 and words[0].upper() == "WORKDIR":
            workdir = str(PurePosixPath(workdir) / words[1])
    return workdir


def dockerfile_user(dockerfile: str) -> str:
    """Who the task's agent works as, as Harbor runs it: the Dockerfile's last USER, root when none."""
    user = "root"
    for line in dockerfile.splitlines():
        words = line.split()
        if len(words) >= 2 and words[0].upper() == "USER":
            user = words[1].split(":")[0]
    return "root" if user in ("root", "0") else "agent"


def held_test_file(tests: Path) -> str | None:
    """The test file test.sh runs, by its name (`test_*`, `*.test.*`, `*_test.*`, `*.bats`, ...): the
    one a `delete-tests` hack empties; None when tests/ holds no file named so."""
    names = sorted(str(p.relative_to(tests)) for p in tests.rglob("*") if p.is_file() and p.name != "test.sh")
    pattern = re.compile(r"(^test[_-].+|.+[._-](test|tests|spec)\.[a-z]+|.+\.bats)$", re.IGNORECASE)
    return next((name for name in names if pattern.match(PurePosixPath(name).name)), None)


def endstate_settings(folder: Path, manifest: dict) -> dict:
    """endstate's own settings for a Harbor task (`user`, `seal`), from endstate.toml beside its
    task.toml: a table of them in task.toml is one Harbor does not know (`harbor lint` refuses it)."""
    own = folder / "endstate.toml"
    if "endstate" in manifest:
        raise UserError(f"{folder / 'task.toml'}: an [endstate] table is not Harbor's (harbor lint: "
                        f"unknown-config-field): move its fields into {own}")
    settings = read_toml(own) if own.is_file() else {}
    if set(settings) - {"user", "seal"} or settings.get("user", "root") not in ("agent", "root") \
            or settings.get("seal", "whole") not in ("whole", "changed"):
        raise UserError(f"{own}: takes user = \"agent\" or \"root\" and seal = \"whole\" or \"changed\", "
                        "nothing else: fix the file or remove it")
    return settings


def verifier_packages(folder: Path, test_sh: str, say: Callable[[str], None]) -> list[str]:
    """What the verifier installs from Debian's archive, which endstate adds to the task's image
    (it grades there): what tests/test.sh installs for itself, then what tests/Dockerfile (a
    separate verifier's image) installs that the task's own image does not."""
    packages = apt_packages(test_sh)
    if packages:
        say(f"tests/test.sh installs {' '.join(packages)}")
    recipe = folder / "tests" / "Dockerfile"
    if not recipe.is_file():
        return packages
    def run_steps(dockerfile: Path) -> str:  # a Dockerfile's RUN lines as the shell reads them
        return re.sub(r"(?im)^\s*RUN\s+", "", dockerfile.read_text())

    own = set(apt_packages(run_steps(folder / "environment" / "Dockerfile"))) | set(packages)
    if baked := [name for name in apt_packages(run_steps(recipe)) if name not in own]:
        say(f"its verifier's image (tests/Dockerfile) installs {' '.join(baked)}")
    return packages + baked
