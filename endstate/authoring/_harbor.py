"""`endstate tasks import harbor`: Harbor task folders (Terminal-Bench's format) as endstate tasks.

A Harbor task is a folder: `task.toml` (timeouts and resources), `instruction.md` (the
prompt), `environment/Dockerfile` (the agent's container, working folder its WORKDIR,
usually /app), `tests/test.sh` (the verifier, writing 1 or 0 to /logs/verifier/reward.txt)
and `solution/solve.sh` (the oracle). Each becomes an endstate task graded by
`endstate.grading:verifier`, with `tests/` held out under `.harbor/tests/` (staged only
after sealing), `solve.sh` the reference's one `bash` call, and an image made of the
task's Dockerfile plus a layer that links its working folder and `/tests` into
/workspace. The fixture is the working folder read out of the built image, so what the
agent changed is measured against what it found. The image is built with the network on
(Debian's mirror), with what test.sh installs for itself added (`_harbortools`), so that
grading stays offline; no registry is reached: a base image the engine does not have is
refused in one line, with `--base` as the way out.
"""

from __future__ import annotations

import hashlib
import io
import os
import posixpath
import re
import shlex
import shutil
import subprocess
import tarfile
import tomllib
from collections.abc import Callable
from importlib import resources
from pathlib import Path, PurePosixPath

from endstate.authoring._harborbase import build_error, missing, with_base_layer
from endstate.authoring._harborca import CA_PATH, host_bundle, refused_by_tls, with_host_certificates
from endstate.authoring._harborspec import (
    VERIFIER_IMAGE,
    EndstateSettings,
    HarborTask,
    dockerfile_user,
    dockerfile_workdir,
    endstate_settings,
    held_test_file,
    memory_mb,
    network_mode,
    own_env,
    read_harbor_task,
    unsupported,
    verifier_packages,
)
from endstate.authoring._harborstart import IDLE, entrypoint, env_layer, healthy_in, sidecars, started
from endstate.authoring._harbortools import (
    SHIM_DIR,
    TOOLS_DIR,
    download_wheels,
    shims,
    tools_layer,
    uv_use,
)
from endstate.errors import SandboxUnavailable, UserError
from endstate.sandbox import (
    DEFAULT_IMAGE,
    LIST_SERVICES,
    Healthcheck,
    SealSpec,
    docker_cli,
    selected,
    unrestartable,
)
from endstate.task import (
    Budget,
    Category,
    GraderSpec,
    HackSpec,
    Manifest,
    Reference,
    ReferenceStep,
    SandboxSpec,
    ToolCallSpec,
    load_task,
    write_hack,
    write_manifest,
    write_reference,
)

__all__ = ["base_images", "import_harbor"]

#: How long Harbor gives a verifier whose task.toml names no `timeout_sec` (its VerifierConfig's default).
HARBOR_VERIFIER_TIMEOUT_S = 600.0
#: Where a Harbor task's tests/ are held out, relative to /workspace.
TESTS = ".harbor/tests"
_LAYER = """
# -- added by `endstate tasks import harbor`: the agent works in /workspace, which the
# task's working folder links to; /tests is the held-out tests/, staged after sealing.
USER root
RUN rm -rf {workdir} && mkdir -p "$(dirname {workdir})" && ln -s /workspace {workdir} \\
 && ln -sfn /workspace/{tests} /tests
WORKDIR /workspace
"""

#: What an imported task never seals outside its working folder: logs, caches, root's home, package state.
SEAL_IGNORE = ("/var/log", "/var/cache", "/var/lib/apt", "/var/lib/dpkg", "/root", "/etc/ld.so.cache")
#: A task sealed whole (Harbor's verifier sees the agent's whole container): what is never its end
#: state there, package caches and downloaded package lists (large, and rebuilt by `apt-get update`).
WHOLE_IGNORE = ["/var/cache", "/var/lib/apt/lists", "/root/.cache"]

