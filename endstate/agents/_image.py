"""The per-agent image layer: a task's image with one agent installed in a prefix of its own.

Wheels are resolved and downloaded on the host (`pip download`, binary wheels for the
sandbox's Python and this machine's architecture) into a wheelhouse cached by the hash
of what was asked. The layer is then built with the network off: a first stage
installs from the wheelhouse alone (`pip install --no-index --find-links`, pip run from
its own wheel, since the sandbox image has none) into a folder, and the image the agent
runs in copies only that folder onto the task's image, so the wheels take no room there.

The agent's packages live in /opt/endstate/agents/<name>/lib and are put on the path of
the agent's process only (by a small launcher), never on the system's: the project under
test and the isolated pytest in /opt/endstate/pytest see nothing of them. The task's
image is never changed or retagged; the layer is `endstate-agent-<name>:<hash>`,
labelled with the full hash, and rebuilt only when the hash changes.

A program agent (npm packages) is prepared the same way: `npm install` on the host into a
cached folder (install scripts off), the Debian packages it asks for (Node) fetched with
`apt-get download`, with those of their dependencies the task's image lacks; the layer
installs the .debs with dpkg and copies the node_modules into /opt/endstate/agents/<name>/npm.
"""

from __future__ import annotations

import hashlib
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

from endstate.agents._spec import AgentSpec
from endstate.errors import SandboxUnavailable
from endstate.sandbox import build_context, docker_cli, image_id, image_label, image_python

__all__ = ["agent_image", "agent_home", "wheelhouse", "npm_folder", "deb_folder", "LAYER_LABEL", "CACHE_ROOT"]

LAYER_LABEL = "endstate.agent-layer-sha256"
CACHE_ROOT = Path.home() / ".cache" / "endstate" / "wheelhouses"
_BUILDS = threading.Lock()

_LAUNCHER = """\
# Runs MODULE ARGS with the agent's own packages first on this process's path only.
import runpy
import sys

sys.path.insert(0, {lib!r})
del sys.argv[0]
runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
"""

_DOCKERFILE = """\
FROM {base} AS install
COPY wheels /tmp/endstate-wheels
RUN python3 /tmp/endstate-wheels/{pip} install --no-index --find-links /tmp/endstate-wheels \\
      --disable-pip-version-check --no-cache-dir --target {lib} {requirements}
FROM {base}
COPY --from=install {lib} {lib}
COPY launcher.py {home}/run.py
"""

_PROGRAM_DOCKERFILE = """\
FROM {base}
COPY debs /tmp/endstate-debs
RUN if ls /tmp/endstate-debs/*.deb >/dev/null 2>&1; then dpkg -i /tmp/endstate-debs/*.deb; fi \\
    && rm -rf /tmp/endstate-debs
COPY npm {home}/npm
{build}"""


def agent_home(spec: AgentSpec) -> str:
    """Where the agent's prefix lives in its image."""
    return f"/opt/endstate/agents/{spec.name}"


def _quiet(_line: str) -> None:
    pass


def wheelhouse(spec: AgentSpec, python: str, *, log: Callable[[str], None] = _quiet) -> Path:
    """A folder of wheels from which the agent installs offline; downloaded once per
    (requirements, Python, architecture). SandboxUnavailable when pip cannot resolve them."""
    machine = platform.machine()
    key = hashlib.sha256("\n".join([*_keyed(spec), python, machine]).encode()).hexdigest()[:16]
    tag = python.replace(".", "")

    def download(partial: Path) -> None:
        argv = [sys.executable, "-m", "pip", "download", "--disable-pip-version-check", "--quiet",
                "--only-binary=:all:", "--python-version", python, "--implementation", "cp", "--abi", f"cp{tag}",
                "--abi", "abi3", "--abi", "none",
                *[f"--platform={p}_{machine}" for p in ("manylinux_2_28", "manylinux_2_17", "manylinux2014", "linux")],
                "--platform=any", "-d", str(partial), "pip", *spec.install.requirements]
        log(f"downloading wheels for {spec.name} (Python {python}, {machine})")
        done = subprocess.run(argv, capture_output=True, text=True)
        if done.returncode != 0:
            raise SandboxUnavailable(f"agent {spec.name}: pip could not download its wheels: "
                                     f"{(done.stderr or done.stdout).strip()[-800:]}")

    return _cached(key, download)  # its listing (the wheels' names) keys the layer


def _wheel_hash(requirement: str) -> str:
    """A wheel (or an npm tarball) given by path is keyed by its bytes, not its name."""
    try:
        return hashlib.sha256(Path(requirement).expanduser().read_bytes()).hexdigest()
    except OSError as exc:
        raise SandboxUnavailable(f"cannot read the agent's package {requirement}: {exc.strerror or exc}") from None


