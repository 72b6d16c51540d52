"""SWE-bench's own instance images as tasks' images (`tasks import swebench --images swebench`).

SWE-bench publishes one image per instance (the dataset's `image` field:
`swebench/sweb.eval.x86_64.django_1776_django-10097:latest`, `__` written `_1776_`):
the repository at its base commit in /testbed (root's, a git checkout), the project
installed into the conda env `testbed` (/opt/miniconda3/envs/testbed), and its harness
runs the eval_script there as root with that env activated. Such an image becomes the
task's image here, with endstate's contract on top:

- **pinned**: the image is pulled from the registry the user names (Docker Hub's
  `swebench` unless told) and the task's Dockerfile builds `FROM` it by digest
  (`name@sha256:...`, also written in task.toml), so a tag pushed again later cannot
  change what a task is graded in;
- **the fixture is /testbed** as the image holds it, its history and caches left out
  (`.git`, `__pycache__`, `*.pyc`, `*.o`, an untracked `build/`): the tracked files at the base commit and what
  the project's install wrote beside them (compiled extensions, a generated
  `_version.py`), so the agent's workspace imports as SWE-bench's /testbed does. The
  image's HEAD must be the instance's `base_commit`;
- **a layer** (`layer_dockerfile`) adds what endstate runs in a task container where the
  image lacks it (a user of uid 1000, /workspace) and makes `python3` and `python` on
  every PATH the env's interpreter, as `conda activate testbed` does: the agent's shell
  and the harness's graded runs import the env's pytest and packages. /testbed stays
  as SWE-bench built it, root's (nothing of an end state is ever on a path the image's
  own interpreter reads before the workspace), but for its `.git`: a clone's pack holds
  the commits after the base too, which are not the agent's to read.

The test command is the project's pytest over the dataset's node ids, as without
images; the eval_script's own test line is written on the task (`eval_test_line`).
An image that cannot be pulled is one line naming it and the registry; the other
instances go on.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import msgspec

from endstate.errors import UserError
from endstate.sandbox import SNAPSHOT_MAX_BYTES, PullFailed, Tree, pull_pinned, run_in_image, tar_to_tree

__all__ = ["InstanceImage", "about", "eval_test_line", "image_name", "instance_image",
           "layer_dockerfile", "write_layer"]

TESTBED = "/testbed"
ENV = "/opt/miniconda3/envs/testbed"
#: The eval_script's markers around the command that runs the tests.
_START, _END = ": '>>>>> Start Test Output'", ": '>>>>> End Test Output'"
#: Left out of the fixture: history, and what Python and compilers leave that the tree does not need.
_LEFT_OUT = ("./.git", "__pycache__", "*.pyc", "*.o")
_FACTS, _ARCHIVE = "/tmp/endstate-facts", "/tmp/endstate-testbed.tar"
# Run in the instance image as root: /testbed's HEAD and the env's Python, then /testbed as a tar; an untracked
# build/ too is left out (setup.py's copies of what an in-place build put beside the sources, and its objects).
_READ = (f"set -e; cd {TESTBED}; git -c safe.directory='*' rev-parse HEAD > {_FACTS}; "
         f"{ENV}/bin/python -c 'import sys; print(\"%d.%d\" % sys.version_info[:2])' >> {_FACTS}; "
         "build=; [ -n \"$(git -c safe.directory='*' ls-files -- build | head -n 1)\" ] || build=--exclude=./build; "
         f"tar $build {' '.join(f'--exclude={p!r}' for p in _LEFT_OUT)} -cf {_ARCHIVE} .")


class InstanceImage(msgspec.Struct, frozen=True):
    """One instance's image, pulled and read."""

    #: As asked for: REGISTRY/sweb.eval.x86_64.ID:latest.
    name: str
    #: By digest: REGISTRY/sweb.eval.x86_64.ID@sha256:...
    pinned: str
    #: /testbed's HEAD.
    commit: str
    #: The env's Python, "3.9".
    python: str
    #: /testbed's files (see the module's docstring).
    tree: Tree


def image_name(instance_id: str, image: str | None, registry: str) -> str:
    """The instance's image in `registry` (a namespace, `HOST:PORT/swebench`): the dataset's `image`
    with its namespace replaced, else the name SWE-bench's harness derives from the id."""
    registry = registry.rstrip("/")
    if image:
        return f"{registry}/{image.rsplit('/', 1)[-1]}"
    return f"{registry}/sweb.eval.x86_64.{instance_id}:latest".lower().replace("__", "_1776_")


