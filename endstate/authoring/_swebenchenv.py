"""SWE-bench's own environment for an instance that names its repository's `version`.

SWE-bench's harness builds one environment per (repository, version): a Python version, the
project installed (with extras, or from a requirements file), then pinned pip packages, and
pre-install shell steps. `data/swebench_envs.toml` holds those facts for the Python repositories
whose tests run under pytest. `swebench_env` finds an instance's entry; `env_requirements` turns it
into what the task's image adds to what the project declares: the requirements (the entry's bare
names, its requirements file, its extras) and the pins, which win over the project's lock file and
over the pytest of the commit's time. `env_python` is where the entry's Python comes from (the task's
image is built on it: `endstate.sandbox.python_source`). What cannot be had here is said in a log line,
never silently dropped: another Python than the entry's where no source serves it (the nearest newer),
what a conda environment file names that PyPI lacks (`_condaenv`), pre-install shell steps the table does not spell out. Those it does (`apt`:
Debian packages; `pre_install`: `sed` edits of setup files) are taken by `_build.build_inputs`.
"""

from __future__ import annotations

import functools
import re
import tomllib
from collections.abc import Callable, Collection, Iterable
from importlib import resources

import msgspec

from endstate.authoring._installed import runtime_requirements
from endstate.authoring._versions import requirement_name
from endstate.sandbox import SANDBOX_PYTHON, PythonSource, Tree, python_source

__all__ = ["ENV_DAY", "SwebenchEnv", "swebench_env", "env_exports", "env_python", "env_requirements", "python_deviation",
           "requirements_file_pins"]

#: The day SWE-bench's environments stand for: its harness installs what the specification leaves
#: unpinned at the newest PyPI holds when it builds an image, and SWE-bench Verified's lists were
#: validated in the harness's images of its publication (2024-08-13). What PyPI held then is what the
#: task's image takes first (`_versions.resolve_pinned`): today's newest breaks old trees (setuptools 81
#: dropped the pkg_resources Sphinx 3 imports), the commit's day often has no wheel for the named Python.
ENV_DAY = "2024-08-13T00:00:00Z"


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
    #: Debian packages SWE-bench's pre-install steps install (`apt-get install`), put in the task's image.
    apt: list[str] = []
    #: SWE-bench's pre-install edits of setup files (`sed -i ... setup.py`), run on a copy of those files.
    pre_install: list[str] = []
    #: What SWE-bench's evaluation script exports before the tests run (`NAME=value`), set on the task's
    #: test commands (`env_exports`).
    exports: list[str] = []


@functools.cache
def _table() -> tuple[SwebenchEnv, ...]:
    """The table, read once: a dataset's every record asks it."""
    text = resources.files("endstate.authoring").joinpath("data/swebench_envs.toml").read_text(encoding="utf-8")
    return msgspec.convert(tomllib.loads(text)["env"], type=tuple[SwebenchEnv, ...])


def swebench_env(repo: str, version: str | float | None) -> SwebenchEnv | None:
    """The environment SWE-bench builds for `repo` at `version` (as the dataset writes it: "3.0",
    or a number 3.0), None where the instance names none or the table has none."""
    if version is None or version == "":
        return None
    wanted = f"{version:.1f}" if isinstance(version, float) else str(version).strip()
    return next((e for e in _table() if e.repo.lower() == repo.lower() and wanted in e.versions), None)


def env_python(env: SwebenchEnv, log: Callable[[str], None] = lambda line: None) -> PythonSource | None:
    """Where the image of the entry's Python comes from; None for the sandbox's own (Debian bookworm's 3.11).
    The source, and a deviation from the entry's Python, are said in the log."""
    if env.python == SANDBOX_PYTHON:
        return None
    source = python_source(env.python)
    log(f"SWE-bench's environment for {env.repo} is Python {env.python}: the task's image is {source.tag} "
        f"({source.said()})")
    if source.deviation:
        log(f"warning: {source.deviation}")
    return source


def python_deviation(env: SwebenchEnv | None) -> str:
    """The sentence a task's task.toml carries when its image's Python is not the one SWE-bench names ("" else)."""
    if env is None or env.python == SANDBOX_PYTHON:
        return ""
    return python_source(env.python).deviation


