"""What a Harbor task's own files say: its task.toml (`HarborTask`, which the export writes too),
endstate's own settings beside it (endstate.toml), its Dockerfile's working folder and user, the
test file beside its test.sh, what its separate verifier's image installs."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Iterable
from pathlib import Path, PurePosixPath
from typing import Annotated, Any, Literal

import msgspec

from endstate.authoring._harbortools import apt_packages
from endstate.errors import UserError
from endstate.sandbox import Healthcheck
from endstate.task import toml_text

__all__ = ["EndstateSettings", "HarborAgent", "HarborEnvironment", "HarborSolution", "HarborTask",
           "HarborVerifier",
           "VERIFIER_IMAGE", "dockerfile_user", "dockerfile_workdir", "endstate_settings", "held_test_file",
           "harbor_text", "memory_mb", "network_mode", "own_env", "read_harbor_task", "read_toml", "unsupported",
           "verifier_packages"]

#: The files of tests/ that build a separate verifier's image (tests baked in): a recipe, not tests.
VERIFIER_IMAGE = ("Dockerfile", ".dockerignore", "docker-compose.yaml")


def read_toml(path: Path) -> dict:
    try:
        return tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{path}: not valid TOML ({exc}): fix the file") from None


class _Harbor(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True, frozen=True):
    pass


#: A positive number of seconds, cpus or megabytes.
Positive = Annotated[float, msgspec.Meta(gt=0)]
Count = Annotated[int, msgspec.Meta(gt=0)]


#: Who may be reached: "no-network", "public" or "allowlist" (with `allowed_hosts`), as Harbor 0.26 says it.
NetworkMode = Literal["no-network", "public", "allowlist"]


class HarborVerifier(_Harbor, frozen=True):
    timeout_sec: Positive | None = None
    env: dict[str, str] = {}
    #: How Harbor hands the end state to the verifier; endstate grades in a fresh container of its own either way.
    environment_mode: str | None = None
    user: str | int | None = None
    network_mode: NetworkMode | None = None
    allowed_hosts: list[str] | None = None
    #: A separate verifier's own environment (Harbor's [verifier.environment]) and the commands run in
    #: compose services before artifacts are collected ([[verifier.collect]]): read, refused at import.
    environment: dict[str, Any] | None = None
    collect: list[dict[str, Any]] = []


class HarborAgent(_Harbor, frozen=True):
    timeout_sec: Positive | None = None
    #: Who the agent works as (endstate's agent is uid 1000, or root).
    user: str | int | None = None
    network_mode: NetworkMode | None = None
    allowed_hosts: list[str] | None = None


class HarborEnvironment(_Harbor, frozen=True):
    build_timeout_sec: Positive | None = None
    docker_image: str | None = None
    os: str | None = None
    cpus: Positive | None = None
    #: A size such as "2G" or "512M" (`memory_mb` says it in megabytes).
    memory: str | None = None
    memory_mb: Count | None = None
    storage: str | None = None
    storage_mb: Count | None = None
    gpus: int | None = None
    gpu_types: list[str] | None = None
    tpu: dict[str, Any] | None = None
    mcp_servers: list[dict[str, Any]] = []
    #: The container's environment: literal values, or `${VAR:-default}` (endstate takes the default).
    env: dict[str, str] = {}
    skills_dir: str | None = None
    #: Harbor's HealthcheckConfig: the same fields, defaults and bounds as a task's own (sandbox._health).
    healthcheck: Healthcheck | None = None
    #: Where commands run; overrides the Dockerfile's WORKDIR.
    workdir: str | None = None
    network_mode: NetworkMode | None = None
    allowed_hosts: list[str] | None = None
    allow_internet: bool | None = None


class HarborSolution(_Harbor, frozen=True):
    env: dict[str, str] = {}


class HarborAuthor(_Harbor, frozen=True):
    name: str
    email: str | None = None


class HarborPackage(_Harbor, frozen=True):
    """`[task]`: the task's name in Harbor's registry ("org/name") and what describes it."""

    name: str
    version: str | None = None
    description: str = ""
    authors: list[HarborAuthor] = []
    keywords: list[str] = []


class HarborArtifact(_Harbor, frozen=True):
    source: str
    destination: str | None = None
    exclude: list[str] = []
    service: str | None = None


class HarborTask(_Harbor, frozen=True):
    """A Harbor task.toml, every field Harbor 0.26 (schema 1.4) knows: a field a known table does not
    have is a typo that would do nothing (a verifier with no timeout), refused. `metadata` is free.
    endstate's own settings are not here: they live in endstate.toml beside it (`endstate_settings`).
    `artifacts` and the verifier's `environment_mode` say how Harbor hands the end state to a separate
    verifier. What endstate cannot do as Harbor does (`steps`, an MCP server) is refused at import
    (`_harbor.unsupported`), never left unread."""

    #: None: not stated. `version` is Harbor's first name for it, `schema_version` its newer one (Harbor 0.26).
    version: str | None = None
    schema_version: str | None = None
    task: HarborPackage | None = None
    source: str | None = None
    artifacts: list[str | HarborArtifact] = []
    metadata: dict[str, Any] = {}
    verifier: HarborVerifier = HarborVerifier()
    agent: HarborAgent = HarborAgent()
    environment: HarborEnvironment = HarborEnvironment()
    solution: HarborSolution = HarborSolution()
    multi_step_reward_strategy: str | None = None
    steps: list[dict[str, Any]] | None = None


def harbor_text(task: HarborTask, header: Iterable[str] = ()) -> str:
    """A Harbor task.toml, in the layout Harbor's own tasks use ([metadata] a table)."""
    return toml_text(task, header, as_tables=("metadata",))