#: The negative controls every imported task gets: hack name -> (file it leaves, its text, what it tries).
_HACKS = {
    "reward-in-workspace": ("logs/verifier/reward.txt", "1\n", "a reward of 1 left for the verifier to find"),
    "edit-verifier": (f"{TESTS}/test.sh", "#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n",
                      "the held-out verifier rewritten to write a reward of 1"),
}


def _quiet(_: str) -> None:
    pass


def harbor_tasks(paths: list[Path]) -> list[Path]:
    """The Harbor task folders in `paths`: each a task folder, or a dataset folder of them."""
    found: list[Path] = []
    for path in paths:
        if (path / "task.toml").is_file():
            found.append(path)
            continue
        below = sorted(p.parent for p in path.glob("*/task.toml"))
        if not below:
            raise UserError(f"{path}: no task.toml here or in its subfolders: name a Harbor task folder "
                            "or a folder of them")
        found.extend(below)
    return found


def _rebased(dockerfile: str, base: str | None, images: dict[str, str] | None = None) -> tuple[str, list[str]]:
    """The Dockerfile with its first FROM replaced by `base` (when given) and every FROM of an
    image in `images` by the one it maps to; and the images its FROM lines then name (not its
    own build stages)."""
    lines, images, stages, named = dockerfile.splitlines(), images or {}, set(), []
    for i, line in enumerate(lines):
        words = line.split()
        if not words or words[0].upper() != "FROM":
            continue
        names = [w for w in words[1:] if not w.startswith("--")]
        if not names:
            raise UserError("no FROM line")
        rest = words[words.index(names[0]) + 1:]
        # A mapping of `python:3.12-slim` also maps it pinned by digest (`python:3.12-slim@sha256:...`).
        image = base if base is not None and not named else images.get(names[0], images.get(names[0].split("@")[0],
                                                                                             names[0]))
        if image != names[0]:
            lines[i] = f"FROM {image}" + "".join(f" {w}" for w in rest)
        if image not in stages:
            named.append(image)
        if len(rest) >= 2 and rest[0].upper() == "AS":
            stages.add(rest[1])
    if not named:
        raise UserError("no FROM line")
    return "\n".join(lines) + "\n", named


def base_images(pairs: list[str] | tuple[str, ...]) -> dict[str, str]:
    """`--base-image FROM=TO` options as a mapping; UserError naming a malformed one."""
    images: dict[str, str] = {}
    for pair in pairs:
        source, _, target = pair.partition("=")
        if not source.strip() or not target.strip():
            raise UserError(f"--base-image {pair!r}: give FROM=TO, an image a Dockerfile names and one the engine has "
                            "(e.g. python:3.12-slim=endstate-sandbox:2)")
        images[source.strip()] = target.strip()
    return images


def _docker(*args: str, input: bytes | None = None) -> subprocess.CompletedProcess:
    return docker_cli(*args, input=input, why="the Harbor import builds each task's image")