def env_requirements(env: SwebenchEnv, project: Tree, sandbox_python: str,
                     log: Callable[[str], None] = lambda line: None,
                     build: Collection[str] = ()) -> tuple[list[str], dict[str, str], list[str], list[str]]:
    """(requirements to add, name -> version pins, extras of the project to add, requirements files of
    the project to add) for `env`, with a log line for each part of it that the sandbox cannot honour.
    `build`: what the project's build needs, which the image's one environment holds too."""
    label = f"SWE-bench's environment for {env.repo} (versions {env.versions[0]}..{env.versions[-1]})"
    log(f"{label}: honoured (its pins, requirements and extras)")
    if env.python != sandbox_python:
        log(f"{label} is Python {env.python}; the task's image has Python {sandbox_python}: its pins are taken "
            f"where they have wheels for {sandbox_python}, else the newest the project's declarations allow")
    if env.conda_env:
        log(f"{label} builds from the conda file {env.conda_env}: what PyPI has of it is added where it resolves "
            "beside the rest (PyPI wheels only)")
    if env.steps and not (env.apt or env.pre_install):
        log(f"{label} runs {env.steps} pre-install shell step(s) (system packages, edits of setup files): not run")
    elif env.apt or env.pre_install:
        log(f"{label}: its pre-install steps taken (Debian packages {', '.join(env.apt) or 'none'}; "
            f"{len(env.pre_install)} edit(s) of setup files, read for the image and its build)")
    pins, wanted = {}, []
    for spec in env.pins:
        name, _, version = spec.partition("==")
        if version and requirement_name(name) == requirement_name(spec):
            if not _pin_stands(label, spec, project, build, env.python, log):
                continue  # nor is its name asked bare: the project's requirement, with its bound, stands
            pins[requirement_name(name)] = version.strip()
        wanted.append(spec if not version else requirement_name(name))
    found = next((path for path in env.requirements if path in project), None)
    if env.requirements and found is None:
        log(f"{label} installs {' or '.join(env.requirements)}, which the tree does not hold")
    return wanted, pins, list(env.extras), [found] if found else []


def _pin_stands(label: str, spec: str, project: Tree, build: Collection[str], python: str,
                log: Callable[[str], None]) -> bool:
    """Whether the pin `spec` (`name==X`) is installed as SWE-bench's environment installs it: it is installed
    first, and the project's own install (or here, its build in the image's one environment) then takes what
    it asks; said in the log where it gives way."""
    name, _, version = spec.partition("==")
    refused = _refused_by(runtime_requirements(project), requirement_name(name), version.strip(), python)
    if refused:
        log(f"{label}: its pin {spec} gives way to the project's own `{refused}` (its install, after the "
            "pins, takes what the project asks)")
        return False
    refused = _refused_by(build, requirement_name(name), version.strip(), python)
    if refused:  # matplotlib 3.5's setup_requires `setuptools_scm>=4,<7` beside the pin setuptools-scm==7.1.0
        log(f"{label}: its pin {spec} gives way to the project's build requirement `{refused}` (SWE-bench's "
            "install builds in an environment of its own; here the build runs in the image's one)")
        return False
    return True


#: An exact pin of a requirements file, with no marker: `astroid==2.12.13`.
_EXACT_PIN = re.compile(r"([A-Za-z0-9][A-Za-z0-9._-]*)\s*==\s*([A-Za-z0-9._+!-]+)")


def requirements_file_pins(env: SwebenchEnv, project: Tree, lines: Iterable[str], build: Collection[str] = (),
                           log: Callable[[str], None] = lambda line: None) -> dict[str, str]:
    """name -> version of the exact pins in the requirements file SWE-bench's environment installs before the
    project (`lines`, as read), where the project's own requirements take them: pylint 2.15's
    `requirements_test_min.txt` pins `astroid==2.12.13` beside the project's `astroid>=2.12.2,<=2.14.0-dev0`,
    and its tests expect that astroid, not the newest the range allows."""
    label = f"SWE-bench's environment for {env.repo} (versions {env.versions[0]}..{env.versions[-1]})"
    pins = {}
    for line in lines:
        exact = _EXACT_PIN.fullmatch(line.strip())
        if exact and _pin_stands(label, line.strip(), project, build, env.python, log):
            pins[requirement_name(exact.group(1))] = exact.group(2)
    return pins


def _refused_by(requirements: Iterable[str], name: str, version: str, python: str) -> str:
    """The requirement of `name` among the project's own (what `pip install -e .` installs, or what its build
    needs) that `version` does not satisfy on `python`, "" when none: pylint 3.0 asks `astroid>=3.0.0a8`,
    SWE-bench pins astroid==3.0.0a6."""
    from packaging.requirements import InvalidRequirement, Requirement

    for line in requirements:
        try:
            requirement = Requirement(line)
        except InvalidRequirement:
            continue
        applies = requirement.marker is None or requirement.marker.evaluate({"python_version": python, "extra": ""})
        if applies and requirement_name(requirement.name) == name \
                and not requirement.specifier.contains(version, prereleases=True):
            return line.strip()
    return ""


#: Locales that need no generating: every Debian image has them.
_BUILT_IN_LOCALES = ("C", "POSIX", "C.UTF-8", "C.utf8")


def env_exports(env: SwebenchEnv | None) -> tuple[list[str], list[str]]:
    """(the `NAME=value` words SWE-bench's evaluation script exports for the entry, which the task's test
    commands carry; the locales they name, which the task's image must generate: `en_US.UTF-8`)."""
    exports = list(env.exports) if env else []
    named = [word.split("=", 1)[1] for word in exports if word.split("=", 1)[0] in ("LANG", "LC_ALL")]
    return exports, list(dict.fromkeys(n for n in named if n not in _BUILT_IN_LOCALES))
