"""Images pulled from a registry, pinned by digest, and files read out of one.

A task built on an image someone else publishes (SWE-bench's instance images) names
it by digest (`repository@sha256:...`), so a tag pushed again later cannot change
what the task runs in: `pull_pinned` pulls a tag and returns that reference.
`run_in_image` runs a shell script as root in a throwaway container of an image
(no network) and reads files it left, as bytes: what an author reads out of an
image before a task is made of it. The docker SDK loads on first call.
"""

from __future__ import annotations

import io
import re
import tarfile
from collections.abc import Callable

from endstate.errors import SandboxUnavailable

__all__ = ["PullFailed", "pull_pinned", "run_in_image"]


class PullFailed(SandboxUnavailable):
    """An image that cannot be pulled and that this engine does not hold either."""

    def __init__(self, name: str, why: str) -> None:
        super().__init__(f"cannot pull {name}: {why}")
        self.name, self.why = name, why


def _repository(reference: str) -> str:
    """A reference's repository, without tag or digest, as the engine writes it (Docker Hub's prefix off)."""
    name = reference.split("@", 1)[0]
    if ":" in name.rsplit("/", 1)[-1]:
        name = name.rsplit(":", 1)[0]
    return re.sub(r"^(docker\.io/|index\.docker\.io/)(library/)?", "", name)


def pull_pinned(name: str, log: Callable[[str], None] = lambda line: None) -> str:
    """Pull `name` (a tag) and return it pinned: `repository@sha256:...`. An image this engine already
    holds from that repository is used when the pull fails (said in the log); PullFailed when
    neither, SandboxUnavailable when the image has no digest from a registry (built or loaded here)."""
    import docker.errors

    from endstate.sandbox._engine import connect

    client = connect(timeout=1800)
    try:
        log(f"pulling {name}")
        try:
            image = client.images.pull(name)
        except docker.errors.DockerException as exc:
            why = " ".join(str(getattr(exc, "explanation", None) or exc).split())[:300]
            try:
                image = client.images.get(name)
            except docker.errors.DockerException:
                raise PullFailed(name, why) from None
            log(f"cannot pull {name} ({why}); using the copy this engine already holds")
        digests = image.attrs.get("RepoDigests") or []
    finally:
        client.close()
    repository = _repository(name)
    for digest in digests:
        if _repository(digest) == repository:
            return f"{repository}@{digest.split('@', 1)[1]}"
    raise SandboxUnavailable(f"image {name} has no digest from a registry (it was built or loaded here, never "
                             "pulled): push it to a registry and take it from there, so what runs can be pinned")


def run_in_image(image: str, script: str, paths: list[str], *, timeout: float = 600) -> tuple[int, str, list[bytes]]:
    """(exit status, the last line the script wrote to stderr, the bytes of each of `paths` when it
    exited 0) of `script` run by `/bin/sh -c` as root, with no network, in a container of `image`."""
    import docker.errors

    from endstate.sandbox._engine import connect
    from endstate.sandbox._reaper import one_off_labels

    client = connect(timeout=1800)
    try:
        try:
            container = client.containers.create(image, [script], entrypoint=["/bin/sh", "-c"], user="0",
                                                 network_mode="none", labels=one_off_labels())
        except docker.errors.DockerException as exc:
            raise SandboxUnavailable(f"cannot make a container of {image}: {exc}") from None
        try:
            container.start()
            status = int(container.wait(timeout=timeout).get("StatusCode", 1))
            said = container.logs(stdout=False, stderr=True).decode(errors="replace").strip().splitlines()
            files = [_member(container, path) for path in paths] if status == 0 else []
        finally:
            container.remove(force=True)
    finally:
        client.close()
    return status, said[-1] if said else "", files


def _member(container, path: str) -> bytes:
    """The bytes of one file of a container (the engine sends it as a tar of that one file)."""
    stream, _ = container.get_archive(path)
    with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as tar:
        member = tar.next()
        handle = tar.extractfile(member) if member is not None else None
        if handle is None:
            raise SandboxUnavailable(f"{path} is not a file in the container of {container.image}")
        return handle.read()