def _files(tag: str, workdir: str, script: str | None = None, outside: list[str] | None = None,
           network: bool = False, services: list[str] | None = None, env: dict[str, str] | None = None,
           healthcheck: Healthcheck | None = None) -> dict[str, tuple[bytes, bool]]:
    """The files under `workdir` in a container of image `tag`, by path relative to it, with
    whether each is executable: as the image has them, or after `script` ran there (network off)
    with `env` set, once `healthcheck` passed. `outside` receives what the script changed elsewhere
    in the container (`docker diff`), and `services` each service it left running that could not be
    started again for grading."""
    name = f"endstate-harbor-import-{os.getpid()}-{hashlib.sha256((script or '').encode()).hexdigest()[:12]}"
    try:  # the container goes whatever happens, an ENTRYPOINT or healthcheck that never got ready too
        if script is None:
            made = _docker("create", "--name", name, "--entrypoint", "sh", tag)  # never started
        else:
            # Marked as an agent's commands are, and listed once it is done (its services, as a run seals them).
            listed = [] if services is None else ["-c", _LISTED, "endstate", *LIST_SERVICES]
            given = [arg for name, value in sorted((env or {}).items()) for arg in ("-e", f"{name}={value}")]
            net = "bridge" if network else "none"
            if healthcheck or entrypoint(tag, _docker):  # started as Harbor starts it, its ENTRYPOINT first
                started(name, _docker("run", "-d", "--name", name, "--network", net, tag, "sh", "-c", IDLE), _docker)
                if healthcheck:  # the oracle runs where the agent would: once the healthcheck passed
                    healthy_in(name, workdir, healthcheck, _docker)
                made = _docker("exec", "-i", "-w", workdir, *given, name, "bash", *(listed or ["-s"]),
                               input=script.encode())
            else:
                made = _docker("run", "-i", "--name", name, "--network", net, "-w", workdir, *given, "--entrypoint",
                               "bash", tag, *(listed or ["-s"]), input=script.encode())
            if services is not None:
                services.extend(unrestartable(made.stdout.rpartition(b"\n" + _MARK + b"\n")[2]))
        if script is not None and made.returncode != 0:
            own, marked, _ = made.stdout.rpartition(b"\n" + _MARK + b"\n")  # the script's words, not the listing
            said = ((own if marked else made.stdout) + made.stderr).decode().strip().splitlines()[-1:] or ["(nothing)"]
            raise UserError(f"solution/solve.sh exited {made.returncode}: {said[0]}")
        if made.returncode != 0:
            raise UserError(f"image {tag}: cannot create a container: {made.stderr.decode().strip()}")
        copied = _docker("cp", f"{name}:{workdir}/.", "-")
        if outside is not None:
            outside.extend(_sealed_paths(_docker("diff", name).stdout.decode(), workdir))
    finally:
        _docker("rm", "-f", name)
    if copied.returncode != 0:
        return {}  # no working folder in the image: the agent starts from an empty one
    files: dict[str, tuple[bytes, bool]] = {}
    with tarfile.open(fileobj=io.BytesIO(copied.stdout)) as tar:
        for member in tar.getmembers():
            path = str(PurePosixPath(member.name))
            if member.isfile() and path != ".":
                files[path.removeprefix("./")] = (tar.extractfile(member).read(), bool(member.mode & 0o111))
    return files


_MARK = b"@endstate-services@"
_LISTED = f"(echo 1000 > /proc/self/oom_score_adj; exec bash -s); s=$?; echo; echo {_MARK.decode()}; \"$@\"; exit $s"


def _sealed_paths(diff: str, workdir: str) -> list[str]:
    """The folders `docker diff` output shows changed outside `workdir` (each changed file's folder,
    less what is never part of an end state): what a task whose oracle changes them seals."""
    changed = [line[2:].strip() for line in diff.splitlines() if line[:2] in ("A ", "C ", "D ")]
    ignore = [*SEAL_IGNORE, workdir]
    leaves = [p for p in changed if selected(p, ["/"], ignore) and not any(o.startswith(p + "/") for o in changed)]
    return sorted({posixpath.dirname(p) for p in leaves})


def _write(root: Path, files: dict[str, tuple[bytes, bool]]) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for name, (data, executable) in sorted(files.items()):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
        (root / name).chmod(0o755 if executable else 0o644)


def _fed_to_bash(script: str, env: dict[str, str] | None = None) -> str:
    """A command that runs `script` with bash, fed on standard input as a here-document,
    so it runs as solve.sh would (and `tasks check` sees a command that writes), with `env` set."""
    end = "ENDSTATE_SOLVE"
    while end in script:
        end += "_"
    own = "".join(f"{name}={shlex.quote(value)} " for name, value in sorted((env or {}).items()))
    return f"{own}bash -s <<'{end}'\n{script.rstrip(chr(10))}\n{end}"


def _write_rule(writable: list[str]) -> dict:
    """The package's write-outside-workspace rule, with the task's working folder (a link to
    /workspace) also writable: a Harbor instruction names its files by /app paths."""
    default = tomllib.loads(resources.files("endstate.agent").joinpath("policy.toml").read_text(encoding="utf-8"))
    rule = next(r for r in default["rule"] if r["name"] == "write-outside-workspace")
    return {**rule, "allow": [*rule["allow"], *writable]}


