"""Agent files: how an installed coding agent is installed, started and talked to.

    name = "mini-swe-agent"
    [install]   requirements = ["mini-swe-agent==2.4.6"]      pip specs, resolved on the host
                npm = ["pkg@1.2.3"], debian = ["nodejs"]      or npm packages and Debian's Node
    [run]       module or program, args, env, time_budget_s   how it starts, inside the sandbox
    [model]     base_url_env, api_key_env, name_env, ...      where it finds the model
    [finish]    exit_codes, status_file, status_key, done     how it says it has finished
    [scripted]  fence, submit                                 its action format, for the control arms
    [[normalise]] pattern, replacement                        volatile request text, made fixed

Written by people, so decoded strictly: an unknown field is an error naming the
file and the field. An agent's id is its name and the sha256 of its file's bytes,
so a changed file is a different agent on the run card and in the pack hash.
"""

from __future__ import annotations

import hashlib
import re
from importlib import resources
from pathlib import Path

import msgspec

from endstate.errors import AgentFileError, strict_message

__all__ = ["AgentSpec", "Install", "Launch", "ModelEnv", "Finish", "ScriptedFormat", "Rewrite", "load_agent",
           "find_agent", "shipped_agents", "DEFAULT_AGENT", "OBSERVABLE_COUNTERS"]

#: The name of endstate's own tool loop, the agent when none is named.
DEFAULT_AGENT = "endstate"

#: The counters the harness sees for any agent: model turns and the usage fields of its answers.
#: Tool calls, denied calls, compaction events and resumes happen inside a foreign agent.
OBSERVABLE_COUNTERS: tuple[str, ...] = ("steps", "input_tokens", "output_tokens")

_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,62}$")
_PIP_PINNED = re.compile(r"^[A-Za-z0-9._\[\],-]+\s*===?\s*([^\s;,]+)\s*(;.*)?$")
_NPM_PINNED = re.compile(r"^(@[a-z0-9._-]+/)?[a-z0-9._-]+@\d+\.\d+\.\d+([-+][0-9A-Za-z.-]+)?$")