#: What a value of a kind must be, said to the person who wrote it.
_GIVE = {"float": "give a {}number", "int": "give a {}whole number", "str": "give a string",
         "bool": "give true or false", "array": "give a list", "object": "give a table"}


def read_harbor_task(path: Path) -> tuple[HarborTask, dict[str, Any]]:
    """A Harbor task.toml, and the tables of it endstate does not know (a newer Harbor's), by name:
    kept aside for the caller to name, never read. UserError in one line naming the file and field."""
    raw = read_toml(path)
    known = msgspec.structs.fields(HarborTask)
    names = [f.encode_name for f in known]
    unknown = {k: v for k, v in raw.items() if k not in names and isinstance(v, dict)}
    if "graders" in raw and "id" in raw:  # an endstate task, given where a Harbor one is read
        raise UserError(f"{path} is an endstate task already (it has `id` and `graders`): it needs no import; "
                        f"run it with --suite {path.parent.parent}")
    for key in raw:
        if key not in names and key not in unknown:
            raise UserError(f"{path}: top-level field `{key}` is not a Harbor task field: valid ones are "
                            f"{', '.join(names)}")
    try:
        return msgspec.convert({k: v for k, v in raw.items() if k not in unknown}, HarborTask), unknown
    except msgspec.ValidationError as exc:
        raise UserError(f"{path}: {_harbor_error(exc, raw)}") from None


def _harbor_error(exc: msgspec.ValidationError, raw: dict[str, Any]) -> str:
    text = str(exc)
    where = re.search(r"- at `\$\.([\w.]+)", text)
    dotted = where[1] if where else ""
    unknown = re.match(r"Object contains unknown field `([^`]+)`", text)
    if unknown:
        table = next(f.type for f in msgspec.structs.fields(HarborTask) if f.encode_name == dotted)
        valid = ", ".join(f.encode_name for f in msgspec.structs.fields(table))
        return (f"field `{dotted}.{unknown[1]}` is not a Harbor task field: valid ones in [{dotted}] are {valid}")
    value: Any = raw
    for part in dotted.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    kind = re.search(r"Expected `(\w+)", text)
    give = _GIVE.get(kind[1] if kind else "", text)
    return f"field `{dotted}` is {value!r}: {give.format('positive ' if _positive(dotted) else '')}"


def _positive(dotted: str) -> bool:
    """Whether the field at `dotted` (`agent.timeout_sec`) takes positive numbers only."""
    info: Any = msgspec.inspect.type_info(HarborTask)
    for name in dotted.split("."):
        field = next((f for f in getattr(info, "fields", ()) if f.encode_name == name), None)
        if field is None:
            return False
        info = field.type
    kinds = info.types if isinstance(info, msgspec.inspect.UnionType) else (info,)
    return any(getattr(kind, "gt", None) == 0 for kind in kinds)


def unsupported(task: HarborTask, path: Path) -> None:
    """UserError in one line, naming the field, where the task asks for what endstate cannot give as
    Harbor does: better refused than run otherwise."""
    env, verifier = task.environment, task.verifier
    said = {
        "steps": (task.steps, "a task of several steps, each with its agent and verifier, is not one endstate runs: "
                              "import each step as a task of its own"),
        "environment.os": (env.os not in (None, "linux", "LINUX", "Linux") and env.os,
                           "endstate runs Linux containers only"),
        "environment.tpu": (env.tpu, "endstate's sandboxes have no TPU"),
        "environment.mcp_servers": (env.mcp_servers, "endstate gives its agents no MCP server: a task that needs one "
                                                     "cannot be done here"),
        "verifier.collect": (verifier.collect, "its commands run in compose services, which endstate does not start"),
        "verifier.environment": (set(verifier.environment or {}) - _RESOURCES,
                                 "endstate grades in the task's own image, not a verifier container built otherwise"),
        "artifacts": ([a.source for a in task.artifacts if not isinstance(a, str) and a.service not in (None, "main")],
                      "an artifact of a compose service: endstate does not start one"),
    }
    for table in ("environment", "agent"):
        mode = getattr(task, table).network_mode
        said[f"{table}.network_mode"] = (mode == "allowlist" and mode,
                                         "endstate cannot limit the network to a list of hosts: the agent is offline "
                                         "(\"no-network\") or reaches any (\"public\")")
    for field, (value, why) in said.items():
        if value:
            raise UserError(f"{path}: field `{field}` is {_shown(value)}: {why}")