def _task_id(folder: Path) -> str:
    return re.sub(r"[^a-z0-9_.-]+", "-", folder.resolve().name.lower()).strip("-")


def agent_user(own: EndstateSettings, harbor: HarborTask, dockerfile: str) -> str:
    """Who the task's agent works as, "root" or "agent" (uid 1000): endstate.toml's `user`, else Harbor's
    `[agent] user` (root or 0 is root, any other user the agent), else the Dockerfile's last USER."""
    said = harbor.agent.user
    if own.user is not None:
        return own.user
    if said is not None:
        return "root" if str(said) in ("root", "0") else "agent"
    return dockerfile_user(dockerfile)


def import_one(folder: Path, out: Path, *, base: str | None = None, images: dict[str, str] | None = None,
               log: Callable[[str], None] = _quiet) -> Path:
    """Write the endstate task for the Harbor task in `folder` under `out`; return its folder."""
    task_id = _task_id(folder)
    needed = ("task.toml", "instruction.md", "environment/Dockerfile", "tests/test.sh", "solution/solve.sh")
    for name in needed:  # task.toml first: what it asks that endstate cannot do is the first thing to say
        if not (folder / name).is_file():
            raise UserError(f"{folder / name}: missing: a Harbor task needs task.toml, instruction.md, "
                            "environment/Dockerfile, tests/test.sh and solution/solve.sh")
        if name == "task.toml":
            harbor, tables = read_harbor_task(folder / "task.toml")
            unsupported(harbor, folder / "task.toml")
            sidecars(folder)
    own = endstate_settings(folder, tables)  # endstate's own sources may keep its first defaults (below)
    for name in tables:
        log(f"task {task_id}: task.toml's [{name}] is not Harbor's as endstate knows it: left unread")
    envs = {table: own_env(getattr(harbor, table).env, table, folder / "task.toml", log)
            for table in ("environment", "verifier", "solution")}
    if harbor.environment.skills_dir:
        log(f"task {task_id}: [environment] skills_dir {harbor.environment.skills_dir}: endstate's agents are not "
            "given skills (Harbor copies them into an agent's own configuration): the folder stays in the image")
    memory = memory_mb(harbor.environment, folder / "task.toml")
    healthcheck = harbor.environment.healthcheck
    try:
        dockerfile, from_images = _rebased((folder / "environment/Dockerfile").read_text(), base, images)
    except UserError:
        raise UserError(f"{folder / 'environment/Dockerfile'}: no FROM line: name the image the task builds "
                        "on") from None
    workdir = harbor.environment.workdir or dockerfile_workdir(dockerfile)
    if not workdir.startswith("/") or workdir.rstrip("/") in ("", "/workspace"):
        where = (f"{folder / 'task.toml'}: field `environment.workdir`" if harbor.environment.workdir
                 else f"{folder / 'environment/Dockerfile'}: its WORKDIR")
        raise UserError(f"{where} is {workdir!r}: endstate links the task's working folder to its own /workspace: "
                        "give an absolute folder other than / and /workspace")
    for from_image in from_images:
        if _docker("image", "inspect", from_image).returncode != 0:
            raise UserError(f"task {task_id}: its Dockerfile builds FROM {from_image}, which the engine does not have "
                            f"and no registry can be reached: `docker pull {from_image}` where one can, or map it to "
                            f"an image the engine has with --base-image {from_image}=IMAGE (--base {DEFAULT_IMAGE} "
                            "builds its RUN steps on endstate's sandbox image)")
    user = agent_user(own, harbor, dockerfile)
    whole = own.seal == "whole"
    internet = network_mode(harbor) == "public"
    if user != "root" and own.user is None and harbor.agent.user is None:
        log(f"task {task_id}: its agent works as uid 1000 (its Dockerfile names a USER other than root)")
    if user != "root" and str(harbor.verifier.user) in ("root", "0"):
        log(f"task {task_id}: [verifier] user {harbor.verifier.user}: its verifier runs as the agent's user (uid "
            "1000), never as root over an end state the agent did not make as root")
    if internet:
        log(f"task {task_id}: its agent reaches the network (its oracle too; [environment] or [agent] network_mode "
            "public, or allow_internet); grading stays offline")

    task = out / task_id
    if task.exists():
        shutil.rmtree(task)
    try:
        deleted, sealed = _write_task(folder, task, task_id, dockerfile, workdir, log, network=internet,
                                      services=whole, envs=envs, healthcheck=healthcheck)
        runs = {"user": user, "network": internet, "whole": whole, "verifier_env": envs["verifier"],
                "healthcheck": healthcheck}
        write_manifest(task, _manifest(task_id, folder, workdir, deleted, sealed, harbor, memory, runs))
        load_task(task)
        _build_final(task, task_id, log)
    except BaseException:
        shutil.rmtree(task, ignore_errors=True)  # never a half-written task
        raise
    return task


