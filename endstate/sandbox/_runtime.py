"""The harness's own runtime in a grading container: programs, loader, libraries and Python.

A grading container is made from the task's image and then receives the end state; a root
end state may have replaced any file of that image. So nothing the harness runs there as
root comes from the image: the command server, the runner and its helpers, the seccomp and
namespace wrappers and the services' starter run from RUNTIME, a Docker volume mounted
read-only, by absolute path (or on a PATH that holds RUNTIME alone), Python with `-I -S`.

The volume is filled once per engine from an image built on the sandbox image
(`endstate-runtime:<hash>`): bash, Python and the programs the harness runs, copied with
the libraries they load, glibc's loader and Python's standard library, each program's
loader and library path rewritten to RUNTIME (patchelf, from Debian's archive). Python
finds its standard library from where it runs, never the image's (`-I` ignores PYTHONHOME
and PYTHONPATH; its `pyvenv.cfg` would be looked for in RUNTIME). The volume is named by
the runtime image's id, which hashes its bytes: a changed runtime is another volume.

What glibc reads whatever the program is read nowhere the end state reaches: the runtime's loader
looks for its preload list (`/etc/ld.so.preload`, read for every dynamic program, `--preload ''`
or not) and its libc for the name service's configuration (`/etc/nsswitch.conf`, whose modules a
user lookup dlopens from the image's library folders) under /proc/0, which no process has: each
path rewritten in the copied binary, padded with slashes to its length. A root end state's
verifier, which may write /etc while it runs, plants neither in the harness's later commands.
The tamper check still keeps both out of a sealed change (`harness_path`).

Each of these guards has a switch (`RuntimeGuards`, from endstate.guards.Guards), for the
mutation check alone: the image's PATH first, the container's environment kept, a runtime
built without the rewritten paths (another image, another volume).
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Callable
from typing import Any

import msgspec

from endstate.errors import SandboxUnavailable
from endstate.sandbox._base import DEFAULT_IMAGE

__all__ = ["HARNESS_ENV", "HARNESS_PROGRAMS", "HARNESS_USER", "RUNTIME", "RUNTIME_PATH", "RUNTIME_PROGRAMS", "TOOLBOX_BUILD",
           "RuntimeGuards", "harness_env", "runtime_python", "runtime_volume"]

#: Where the runtime is mounted in every grading container (never sealed: /opt/endstate*).
RUNTIME = "/opt/endstate-runtime"
#: The PATH of every process the harness runs as root in a grading container.
RUNTIME_PATH = f"{RUNTIME}/bin"
#: The whole environment of every process the harness runs as root in a grading container: nothing in it
#: names a file of the image (LOCPATH: the runtime's own locale; TZDIR: a folder of the runtime's, empty,
#: so UTC is read from no file).
HARNESS_ENV = {"PATH": RUNTIME_PATH, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "LOCPATH": f"{RUNTIME}/locale",
               "TZ": "UTC", "TZDIR": f"{RUNTIME}/zoneinfo"}
#: Who the harness's execs run as: a uid, which the engine never looks up in the container's /etc/passwd.
HARNESS_USER = "0"
#: The programs the harness runs in every task container (a Harbor import's toolbox carries each).
HARNESS_PROGRAMS = ("bash", "python3", "setpriv", "tar", "find", "xargs", "head", "tail", "wc", "cat", "realpath",
                    "stat", "mkdir", "chmod", "chown", "touch", "du", "rm", "ln", "ls", "cp", "mv", "id", "env",
                    "sleep", "dirname", "basename", "sort", "tr", "cut", "grep", "sed", "mktemp", "readlink", "date")
#: And what a grading container's root runs besides (the bounded folders' mounts): the runtime carries all.
RUNTIME_PROGRAMS = (*HARNESS_PROGRAMS, "mount", "umount", "rmdir")

# Run in endstate's sandbox image (Debian bookworm): copy the programs, their libraries and Python's
# standard library into the folder and point each program at the folder's loader and libraries.
TOOLBOX_BUILD = r"""set -eu
T=%(toolbox)s
apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends patchelf >/dev/null
mkdir -p "$T/bin" "$T/lib"
for p in %(programs)s; do cp -L "$(type -P "$p")" "$T/bin/$p"; done
py=$(readlink -f "$(type -P python3)"); v=${py##*/python}
cp -a "/usr/lib/python$v" "$T/lib/"
cd "$T/lib/python$v" && rm -rf test idlelib tkinter turtledemo ensurepip lib2to3 pydoc_data site-packages \
  dist-packages config-* __pycache__ */__pycache__ && cd /
loader=$(patchelf --print-interpreter /bin/bash)
cp -L "$loader" "$T/lib/"
libc=$(ldd /bin/bash | awk '$1 ~ /^libc[.]so/ {print $3}')
cp -L "${libc%%/*}"/libgcc_s.so.1 "$T/lib/"
for f in "$T"/bin/* "$T/lib/python$v"/lib-dynload/*.so; do ldd "$f" | awk '$2 == "=>" && $3 ~ /^\// {print $3}'; done \
  | sort -u | while read -r lib; do cp -L "$lib" "$T/lib/"; done
for f in "$T"/bin/*; do
  patchelf --set-interpreter "$T/lib/${loader##*/}" --force-rpath --set-rpath "$T/lib" "$f"