def _read(pinned: str) -> tuple[str, str, Tree]:
    """(/testbed's HEAD, the env's Python, /testbed's files) of the image."""
    status, said, files = run_in_image(pinned, _READ, [_FACTS, _ARCHIVE])
    if status != 0:
        raise UserError(f"image {pinned} is not in SWE-bench's layout ({TESTBED} a git checkout, the env {ENV}): "
                        f"{said or f'exit {status}'}")
    facts, archive = files[0].decode().split(), files[1]
    if len(archive) > SNAPSHOT_MAX_BYTES:  # no end state may be that large: it could never be sealed
        raise UserError(f"image {pinned}: {TESTBED} holds {len(archive) >> 20} MiB, more than the "
                        f"{SNAPSHOT_MAX_BYTES >> 20} MiB an end state may be")
    return facts[0], facts[1], {path: entry for path, entry in tar_to_tree(archive).items() if not entry.link}


def instance_image(instance_id: str, image: str | None, base_commit: str, registry: str,
                   log: Callable[[str], None] = lambda line: None) -> InstanceImage:
    """Pull the instance's image from `registry`, pin it, read /testbed and check it is `base_commit`."""
    name = image_name(instance_id, image, registry)
    try:
        pinned = pull_pinned(name, log)
    except PullFailed as exc:
        raise UserError(f"image {name} cannot be pulled from {registry} ({exc.why}): push it there, name a registry "
                        "that holds it (--images-registry HOST:PORT/NAMESPACE), or import without --images") from None
    commit, python, tree = _read(pinned)
    if not commit.startswith(base_commit.lower()):
        raise UserError(f"image {name} holds commit {commit[:12]} in {TESTBED}, not the instance's base_commit "
                        f"{base_commit[:12]}")
    log(f"{name} is {pinned.rsplit('@', 1)[1]}: {len(tree)} files in {TESTBED}, Python {python} in {ENV}")
    return InstanceImage(name, pinned, commit, python, tree)


def eval_test_line(eval_script: str | None) -> str:
    """The command SWE-bench's eval_script runs the tests with ("" when it has none)."""
    lines = (eval_script or "").splitlines()
    if _START not in lines or _END not in lines:
        return ""
    return " ".join(line.strip() for line in lines[lines.index(_START) + 1:lines.index(_END)] if line.strip())


_LAYER = """\
# Made by `endstate tasks import swebench --images swebench`: SWE-bench's own image of
# {name}, pinned by digest, with what endstate needs on top. SWE-bench runs its tests as
# root in /testbed with the conda env `testbed` activated; here the agent works in
# /workspace (the task's fixture is /testbed's files), and `python3` and `python` on every
# PATH are the env's interpreter, as `conda activate testbed` makes them, for the agent's
# shell and the harness's graded runs alike. /testbed stays as SWE-bench built it, root's,
# but for its .git: the history there (and any later commit the clone fetched) is not the agent's.
FROM {pinned}
USER root
RUN set -e; \\
  grep -q '^[^:]*:[^:]*:1000:' /etc/group || echo agent:x:1000: >> /etc/group; \\
  grep -q '^[^:]*:[^:]*:1000:' /etc/passwd || {{ echo agent:x:1000:1000::/home/agent:/bin/bash >> /etc/passwd \\
    && mkdir -p /home/agent && chown 1000:1000 /home/agent; }}; \\
  mkdir -p /workspace && chown 1000:1000 /workspace; rm -rf {testbed}/.git; \\
  for p in python3 python; do printf '#!/bin/sh\\nexec %s/bin/python "$@"\\n' {env} > /usr/local/bin/$p; \\
    chmod 0755 /usr/local/bin/$p; done; \\
  test "$(/usr/local/bin/python3 -c 'import sys; print(sys.prefix)')" = {env}
ENV PATH={env}/bin:/opt/miniconda3/condabin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \\
    CONDA_PREFIX={env} CONDA_DEFAULT_ENV=testbed
WORKDIR /workspace
"""


def about(image: InstanceImage, eval_script: str | None) -> list[str]:
    """What task.toml's header says of the image: its digest, and the test line SWE-bench's harness runs."""
    return [f"Its image is SWE-bench's own, pinned: {image.pinned} (Python {image.python}).",
            f"SWE-bench's eval_script runs: {eval_test_line(eval_script) or '(no eval_script given)'}"]


def layer_dockerfile(image: InstanceImage) -> str:
    """The task's Dockerfile: the instance image, by digest, with endstate's layer."""
    return _LAYER.format(name=image.name, pinned=image.pinned, env=ENV, testbed=TESTBED)


def write_layer(folder: Path, image: InstanceImage) -> None:
    """The task folder's image/Dockerfile (`[sandbox] dockerfile` names it)."""
    (folder / "image").mkdir()
    (folder / "image" / "Dockerfile").write_text(layer_dockerfile(image), encoding="utf-8")