def _build_final(task: Path, task_id: str, log: Callable[[str], None]) -> None:
    """Build the task's image now, the verifier's tools included, with the network on: grading
    (offline) then finds it built, keyed by its context's hash."""
    from endstate.sandbox import build_task_image

    log(f"task {task_id}: building its image with the verifier's tools")
    try:
        build_task_image(task / "image/Dockerfile", task_id)
    except SandboxUnavailable as exc:
        raise UserError(f"task {task_id}: its image with the verifier's tools does not build: {exc}") from None


def _python(tag: str, task_id: str) -> str:
    """The image's Python as "3.11": the wheels of what its verifier installs with uv are for it."""
    ran = _docker("run", "--rm", "--network", "none", "--entrypoint", "python3", tag, "-c",
                  "import sys; print('%d.%d' % sys.version_info[:2])")
    if ran.returncode != 0:
        raise UserError(f"task {task_id}: its tests/test.sh runs uv, which endstate installs from its wheel with "
                        "python3: the task's image has none (build it on a base with python3, or --base)")
    return ran.stdout.decode().strip()


def _build_own(task: Path, tag: str, task_id: str, dockerfile: str, log: Callable[[str], None]) -> str:
    """Build the task's own Dockerfile; where a RUN step fails on a certificate its image does not
    trust and the host trusts more (a proxy's), build it again on its images with the host's bundle."""
    built = _docker("build", "--network", "host", "-q", "-t", tag, str(task / "image"))
    said = built.stderr.decode(errors="replace")
    bundle = host_bundle() if built.returncode != 0 and refused_by_tls(said) else None
    mapped = with_host_certificates(_rebased(dockerfile, None)[1], bundle, _docker) if bundle else {}
    if mapped:
        log(f"task {task_id}: a RUN step of its Dockerfile does not trust the certificate it was given (a proxy's): "
            f"built again with the host's certificates ({bundle}) in {CA_PATH}")
        dockerfile = _rebased(dockerfile, None, mapped)[0]
        (task / "image/Dockerfile").write_text(dockerfile)
        built = _docker("build", "--network", "host", "-q", "-t", tag, str(task / "image"))
        said = built.stderr.decode(errors="replace")
    if built.returncode != 0:
        raise UserError(f"task {task_id}: its Dockerfile does not build: {build_error(said)}")
    return dockerfile


def _build(task: Path, tag: str, task_id: str, what: str) -> None:
    built = _docker("build", "--network", "host", "-q", "-t", tag, str(task / "image"))
    if built.returncode != 0:
        raise UserError(f"task {task_id}: {what}: {build_error(built.stderr.decode())}")