done
mkdir "$T/gnu" && for p in %(gnu)s; do ln -s "../bin/$p" "$T/gnu/$p"; done
"$T/bin/python3" -I -S -c 'import ctypes, select, json, os'
apt-get purge -y -qq patchelf >/dev/null && rm -rf /var/lib/apt/lists/*
"""

# Then, for the runtime alone: its own C.UTF-8 locale (LOCPATH), an empty zone folder (TZDIR), and the
# folder of iconv's modules and their cache (gconv), which glibc finds by a path compiled into it (the
# image's): in the runtime's libc that path is the runtime's own copy, padded with slashes to its length.
# And its standard library compiled: every command the harness runs in a grading container starts the
# runtime's Python (the seccomp wrapper), which on a read-only volume would otherwise compile what it
# imports from source each time (about 100 ms of CPU a command). The volume is read-only in every grading
# container, so no end state writes a .pyc there.
_RUNTIME_BUILD = r"""set -eu
T=%(toolbox)s
libc=$(ldd /bin/bash | awk '$1 ~ /^libc[.]so/ {print $3}')
mkdir -p "$T/locale" "$T/zoneinfo" && cp -a /usr/lib/locale/C.utf8 "$T/locale/"
gconv=$(grep -a -o '/usr/lib/[a-z0-9_-]*/gconv' "$T/lib/${libc##*/}" | sort -u | head -1)
cp -a "$gconv" "$T/lib/gconv"
python3 -I -S -c '%(patch)s' "$T/lib/${libc##*/}" "$gconv" "$T/lib/gconv"
"$T/bin/python3" -I -S -m compileall -q -j 0 "$T"/lib/python3.*
"$T/bin/python3" -I -S -c 'import ctypes, select, json, os'
"""
_PATCH = r"""import os, sys
path, old, new = sys.argv[1], sys.argv[2].encode(), sys.argv[3].encode()
new = new.replace(b"/gconv", b"/" * (len(old) - len(new)) + b"/gconv")
data = open(path, "rb").read()
assert len(new) == len(old) and old in data, (old, new)
open(path + ".new", "wb").write(data.replace(old, new))
os.chmod(path + ".new", os.stat(path).st_mode)
os.replace(path + ".new", path)
"""
# The loader's preload list and libc's name-service configuration, looked for under /proc/0 (no process has
# pid 0, and no process in the container can make a file in /proc): each path occurs once, rewritten in place.
_BLIND_BUILD = r"""set -eu
T=%(toolbox)s
libc=$(ldd /bin/bash | awk '$1 ~ /^libc[.]so/ {print $3}')
for loader in "$T"/lib/ld-linux*; do python3 -I -S -c '%(blind)s' "$loader" /etc/ld.so.preload /proc/0/preload; done
python3 -I -S -c '%(blind)s' "$T/lib/${libc##*/}" /etc/nsswitch.conf /proc/0/nsswitch
"$T/bin/python3" -I -S -c 'import ctypes, select, json, os'
"""
_BLIND = r"""import os, sys
path, old, new = sys.argv[1], sys.argv[2].encode(), sys.argv[3].encode()
new = b"/" * (len(old) - len(new)) + new
data = open(path, "rb").read()
assert len(new) == len(old) and data.count(old + b"\0") == 1, (path, old)
open(path + ".new", "wb").write(data.replace(old + b"\0", new + b"\0"))
os.chmod(path + ".new", os.stat(path).st_mode)
os.replace(path + ".new", path)
"""


class RuntimeGuards(msgspec.Struct, frozen=True):
    """The runtime's guards (each a field of endstate.guards.Guards): all on, but in the mutation check."""

    #: What the harness runs is found on the runtime's PATH alone (off: the image's PATH first).
    own_path: bool = True
    #: Every variable of the container's own environment blanked in the harness's (off: kept).
    blank_env: bool = True
    #: The runtime's loader and libc read no /etc/ld.so.preload or /etc/nsswitch.conf (off: they do).
    blind_config: bool = True