def _keyed(spec: AgentSpec) -> list[str]:
    """The requirements as the caches key them: a wheel by its name and bytes, wherever it lies,
    so the same wheel from another folder reuses the wheelhouse and the layer."""
    return [f"{Path(r).name}@{_wheel_hash(r)}" if r.endswith(".whl") else r for r in spec.install.requirements]


def _in_build(requirement: str) -> str:
    """How the offline install names a requirement: a wheel by its place in the wheelhouse."""
    if requirement.endswith(".whl"):
        return f"/tmp/endstate-wheels/{Path(requirement).name}"
    return requirement


def _layer_digest(spec: AgentSpec, base_id: str, wheels: Path, context_files: dict[str, str]) -> str:
    digest = hashlib.sha256()
    digest.update(f"{spec.name}\n{base_id}\n{' '.join(_keyed(spec))}\n".encode())
    digest.update((wheels / ".complete").read_bytes())
    for name in sorted(context_files):
        digest.update(f"{name}\n{context_files[name]}\n".encode())
    return digest.hexdigest()


def _cached(key: str, fill: Callable[[Path], None]) -> Path:
    """A cache folder filled once by `fill` (into a partial folder, renamed when complete)."""
    folder = CACHE_ROOT / key
    if (folder / ".complete").is_file():
        return folder
    partial = CACHE_ROOT / f".{key}.partial"
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    fill(partial)
    listing = sorted(str(p.relative_to(partial)) for p in partial.rglob("*") if p.is_file())
    (partial / ".complete").write_text("\n".join(listing) + "\n")
    shutil.rmtree(folder, ignore_errors=True)
    partial.rename(folder)
    return folder


def _host(argv: list[str], what: str, cwd: Path | None = None) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, cwd=cwd)
    except FileNotFoundError:
        raise SandboxUnavailable(f"{what}: `{argv[0]}` is not installed on this machine") from None
    if done.returncode != 0:
        raise SandboxUnavailable(f"{what}: {(done.stderr or done.stdout).strip()[-800:]}")
    return done.stdout


def npm_folder(spec: AgentSpec, *, log: Callable[[str], None] = _quiet) -> Path:
    """The agent's npm packages installed on the host (no install scripts), once per package list."""
    key = "npm-" + hashlib.sha256("\n".join(_npm_keyed(spec)).encode()).hexdigest()[:16]

    def fill(folder: Path) -> None:
        log(f"installing npm packages for {spec.name}: {' '.join(spec.install.npm)}")
        _host(["npm", "install", "--prefix", str(folder), "--no-save", "--ignore-scripts", "--no-audit",
               "--no-fund", "--omit=dev", "--loglevel=error",
               *[str(Path(p).expanduser().resolve()) if p.endswith(".tgz") else p for p in spec.install.npm]],
              f"agent {spec.name}: npm install failed")

    return _cached(key, fill)


def _npm_keyed(spec: AgentSpec) -> list[str]:
    """The npm packages as the cache keys them: a tarball by its name and bytes, wherever it lies."""
    return [f"{Path(p).name}@{_wheel_hash(p)}" if p.endswith(".tgz") else p for p in spec.install.npm]


def _image_packages(base: str) -> set[str]:
    what = f"cannot list the packages of {base}"
    done = docker_cli("run", "--rm", "--network", "none", "--entrypoint", "dpkg-query", base, "-W", "-f",
                      "${Package}\n", why=what)
    if done.returncode != 0:
        raise SandboxUnavailable(f"{what}: {(done.stderr or done.stdout).decode(errors='replace').strip()[-800:]}")
    return set(done.stdout.decode().split())


def deb_folder(spec: AgentSpec, base: str, base_id: str, *, log: Callable[[str], None] = _quiet) -> Path:
    """The Debian packages the agent asks for, with the dependencies `base` lacks, as .deb files."""
    key = "debs-" + hashlib.sha256("\n".join([*spec.install.debian, base_id]).encode()).hexdigest()[:16]

    def fill(folder: Path) -> None:
        if not spec.install.debian:
            return
        wanted = _debian_closure(spec, _image_packages(base))
        log(f"downloading Debian packages for {spec.name}: {' '.join(wanted)}")
        _host(["apt-get", "download", "-q", *wanted],
              f"agent {spec.name}: apt-get download failed", cwd=folder)

    return _cached(key, fill)


def _debian_closure(spec: AgentSpec, installed: set[str]) -> list[str]:
    """NAME=VERSION for the packages asked for and every dependency the image lacks, each at
    Debian's own version (the first of a dependency's alternatives; virtual ones are skipped)."""
    wanted: dict[str, str] = {}
    queue = list(spec.install.debian)
    while queue:
        name = queue.pop(0)
        if name in wanted or name in installed:
            continue
        wanted[name] = _debian_pick(name)
        listing = _host(["apt-cache", "depends", "--no-recommends", "--no-suggests", "--no-conflicts", "--no-breaks",
                         "--no-replaces", "--no-enhances", wanted[name]], f"agent {spec.name}: apt-cache cannot resolve {name}")
        alternative = False
        for line in listing.splitlines()[1:]:
            entry = line.strip()
            first = not alternative
            alternative = entry.startswith("|")
            if first and ("Depends:" in entry) and "<" not in entry:
                queue.append(entry.split(":", 1)[1].strip())
    return sorted(wanted.values())