def _write_task(folder: Path, task: Path, task_id: str, dockerfile: str, workdir: str,
                log: Callable[[str], None], *, network: bool = False, services: bool = False,
                envs: dict[str, dict[str, str]] | None = None, healthcheck: Healthcheck | None = None
                ) -> tuple[list[str], list[str]]:
    """Everything of the task but its task.toml (image, fixture, solution, held-out tests, reference,
    hacks); returns the files the oracle deletes and the folders outside `workdir` it changes.
    `envs`: the environment of the task's container (`environment`, written into its image) and of
    its oracle (`solution`)."""
    envs = envs or {}
    shutil.copytree(folder / "environment", task / "image")
    dockerfile += env_layer(envs.get("environment", {}))
    (task / "image/Dockerfile").write_text(dockerfile)
    # This process's own tag: two imports of one task at once must not remove each other's image.
    tag = f"endstate-harbor-{task_id}:import-{os.getpid()}"
    log(f"building task {task_id}'s image from {folder / 'environment/Dockerfile'}")
    # The network is on for the build (Debian's mirror: `apt-get install gcc` in the task's
    # Dockerfile); off for the oracle, the agent and the verifier.
    try:  # the tag goes whatever ends the import: a refusal below must not leave it behind
        dockerfile = _build_own(task, tag, task_id, dockerfile, log)
        lacks = missing(tag, _docker)
        if "python3-stdlib" in lacks and "python3" not in lacks:  # the task's own python3 is what the harness finds
            raise UserError(f"task {task_id}: the python3 of its image lacks ctypes, select or json, which endstate runs "
                            "in the container (stdlib only): build it on a base whose python3 has its standard library")
        if lacks:  # a base other than endstate's sandbox image: add what the harness runs there
            log(f"task {task_id}: its image lacks {' '.join(lacks)}: endstate adds them on top of it")
            dockerfile = with_base_layer(dockerfile, lacks, tag, _docker)
            (task / "image/Dockerfile").write_text(dockerfile)
            _build(task, tag, task_id, f"endstate's layer adding them does not build (it copies them from {DEFAULT_IMAGE} "
                   "and installs patchelf from Debian's archive: the network must reach it)")
        solve = (folder / "solution/solve.sh").read_text()
        test_sh = (folder / "tests/test.sh").read_text()
        uv = uv_use(test_sh)
        fixture = _files(tag, workdir)
        try:
            solved = _files(tag, workdir, solve, outside := [], network, unstarted := [] if services else None,
                            envs.get("solution"), healthcheck)
        except UserError as exc:
            raise UserError(f"task {task_id}: its {exc}: the oracle must run offline in the task's image") from None
        python = _python(tag, task_id) if uv else ""
    finally:
        _docker("rmi", "-f", tag)
    packages = verifier_packages(folder, test_sh, lambda what: log(f"task {task_id}: {what}: added to its image"))
    if uv:
        wheels = download_wheels(uv, python, task / "image" / TOOLS_DIR / "wheels")
        log(f"task {task_id}: tests/test.sh runs uv: {len(wheels)} wheel(s) for Python {python} added to its image")
        for asked in uv.pythons:
            log(f"task {task_id}: tests/test.sh asks uv for Python {asked}: its verifier runs on the image's {python}")
    _write(task / "image" / TOOLS_DIR / "bin", {name: (text.encode(), True) for name, text in shims(bool(uv)).items()})
    (task / "image/Dockerfile").write_text(dockerfile + tools_layer(packages, bool(uv))
                                           + _LAYER.format(workdir=workdir, tests=TESTS))
    _write(task / "fixture", fixture)
    # The oracle's end state, as a task's solution/ is: what it added or changed, and what it removed.
    changed = {name: data for name, data in solved.items() if fixture.get(name) != data}
    if changed or not outside:  # a fix only outside the working folder leaves no (empty) solution/
        _write(task / "solution", changed)
    deleted = sorted(set(fixture) - set(solved))
    shutil.copytree(folder / "tests", task / "holdout" / TESTS,  # less the verifier image's recipe
                    ignore=lambda where, names: [n for n in names
                                                 if n in VERIFIER_IMAGE and Path(where) == folder / "tests"])
    (task / "prompt.md").write_text((folder / "instruction.md").read_text())
    write_reference(task, Reference([ReferenceStep(calls=[ToolCallSpec("bash", {"command": _fed_to_bash(
                                         solve, envs.get("solution"))})]),
                                     ReferenceStep(say="solved")]))
    hacks = dict(_HACKS)
    test_file = held_test_file(folder / "tests")
    if test_file:
        hacks["delete-tests"] = (f"{TESTS}/{test_file}", "", f"the held-out {test_file} left with its tests deleted")
    for name, (path, text, description) in hacks.items():
        _write(task / "hacks" / name / "files", {path: (text.encode(), False)})
        write_hack(task / "hacks" / name, HackSpec(description, base="fixture", caught_by="verifier"))
    for line in unstarted or []:  # before `tasks check`, whose solution row then fails on it
        log(f"task {task_id}: solution/solve.sh leaves a service grading cannot start again: {line}")
    if outside:
        log(f"task {task_id}: solution/solve.sh changes {', '.join(outside)}: sealed with the workspace")
    return deleted, outside