#: What a separate verifier's environment may say that changes nothing of how endstate grades.
_RESOURCES = {"build_timeout_sec", "cpus", "memory", "memory_mb", "storage", "storage_mb"}


def _shown(value: Any) -> str:
    text = repr(sorted(value) if isinstance(value, set) else value)
    return text if len(text) <= 80 else text[:77] + "..."


def network_mode(task: HarborTask) -> str:
    """The agent's network as Harbor 0.26 decides it: [agent]'s, else [environment]'s, else the older
    `allow_internet`; where none is said endstate's agent is offline (Harbor's would reach the network)."""
    env = task.environment
    legacy = None if env.allow_internet is None else "public" if env.allow_internet else "no-network"
    return task.agent.network_mode or env.network_mode or legacy or "no-network"


#: `${VAR}` or `${VAR:-default}`, the whole value: a variable of the host, as Harbor reads one.
_TEMPLATE = re.compile(r"\$\{([^}:]+)(?::-(.*))?\}")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def own_env(values: dict[str, str], table: str, path: Path, say: Callable[[str], None]) -> dict[str, str]:
    """A table's `env` as endstate sets it: literal values as written; a `${VAR:-default}` is its
    default (said): endstate never hands a variable of the host to a container (a secret would reach
    the agent's transcript, and two hosts would run two tasks). UserError for a `${VAR}` without one."""
    given: dict[str, str] = {}
    for name, value in values.items():
        if not _NAME.fullmatch(name) or (table == "verifier" and name == "TMPDIR"):
            raise UserError(f"{path}: field `{table}.env` names {name!r}: give a variable's name (letters, digits "
                            f"and _, not starting with a digit){', not TMPDIR (the harness sets it)' * (name == 'TMPDIR')}")
        template = _TEMPLATE.fullmatch(value)
        if template and template[2] is None:
            raise UserError(f"{path}: field `{table}.env.{name}` is {value!r}, a variable of the host: endstate hands "
                            f"none to a container (a secret would reach the agent and its transcript): give a value, "
                            f"or a default as ${{{template[1]}:-VALUE}}")
        if template:
            say(f"field `{table}.env.{name}` is {value!r}: endstate takes its default, never the host's variable")
        given[name] = template[2] if template else value
        if table == "environment" and "\n" in given[name]:
            raise UserError(f"{path}: field `environment.env.{name}` holds a line break: the image's environment "
                            "cannot: give it on one line")
    return given


def memory_mb(environment: HarborEnvironment, path: Path) -> int | None:
    """The task's memory in megabytes: `memory_mb`, or `memory` ("2G", "512M") read as such."""
    if environment.memory_mb is not None or environment.memory is None:
        return environment.memory_mb
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([MG])i?B?\s*", environment.memory, re.IGNORECASE)
    if not match:
        raise UserError(f"{path}: field `environment.memory` is {environment.memory!r}: give a size such as "
                        "\"2G\" or \"512M\"")
    return int(float(match[1]) * (1024 if match[2].upper() == "G" else 1))


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


class EndstateSettings(_Harbor, frozen=True):
    """`endstate.toml` beside a Harbor task's task.toml: endstate's own settings, which Harbor does not read."""

    #: Who the agent works as; None: as Harbor's `[agent] user` or the Dockerfile says (`agent_user`).
    user: Literal["agent", "root"] | None = None
    #: The whole container sealed, or only the folders the oracle changed.
    seal: Literal["whole", "changed"] = "whole"


def endstate_settings(folder: Path, tables: dict) -> EndstateSettings:
    """endstate's own settings for a Harbor task, from endstate.toml beside its task.toml: a table
    of them in task.toml (`tables`: its tables by name) is one Harbor does not know (`harbor lint`
    refuses it)."""
    own = folder / "endstate.toml"
    if "endstate" in tables:
        raise UserError(f"{folder / 'task.toml'}: an [endstate] table is not Harbor's (harbor lint: "
                        f"unknown-config-field): move its fields into {own}")
    try:
        return msgspec.convert(read_toml(own), EndstateSettings) if own.is_file() else EndstateSettings()
    except msgspec.ValidationError:
        raise UserError(f"{own}: takes user = \"agent\" or \"root\" and seal = \"whole\" or \"changed\", "
                        "nothing else: fix the file or remove it") from None


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