_LABEL = "endstate.runtime-sha256"


def runtime_python(*args: str) -> list[str]:
    """The runtime's Python, isolated and without `site`, with `args`."""
    return [f"{RUNTIME_PATH}/python3", "-I", "-S", *args]


def harness_env(container_env: list[str] | None, guards: RuntimeGuards = RuntimeGuards()) -> dict[str, str]:
    """The environment of a `docker exec` of the harness's in a container whose own is `container_env`
    (its Config.Env, `NAME=value` each): each of those blanked, HARNESS_ENV set, and the container's
    own environment under ENDSTATE_USER_ENV (JSON), for the commands the harness runs. `guards` off
    (the mutation check's mutants): the container's variables kept, or its PATH before the runtime's."""
    pairs = {name: value for name, _, value in (entry.partition("=") for entry in container_env or [])}
    own = {**HARNESS_ENV, "ENDSTATE_USER_ENV": json.dumps(pairs)}
    if not guards.own_path:  # mutant: a program the image has on its PATH is found before the runtime's
        own["PATH"] = f"{pairs.get('PATH', '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin')}:{RUNTIME_PATH}"
    return {**(dict.fromkeys(pairs, "") if guards.blank_env else pairs), **own}


def _dockerfile(blind: bool = True) -> str:
    gnu = [p for p in RUNTIME_PROGRAMS if p not in ("bash", "python3")]
    script = TOOLBOX_BUILD % {"toolbox": RUNTIME, "programs": " ".join(RUNTIME_PROGRAMS), "gnu": " ".join(gnu)} \
        + _RUNTIME_BUILD % {"toolbox": RUNTIME, "patch": _PATCH}
    # A layer of its own: the mutant's runtime (`blind` off) is the layer below, built once for both.
    blinded = f"RUN {json.dumps(['bash', '-c', _BLIND_BUILD % {'toolbox': RUNTIME, 'blind': _BLIND}])}\n" if blind else ""
    return f"FROM {DEFAULT_IMAGE}\nUSER root\nRUN {json.dumps(['bash', '-c', script])}\n{blinded}"


def _image(client: Any, log: Callable[[str], None], blind: bool = True) -> str:
    """The runtime image's id, built first where this engine lacks it (`blind`: see RuntimeGuards)."""
    import docker.errors  # the SDK: loaded where a grading container is made, never by the bubblewrap backend

    try:
        base = client.images.get(DEFAULT_IMAGE).id
    except docker.errors.ImageNotFound:
        raise SandboxUnavailable(f"Docker image {DEFAULT_IMAGE} does not exist here: run `endstate image build` "
                                 "first (the harness's runtime is built on it)") from None
    dockerfile = _dockerfile(blind)
    digest = hashlib.sha256(f"{base}\n{dockerfile}".encode()).hexdigest()
    tag = f"endstate-runtime:{digest[:12]}"
    try:
        return client.images.get(tag).id
    except docker.errors.ImageNotFound:
        pass
    from endstate.sandbox._image import _build  # the builder: loaded only where a runtime is built

    log(f"building {tag}, the harness's runtime in grading containers")
    built = _build(client, f"building {tag}", log, fileobj=io.BytesIO(dockerfile.encode()), tag=tag,
                   network_mode="host", labels={_LABEL: digest})
    return built or client.images.get(tag).id


def runtime_volume(client: Any, log: Callable[[str], None] = lambda _line: None, *, blind: bool = True) -> str:
    """The name of the volume holding the runtime, made and filled from its image where missing
    (the image built first where missing: Debian's archive must be reachable then); `blind` off: the
    runtime whose loader and libc read the image's configuration (RuntimeGuards.blind_config)."""
    import docker.errors

    from endstate.sandbox._reaper import one_off_labels

    image = _image(client, log, blind)
    name = "endstate-runtime-" + image.removeprefix("sha256:")[:24]
    try:
        client.volumes.get(name)
        return name
    except docker.errors.NotFound:
        pass
    client.volumes.create(name, labels={_LABEL: image})
    try:  # an empty volume mounted where the image holds files is filled with them
        client.containers.run(image, runtime_python("-c", "import ctypes, select, json"), remove=True,
                              network_mode="none", user=HARNESS_USER, labels=one_off_labels(),
                              volumes={name: {"bind": RUNTIME, "mode": "rw"}})
    except docker.errors.DockerException as exc:
        client.volumes.get(name).remove(force=True)
        raise SandboxUnavailable(f"could not fill the harness's runtime volume {name}: {exc}") from None
    return name