def _debian_pick(name: str) -> str:
    """`name` at the version of Debian's own archive (a third-party repository, such as
    NodeSource's on a developer's machine, must not decide what the sandbox gets)."""
    policy = _host(["apt-cache", "madison", name], f"apt-cache has no package {name}")
    for line in policy.splitlines():
        parts = [part.strip() for part in line.split("|")]
        if len(parts) == 3 and "debian.org" in parts[2]:
            return f"{name}={parts[1]}"
    return name


def _program_image(spec: AgentSpec, base: str, base_id: str, say: Callable[[str], None],
                   log: Callable[[str], None]) -> str:
    modules = npm_folder(spec, log=say)
    debs = deb_folder(spec, base, base_id, log=say)
    build = "".join(f"RUN cd {agent_home(spec)}/npm && {command}\n" for command in spec.install.build)
    dockerfile = _PROGRAM_DOCKERFILE.format(base=base, home=agent_home(spec), build=build)
    digest = hashlib.sha256()
    digest.update(f"{spec.name}\n{base_id}\n{dockerfile}\n".encode())
    digest.update((modules / ".complete").read_bytes())
    digest.update((debs / ".complete").read_bytes())
    tarballs = [key for key in _npm_keyed(spec) if key.partition("@")[0].endswith(".tgz")]
    if tarballs:  # the listing names a tarball's files, not their bytes
        digest.update("\n".join(tarballs).encode())
    tag = f"endstate-agent-{spec.name}:{digest.hexdigest()[:12]}"
    if image_label(tag, LAYER_LABEL) == digest.hexdigest():
        return tag
    with tempfile.TemporaryDirectory(prefix="endstate-agent-") as context:
        root = Path(context)
        (root / "Dockerfile").write_text(dockerfile)
        shutil.copytree(debs, root / "debs", copy_function=_link_or_copy)
        shutil.copytree(modules, root / "npm", copy_function=_link_or_copy, symlinks=True)
        say(f"building {tag} (agent {spec.name} on {base}, network off): {FIRST_BUILD}")
        build_context(root, tag, labels={LAYER_LABEL: digest.hexdigest()}, log=log)
    return tag


#: What a user is told before the first build of an agent's layer, which runs silent for minutes.
FIRST_BUILD = "built once and reused by later runs; this first build takes several minutes"


def agent_image(spec: AgentSpec, base: str, *, log: Callable[[str], None] = _quiet,
                steps: Callable[[str], None] = _quiet) -> str:
    """The tag of `base` with `spec`'s agent installed, built offline unless it exists already.
    `log` gets every line (the engine's build output too), `steps` only what is being done."""
    def say(line: str) -> None:
        steps(line)
        log(line)

    with _BUILDS:
        if spec.run.program:
            return _program_image(spec, base, image_id(base, hint="run `endstate image build` first"), say, log)
        base_id = image_id(base, hint="run `endstate image build` first")
        wheels = wheelhouse(spec, image_python(base), log=say)
        pips = sorted(p.name for p in wheels.glob("pip-*.whl"))
        if not pips:
            raise SandboxUnavailable(f"agent {spec.name}: the wheelhouse {wheels} holds no pip wheel")
        home = agent_home(spec)
        files = {
            "launcher.py": _LAUNCHER.format(lib=f"{home}/lib"),
            "Dockerfile": _DOCKERFILE.format(base=base, pip=f"{pips[-1]}/pip", lib=f"{home}/lib", home=home,
                                             requirements=" ".join(shlex.quote(_in_build(r)) for r in spec.install.requirements)),
        }
        digest = _layer_digest(spec, base_id, wheels, files)
        tag = f"endstate-agent-{spec.name}:{digest[:12]}"
        if image_label(tag, LAYER_LABEL) == digest:
            return tag
        with tempfile.TemporaryDirectory(prefix="endstate-agent-") as context:
            root = Path(context)
            for name, text in files.items():
                (root / name).write_text(text)
            shutil.copytree(wheels, root / "wheels", copy_function=_link_or_copy)
            say(f"building {tag} (agent {spec.name} on {base}, network off): {FIRST_BUILD}")
            build_context(root, tag, labels={LAYER_LABEL: digest}, log=log)
        return tag


def _link_or_copy(source: str, target: str) -> None:
    try:
        Path(target).hardlink_to(source)
    except OSError:
        shutil.copy2(source, target)
