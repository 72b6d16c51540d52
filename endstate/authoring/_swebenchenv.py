"""SWE-bench's own environment for an instance that names its repository's `version`.

SWE-bench's harness builds one environment per (repository, version): a Python version, the
project installed (with extras, or from a requirements file), then pinned pip packages, and
pre-install shell steps. `data/swebench_envs.toml` holds those facts for the Python repositories
whose tests run under pytest. `swebench_env` finds an instance's entry; `env_requirements` turns it
into what the task's image adds to what the project declares: the requirements (the entry's bare
names, its requirements file, its extras) and the pins, which win over the project's lock file and
over the pytest of the commit's time. What cannot be had here is said in a log line, never silently
dropped: another Python than the sandbox's 3.11 (the pins then stand where they have wheels for 3.11,
else the newest the declarations allow), a conda environment file, pre-install shell steps.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from importlib import resources

import msgspec

from endstate.authoring._versions import requirement_name
from endstate.sandbox import Tree

__all__ = ["SwebenchEnv", "swebench_env", "env_requirements"]


class SwebenchEnv(msgspec.Struct, forbid_unknown_fields=True):
    repo: str
    versions: list[str]
    python: str
    test_cmd: str
    pins: list[str] = []
    requirements: list[str] = []
    extras: list[str] = []
    conda_env: str = ""
    steps: int = 0


def _table() -> list[SwebenchEnv]:
    text = resources.files("endstate.authoring").joinpath("data/swebench_envs.toml").read_text(encoding="utf-8")
    return msgspec.convert(tomllib.loads(text)["env"], type=list[SwebenchEnv])


def swebench_env(repo: str, version: str | float | None) -> SwebenchEnv | None:
    """The environment SWE-bench builds for `repo` at `version` (as the dataset writes it: "3.0",
    or a number 3.0), None where the instance names none or the table has none."""
    if version is None or version == "":
        return None
    wanted = f"{version:.1f}" if isinstance(version, float) else str(version).strip()
    return next((e for e in _table() if e.repo.lower() == repo.lower() and wanted in e.versions), None)


def env_requirements(env: SwebenchEnv, project: Tree, sandbox_python: str,
                     log: Callable[[str], None] = lambda line: None) -> tuple[list[str], dict[str, str], list[str],
                                                                              list[str]]:
    """(requirements to add, name -> version pins, extras of the project to add, requirements files of
    the project to add) for `env`, with a log line for each part of it that the sandbox cannot honour."""
    label = f"SWE-bench's environment for {env.repo} (versions {env.versions[0]}..{env.versions[-1]})"
    log(f"{label}: honoured (its pins, requirements and extras)")
    if env.python != sandbox_python:
        log(f"{label} is Python {env.python}; the sandbox has Python {sandbox_python}: its pins are taken where "
            f"they have wheels for {sandbox_python}, else the newest the project's declarations allow")
    if env.conda_env:
        log(f"{label} builds from the conda file {env.conda_env}: not used here (PyPI wheels only)")
    if env.steps:
        log(f"{label} runs {env.steps} pre-install shell step(s) (system packages, edits of setup files): not run")
    pins, wanted = {}, []
    for spec in env.pins:
        name, _, version = spec.partition("==")
        if version and requirement_name(name) == requirement_name(spec):
            pins[requirement_name(name)] = version.strip()
        wanted.append(spec if not version else requirement_name(name))
    found = next((path for path in env.requirements if path in project), None)
    if env.requirements and found is None:
        log(f"{label} installs {' or '.join(env.requirements)}, which the tree does not hold")
    return wanted, pins, list(env.extras), [found] if found else []
