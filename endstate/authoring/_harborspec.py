"""What a Harbor task's own files say: its task.toml's fields, its Dockerfile's working folder and
user, the test file beside its test.sh."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path, PurePosixPath

from endstate.errors import UserError

__all__ = ["dockerfile_user", "dockerfile_workdir", "held_test_file", "memory_mb", "number", "read_toml"]


def read_toml(path: Path) -> dict:
    try:
        return tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{path}: not valid TOML ({exc}): fix the file") from None


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
