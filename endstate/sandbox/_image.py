"""Building the sandbox image, also on machines that cannot reach a registry.

The image comes from `image/Dockerfile` beside this module. Its base image is
pulled when a registry answers; when none does, the base is made from Debian's
own packages (`debootstrap --variant=minbase`), imported and tagged with the
name the Dockerfile asks for, and the Dockerfile is then built unchanged (its
`apt-get` reaches Debian's mirrors over the host network).

A build is skipped when an image with the tag already carries the sha256 of the
current Dockerfile in its `endstate.dockerfile-sha256` label.

A task may bring its own image (`[sandbox] dockerfile = "image/Dockerfile"`):
`build_task_image` builds it the same way, offline seeding included, tagged
`endstate-task-<id>:<first 12 hex of the build context's sha256>` and labelled
with the full hash, so an unchanged context is never rebuilt. A task image `FROM
endstate-python:<X.Y>-<source>` (another Python than the sandbox's) has that image built
first (`endstate.sandbox._pythons`). A task folder's
image that installs the project's dependencies holds a pinned `requirements.txt`
beside its Dockerfile: the wheels it names join the build context from the host's
wheelhouse (`endstate.sandbox._wheels`), and the build runs with no network, unless
the folder also names Debian packages (`system-packages.txt`: programs the project's tests
run), which apt then fetches from Debian's signed mirrors over the host network.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Literal

import docker
import docker.errors

from endstate.errors import SandboxUnavailable
from endstate.sandbox._base import DEFAULT_IMAGE
from endstate.sandbox._engine import connect
from endstate.sandbox._pythons import PYTHON_IMAGE, PythonSource, base_of, source_of_tag, write_context
from endstate.sandbox._reaper import one_off_labels
from endstate.sandbox._wheels import SYSTEM_PACKAGES

__all__ = ["DEFAULT_IMAGE", "DOCKERFILE", "DOCKERFILE_LABEL", "CONTEXT_LABEL", "build_image", "build_python_image",
           "build_task_image", "build_wheel_in_image",
           "context_sha256", "dockerfile_sha256", "base_image", "image_id"]


DOCKERFILE = Path(__file__).parent / "image" / "Dockerfile"
DOCKERFILE_LABEL = "endstate.dockerfile-sha256"
CONTEXT_LABEL = "endstate.context-sha256"
DEBIAN_MIRROR = "http://deb.debian.org/debian"

# Threads checking or running tasks in parallel must not build one image twice at once.
_TASK_BUILDS = threading.Lock()

OfflineSeed = Literal["auto", "always", "never"]


def _quiet(_line: str) -> None:
    pass


def dockerfile_sha256(dockerfile: Path = DOCKERFILE) -> str:
    return hashlib.sha256(dockerfile.read_bytes()).hexdigest()


def base_image(dockerfile: Path = DOCKERFILE) -> str:
    """The image named by the Dockerfile's first FROM line."""
    for line in dockerfile.read_text().splitlines():
        words = line.split()
        if words and words[0].upper() == "FROM":
            names = [w for w in words[1:] if not w.startswith("--")]
            if names:
                return names[0]
    raise SandboxUnavailable(f"{dockerfile} has no FROM line")


def build_image(
    tag: str = DEFAULT_IMAGE,
    *,
    offline_seed: OfflineSeed = "auto",
    log: Callable[[str], None] = _quiet,
    mirror: str = DEBIAN_MIRROR,
) -> str:
    """Build the sandbox image (unless it is already current) and return its id.

    `offline_seed`: "auto" seeds the base image with debootstrap only when pulling
    it fails, "always" seeds instead of pulling, "never" never seeds.
    Raises SandboxUnavailable when there is no engine, no way to get the base
    image, or the build fails.
    """
    if offline_seed not in ("auto", "always", "never"):
        raise ValueError(f"offline_seed must be one of auto, always, never; not {offline_seed!r}")
    client = connect(timeout=900)
    digest = dockerfile_sha256()
    try:
        existing = client.images.get(tag)
        if (existing.labels or {}).get(DOCKERFILE_LABEL) == digest:
            log(f"{tag} is up to date ({existing.id[:19]})")
            return existing.id
    except docker.errors.ImageNotFound:
        pass

    base = base_image()
    _ensure_base(client, base, offline_seed, log, mirror)

    log(f"building {tag} from {DOCKERFILE}")
    image_id = _build(client, f"building {tag}", log, path=str(DOCKERFILE.parent), tag=tag, network_mode="host",
                      labels={DOCKERFILE_LABEL: digest})
    return image_id or client.images.get(tag).id