class _Strict(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    pass


class Install(_Strict):
    #: pip requirement specs (pin them: the wheelhouse and the image layer are keyed by them).
    requirements: tuple[str, ...] = ()
    #: npm packages, each pinned as NAME@VERSION, installed on the host into the agent's prefix;
    #: or the path of a package tarball (`npm pack`'s .tgz), keyed by its bytes like a wheel.
    npm: tuple[str, ...] = ()
    #: Debian packages the agent's program needs (e.g. "nodejs"), downloaded on the host with
    #: those of their dependencies the task's image lacks, and installed into the layer offline.
    debian: tuple[str, ...] = ()
    #: Shell commands run in the layer's build (network off, in the npm prefix), e.g. the
    #: package's own install script, which `npm install` on the host does not run.
    build: tuple[str, ...] = ()


class Launch(_Strict):
    #: The Python module run as `python3 -m MODULE ARGS` (with the agent's own packages first on its path).
    module: str = ""
    #: Or a program run as `PROGRAM ARGS`: a name from the npm packages' bin folder, or an absolute path.
    program: str = ""
    #: Its arguments; `{prompt}` stands for the task's prompt, `{max_steps}` for its step budget,
    #: `{model}` (here and in `env` values) for the model's name, `{base_url}` for the proxy's
    #: API root (for an agent that reads it from its configuration, not the environment).
    args: tuple[str, ...] = ()
    #: Extra environment variables of the agent's process.
    env: dict[str, str] = {}
    #: The agent's wall clock ceiling; a task's own budget is used when it is smaller.
    time_budget_s: float = 900.0


class ModelEnv(_Strict):
    #: Environment variables that carry the proxy's URL, a placeholder key and the model's name.
    base_url_env: str
    api_key_env: str
    name_env: str
    #: Put before the model's name (litellm wants the provider first, e.g. "openai/").
    name_prefix: str = ""
    #: URL paths (below the API root) the proxy forwards; anything else is refused in the sandbox.
    endpoints: tuple[str, ...] = ("/chat/completions",)


class Finish(_Strict):
    #: Exit codes of a run that ended in order.
    exit_codes: tuple[int, ...] = (0,)
    #: A JSON file the agent leaves (absolute path in the sandbox) and the dotted key in it
    #: whose value says how it ended; `done` lists the values that mean "submitted".
    status_file: str = ""
    status_key: str = ""
    done: tuple[str, ...] = ()


class ScriptedFormat(_Strict):
    #: The info string of the fenced block that holds the one command of a turn.
    fence: str
    #: The command that tells the agent the work is done.
    submit: str


class Rewrite(_Strict):
    """A regular expression replaced in every string of a request body before it is sent."""

    pattern: str
    replacement: str = ""


class AgentSpec(_Strict):
    name: str
    install: Install
    run: Launch
    model: ModelEnv
    description: str = ""
    finish: Finish = Finish()
    scripted: ScriptedFormat | None = None
    normalise: tuple[Rewrite, ...] = ()
    #: sha256 of the file's bytes (filled in on load, never written by hand).
    file_sha256: str = ""

    @property
    def id(self) -> str:
        """What the run card and the pack hash carry: name and a short content hash."""
        return f"{self.name}@{self.file_sha256[:12]}"

    @property
    def wire(self) -> str:
        """The wire format the agent speaks, as endstate.models.WIRE_FORMATS names it, read from
        the endpoints it posts to ("" when they name none of the three, or more than one)."""
        kinds = {"the Messages API" if e.endswith("/messages") else "the Responses API" if e.endswith("/responses")
                 else "Chat Completions" if e.endswith("/chat/completions") else "" for e in self.model.endpoints}
        return kinds.pop() if len(kinds) == 1 else ""

    @property
    def version(self) -> str:
        """The agent program's version, as its first pinned package says ("" when unpinned):
        what the run card shows beside the name, like a model's."""
        for package in self.install.npm:
            return "" if package.endswith(".tgz") else package.rpartition("@")[2]
        for requirement in self.install.requirements:
            pinned = _PIP_PINNED.match(requirement)
            if pinned:
                return pinned.group(1)
        return ""


def load_agent(path: str | Path) -> AgentSpec:
    """Read and check an agent file; AgentFileError names the file and the field."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise AgentFileError(f"{path}: agent file not found") from None
    try:
        spec = msgspec.toml.decode(raw, type=AgentSpec)
    except msgspec.ValidationError as exc:
        try:
            data = msgspec.toml.decode(raw)
        except msgspec.DecodeError:
            data = None
        raise AgentFileError(f"{path}: {strict_message(exc, AgentSpec, data)}") from None
    except msgspec.DecodeError as exc:
        raise AgentFileError(f"{path}: not valid TOML ({exc})") from None
    if spec.file_sha256:
        raise AgentFileError(f"{path}: field `file_sha256` is computed by endstate: remove it")
    if not _NAME.match(spec.name):
        raise AgentFileError(f"{path}: field `name` {spec.name!r} must be lowercase letters, digits, '.', '_' or '-'")
    if spec.name == DEFAULT_AGENT:
        raise AgentFileError(f"{path}: field `name` {DEFAULT_AGENT!r} is endstate's own loop: choose another name")
    if not (spec.install.requirements or spec.install.npm):
        raise AgentFileError(f"{path}: field `install.requirements` is empty, and so is `install.npm`: name the agent's package")
    for number, package in enumerate(spec.install.npm):
        if not (_NPM_PINNED.match(package) or package.endswith(".tgz")):
            raise AgentFileError(f"{path}: field `install.npm[{number}]` {package!r} must be pinned as NAME@VERSION (e.g. pkg@1.2.3) or be a package tarball (.tgz)")
    if bool(spec.run.module) == bool(spec.run.program):
        raise AgentFileError(f"{path}: field `run.module` or `run.program`: give exactly one of them")
    for number, rule in enumerate(spec.normalise):
        try:
            re.compile(rule.pattern)
        except re.error as exc:
            raise AgentFileError(f"{path}: field `normalise[{number}].pattern` is not a regular expression ({exc})") from None
    if spec.finish.status_file and not (spec.finish.status_key and spec.finish.done):
        raise AgentFileError(f"{path}: field `finish.status_file` needs `status_key` and `done`")
    return msgspec.structs.replace(spec, file_sha256=hashlib.sha256(raw).hexdigest())


def shipped_agents() -> dict[str, Path]:
    """Agent files that come with endstate, by name (the file's stem)."""
    folder = resources.files("endstate.agents") / "files"
    return {Path(entry.name).stem: Path(str(entry)) for entry in folder.iterdir() if entry.name.endswith(".toml")}


def find_agent(name: str) -> AgentSpec | None:
    """The agent `--agent NAME` means: None for endstate's own loop, a shipped agent by
    name, or an agent file by path. AgentFileError for anything else, listing the names."""
    if name in ("", DEFAULT_AGENT):
        return None
    shipped = shipped_agents()
    if name in shipped:
        return load_agent(shipped[name])
    if name.endswith(".toml") or "/" in name:
        return load_agent(name)
    known = ", ".join([DEFAULT_AGENT, *sorted(shipped)])
    raise AgentFileError(f"unknown agent {name!r}: use one of {known}, or the path of an agent file (.toml)")