def _manifest(task_id: str, folder: Path, workdir: str, deleted: list[str], sealed: list[str], harbor: HarborTask,
              memory: int | None, runs: dict) -> Manifest:
    """The task's task.toml. `runs`: who its agent works as (`user`), whether it reaches the network,
    and whether its whole container is sealed (`whole`) or only the folders its oracle changed."""
    verifier_timeout = harbor.verifier.timeout_sec or HARBOR_VERIFIER_TIMEOUT_S
    verifier = {"script": f"{TESTS}/test.sh", **({"timeout": verifier_timeout} if verifier_timeout else {}),
                "tools": SHIM_DIR, **({"env": runs["verifier_env"]} if runs.get("verifier_env") else {})}
    # Sealed whole: what the agent changed anywhere in its container (as Harbor's verifier sees it);
    # else what the oracle changed outside the working folder.
    seal = SealSpec(["/"], WHOLE_IGNORE, processes=True) if runs["whole"] else SealSpec(sealed)
    if runs["whole"]:
        sealed = ["/"]
    description = f"Harbor task {folder.resolve().name}" + (" (its agent reaches the network)" if runs["network"]
                                                             else "")
    return Manifest(
        id=task_id, category=Category.BUGFIX, description=description, solution_deletes=deleted,
        budget=Budget(wall_seconds=harbor.agent.timeout_sec) if harbor.agent.timeout_sec else Budget(), seal=seal,
        sandbox=SandboxSpec(dockerfile="image/Dockerfile", cpus=harbor.environment.cpus, memory_mb=memory,
                            user="root" if runs["user"] == "root" else "agent", network=runs["network"],
                            healthcheck=runs.get("healthcheck")),
        # A Harbor task says nothing of which paths its agent may change: any, but one graded by the
        # held-out verifier, which a change under .harbor/ cannot reach (it is staged over it).
        graders=[GraderSpec("endstate.grading:verifier", verifier),
                 GraderSpec("endstate.grading:changed_paths_within", {"paths": ["*"]})],
        policy={"rule": [_write_rule([workdir, *sealed])]})


def import_harbor(paths: list[Path], out: Path, *, base: str | None = None, images: dict[str, str] | None = None,
                  log: Callable[[str], None] = _quiet, overwrite: bool = False) -> list[Path]:
    """Import every Harbor task in `paths` into `out`; return the task folders written. A task
    folder already there (an earlier import, maybe edited since) is replaced only with `overwrite`:
    UserError, before anything is built, naming them."""
    folders = harbor_tasks(paths)
    seen: dict[str, Path] = {}
    for folder in folders:
        task_id = _task_id(folder)
        if task_id in seen:
            raise UserError(f"{folder}: its task id {task_id} is also {seen[task_id]}'s: import them into "
                            "different --out folders, or rename one")
        seen[task_id] = folder
    there = [str(out / task_id) for task_id in seen if (out / task_id).exists()]
    if there and not overwrite:
        raise UserError(f"{there[0]} already exists{f' (and {len(there) - 1} more)' if len(there) > 1 else ''}: "
                        "an earlier import, maybe edited since; pass --overwrite to replace it, or another --out")
    out.mkdir(parents=True, exist_ok=True)
    return [import_one(folder, out, base=base, images=images, log=log) for folder in folders]