#: The cause of a failed build step, when its output names one (the last such line wins).
_CAUSE = re.compile(r"(error|exception|traceback|denied|not found|no such|cannot|could not|failed|"
                    r"no matching distribution|unable to)", re.IGNORECASE)
#: At most this much of one line of a build's output goes into a message.
LINE_MAX = 300


def _capped(line: str, limit: int = LINE_MAX) -> str:
    line = " ".join(re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", line).split())  # without the colours of stderr
    return line if len(line) <= limit else line[:limit - 3] + "..."


def _build(client: docker.DockerClient, what: str, log: Callable[[str], None], **options: object) -> str | None:
    """Run one build, logging its output; the image id, or SandboxUnavailable naming the step that
    failed and the line of its output that says why (not only "returned a non-zero code")."""
    image_id, step, output = None, "", []
    for event in client.api.build(rm=True, forcerm=True, decode=True, **options):
        if "error" in event:
            raise SandboxUnavailable(_build_failure(what, step, output, event["error"]))
        for text in event.get("stream", "").splitlines():
            if not text.strip():
                continue
            log(text.rstrip())
            if re.match(r"Step \d+/\d+ : ", text):
                step, output = text.strip(), []
            elif not text.startswith((" ---> ", "Removing intermediate container")):
                output = (output + [text.strip()])[-200:]
        if "aux" in event and "ID" in event["aux"]:
            image_id = event["aux"]["ID"]
    return image_id


def _build_failure(what: str, step: str, output: list[str], error: str) -> str:
    causes = [line for line in output if _CAUSE.search(line)]
    cause = causes[-1] if causes else output[-1] if output else error.strip()
    where = f" at {_capped(step, 160)}" if step else ""
    code = re.search(r"returned a non-zero code: (\d+)", error)
    status = f" (exit {code.group(1)})" if code else ""
    return f"{what} failed{where}{status}: {_capped(cause)}"


def _ensure_base(client: docker.DockerClient, base: str, offline_seed: OfflineSeed,
                 log: Callable[[str], None], mirror: str) -> None:
    try:
        client.images.get(base)
        return
    except docker.errors.ImageNotFound:
        pass
    if offline_seed != "always":
        log(f"pulling {base}")
        try:
            client.images.pull(base)
            return
        except docker.errors.APIError as exc:
            if "@sha256:" in base:  # pinned by digest (SWE-bench's own image of an instance): only its registry has it
                raise SandboxUnavailable(f"cannot pull base image {base} ({exc.explanation or exc}): the task pins it "
                                         "by digest; make its registry reachable, or load that image here") from None
            if offline_seed == "never":
                raise SandboxUnavailable(
                    f"cannot pull base image {base} ({exc.explanation or exc}) and offline seeding is off: "
                    "allow it (--offline-seed auto) or load the image by hand"
                ) from None
            log(f"pull failed ({exc.explanation or exc}); seeding {base} with debootstrap")
    seed_base_image(client, base, log=log, mirror=mirror)


def seed_base_image(client: docker.DockerClient, base: str, *,
                    log: Callable[[str], None] = _quiet, mirror: str = DEBIAN_MIRROR) -> None:
    """Make `base` (a debian:<suite>[-slim] name) from Debian packages, without a registry."""
    match = re.fullmatch(r"(?:docker\.io/)?(?:library/)?debian:([a-z]+)(?:-slim)?", base)
    if not match:
        raise SandboxUnavailable(
            f"cannot seed {base} offline: debootstrap can only make debian:<suite> base images"
        )
    suite = match.group(1)
    debootstrap = shutil.which("debootstrap")
    if debootstrap is None:
        raise SandboxUnavailable(
            f"no registry gives {base} and debootstrap is missing: run `apt-get install -y debootstrap`"
        )
    if os.geteuid() != 0:
        raise SandboxUnavailable(f"seeding {base} needs debootstrap as root: run `sudo endstate image build`")
    repository, _, image_tag = base.rpartition(":")
    with tempfile.TemporaryDirectory(prefix="endstate-seed-") as tmp:
        rootfs, archive = Path(tmp) / "rootfs", Path(tmp) / "rootfs.tar"
        _run([debootstrap, "--variant=minbase", suite, str(rootfs), mirror], log,
             f"debootstrap of Debian {suite} from {mirror}")
        _run(["tar", "-C", str(rootfs), "-cf", str(archive), "."], log, "packing the seeded root filesystem")
        log(f"importing it as {base}")
        client.api.import_image_from_file(str(archive), repository=repository, tag=image_tag,
                                          changes=['CMD ["bash"]'])


def _run(argv: list[str], log: Callable[[str], None], what: str) -> None:
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    tail: list[str] = []
    assert process.stdout is not None
    for line in process.stdout:
        log(line.rstrip())
        tail = (tail + [line.rstrip()])[-10:]
    if process.wait() != 0:
        raise SandboxUnavailable(f"{what} failed (exit {process.returncode}):\n" + "\n".join(tail))


def context_sha256(context: Path) -> str:
    """sha256 over every file of a build context: path, executable bit and bytes."""
    digest = hashlib.sha256()
    for path in sorted(p for p in Path(context).rglob("*") if p.is_file()):
        digest.update(path.relative_to(context).as_posix().encode() + b"\0")
        digest.update(b"x" if os.access(path, os.X_OK) else b"-")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def build_task_image(dockerfile: Path, task_id: str, *, offline_seed: OfflineSeed = "auto",
                     log: Callable[[str], None] = _quiet, mirror: str = DEBIAN_MIRROR) -> str:
    """Build a task's own image from `dockerfile` (its folder is the context); return its tag.

    Nothing is built when an image of that tag already carries the context's hash.
    Raises SandboxUnavailable when the build cannot be done.
    """
    dockerfile = Path(dockerfile)
    context = dockerfile.parent
    digest = context_sha256(context)
    tag = "endstate-task-" + re.sub(r"[^a-z0-9_.-]+", "-", task_id.lower())[:80] + ":" + digest[:12]
    with _TASK_BUILDS:
        client = connect(timeout=900)
        try:
            try:
                if (client.images.get(tag).labels or {}).get(CONTEXT_LABEL) == digest:
                    return tag
            except docker.errors.ImageNotFound:
                pass
            base = base_image(dockerfile)
            if base == DEFAULT_IMAGE:
                build_image(offline_seed=offline_seed, log=log, mirror=mirror)
            elif base.startswith(PYTHON_IMAGE + ":"):  # the image of the Python the task names
                build_python_image(source_of_tag(base), log=log, offline_seed=offline_seed, mirror=mirror)
            else:
                _ensure_base(client, base, offline_seed, log, mirror)
            requirements = context / "requirements.txt"
            with tempfile.TemporaryDirectory(prefix="endstate-context-") as tmp:
                if requirements.is_file():  # the dependencies' wheels, from the host: no network in the build
                    from endstate.sandbox._wheels import wheelhouse

                    house = wheelhouse(requirements)
                    shutil.copytree(context, tmp, dirs_exist_ok=True)
                    shutil.copytree(house, Path(tmp) / "wheels")
                log(f"building {tag} from {dockerfile}")
                _build(client, f"building {tag} from {dockerfile}", log,
                       path=tmp if requirements.is_file() else str(context), dockerfile=dockerfile.name, tag=tag,
                       network_mode="none" if requirements.is_file() and not (context / SYSTEM_PACKAGES).is_file()
                       else "host", labels={CONTEXT_LABEL: digest})
        finally:
            client.close()
    return tag


def image_id(tag: str, *, hint: str = "build or pull it first") -> str:
    """The id of an image the engine has, or SandboxUnavailable saying how to get it."""
    client = connect()
    try:
        return client.images.get(tag).id
    except docker.errors.ImageNotFound:
        raise SandboxUnavailable(f"Docker image {tag} does not exist here: {hint}") from None
    finally:
        client.close()


def image_label(tag: str, label: str) -> str | None:
    """The value of one label of an image; None when the image or the label is not there."""
    client = connect()
    try:
        return (client.images.get(tag).labels or {}).get(label)
    except docker.errors.ImageNotFound:
        return None
    finally:
        client.close()


def image_python(image: str) -> str:
    """The image's Python as "3.11" (wheels installed into it must be for that version)."""
    client = connect()
    try:
        out = client.containers.run(image, ["python3", "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                                    network_mode="none", remove=True, user="root", labels=one_off_labels())
    except docker.errors.DockerException as exc:
        raise SandboxUnavailable(f"cannot ask image {image} for its Python version: {exc}") from None
    finally:
        client.close()
    return out.decode().strip()


def build_context(context: Path, tag: str, *, labels: dict[str, str], log: Callable[[str], None] = _quiet) -> None:
    """Build a prepared context folder into `tag` with the network off; SandboxUnavailable names
    the step that failed and why."""
    client = connect(timeout=1800)
    try:
        _build(client, f"building {tag}", log, path=str(context), tag=tag, network_mode="none", labels=labels)
    finally:
        client.close()


def build_python_image(source: PythonSource, *, log: Callable[[str], None] = _quiet,
                       offline_seed: OfflineSeed = "auto", mirror: str = DEBIAN_MIRROR) -> str:
    """Build the image of `source` unless one of its tag holds the same context; return its tag.
    SandboxUnavailable names the source and why it could not be had."""
    with tempfile.TemporaryDirectory(prefix="endstate-python-") as tmp:
        write_context(source, Path(tmp))
        digest = context_sha256(Path(tmp))
        client = connect(timeout=1800)
        try:
            try:
                if (client.images.get(source.tag).labels or {}).get(CONTEXT_LABEL) == digest:
                    return source.tag
            except docker.errors.ImageNotFound:
                pass
            if source.kind == "registry":
                _pull(client, source.origin)
            else:
                _ensure_base(client, base_of(source), offline_seed, log, mirror)
            log(f"building {source.tag}: {source.said()}")
            _build(client, f"building {source.tag} ({source.said()})", log, path=tmp, tag=source.tag,
                   network_mode="host", labels={CONTEXT_LABEL: digest, "endstate.python-source": source.said()})
        finally:
            client.close()
    return source.tag


def _pull(client: docker.DockerClient, image: str) -> None:
    try:
        client.images.get(image)
    except docker.errors.ImageNotFound:
        try:
            client.images.pull(image)
        except docker.errors.APIError as exc:
            raise SandboxUnavailable(f"cannot pull {image} ({exc.explanation or exc}): name a registry that has it, "
                                     "or let endstate take a Debian suite or the host's Python") from None


def build_wheel_in_image(source: PythonSource, sdist: Path, out: Path, *, environment: dict[str, str]) -> bool:
    """Build `sdist` into a wheel in `out` with the Python of `source`'s image (built first), pip run from
    its own wheel and the build's own requirements from PyPI over the host network, reached through the
    certificates the host's pip trusts. False when it does not build there."""
    from endstate.sandbox._wheels import resolve_requirements, wheelhouse

    build_python_image(source)
    with tempfile.TemporaryDirectory(prefix="endstate-pip-") as tmp:
        pins = Path(tmp) / "pip.txt"
        pins.write_text(resolve_requirements(["pip"], target=source), encoding="utf-8")
        pip = next(wheelhouse(pins).glob("pip-*.whl"))
    volumes = {str(sdist): {"bind": f"/in/{sdist.name}", "mode": "ro"},
               str(pip): {"bind": f"/pip/{pip.name}", "mode": "ro"}, str(out): {"bind": "/out", "mode": "rw"}}
    environment = {"HOME": "/tmp", **environment}
    cert = os.environ.get("PIP_CERT") or os.environ.get("SSL_CERT_FILE") or "/etc/ssl/certs/ca-certificates.crt"
    if os.path.isfile(cert):
        volumes[cert] = {"bind": "/etc/endstate-host-certificates.crt", "mode": "ro"}
        environment["PIP_CERT"] = "/etc/endstate-host-certificates.crt"
    client = connect(timeout=1800)
    try:
        # pip installed from its wheel first: run from the zip, it cannot start its PEP 517 hooks (`can't find
        # '__main__' module in .../_in_process.py`). An image without setuptools (a Python the host's pyenv built)
        # builds an sdist with no pyproject.toml in an isolated environment, as for one with it (contextvars 2.4).
        script = (f"python3 /pip/{pip.name}/pip install --quiet --no-index --disable-pip-version-check --target "
                  f"/tmp/endstate-pip /pip/{pip.name} && isolated= && {{ python3 -c 'import setuptools' 2>/dev/null "
                  "|| isolated=--use-pep517; } && PYTHONPATH=/tmp/endstate-pip python3 -m pip wheel $isolated "
                  f"--no-deps --quiet --disable-pip-version-check --wheel-dir /out /in/{shlex.quote(sdist.name)}")
        client.containers.run(source.tag, ["sh", "-c", script],
                              network_mode="host", user=f"{os.getuid()}:{os.getgid()}", remove=True,
                              environment=environment, volumes=volumes, labels=one_off_labels())
        return True
    except docker.errors.DockerException:
        return False
    finally:
        client.close()
