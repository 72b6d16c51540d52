"""The tools a Harbor verifier installs for itself, put in the task's image at import.

A Harbor `tests/test.sh` commonly starts by installing what it needs (`apt-get update &&
apt-get install -y bats`). endstate grades with the network off, so such a line would fail
there. The import reads the Debian packages test.sh installs and adds them to the task's
image, built with the network on (Debian's mirror), as an `apt-get install` step: the
package names join the image, never the held-out tests themselves. When the verifier runs,
`/opt/endstate-verifier/bin` comes first on its PATH, where `apt-get` and `apt` answer
`update` at once and `install` by checking each package is installed (dpkg), naming any
that is not; other subcommands go to the real apt.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

from endstate.errors import UserError

__all__ = ["SHIM_DIR", "TOOLS_DIR", "TOOLS_HOME", "UvUse", "apt_packages", "download_wheels", "shims", "tools_layer", "uv_use"]

#: Beside the image's Dockerfile: what the layer copies into /opt/endstate-verifier/bin.
TOOLS_DIR = ".endstate-verifier"
#: In the image: what TOOLS_DIR holds (bin/, wheels/), and uv/ when the verifier runs uv.
TOOLS_HOME = "/opt/endstate-verifier"
#: The verifier grader puts it first on test.sh's PATH.
SHIM_DIR = f"{TOOLS_HOME}/bin"

_APT_SHIM = """#!/bin/sh
# endstate: the verifier runs with the network off. The Debian packages this task's
# tests/test.sh installs were installed in its image when it was imported, so `update`
# has nothing to do and `install` checks that each package is there.
sub=""; skip=0
for arg in "$@"; do
  if [ $skip = 1 ]; then skip=0; continue; fi
  case "$arg" in
    -o|-c|-t|--option|--config-file|--target-release) skip=1 ;;
    -*) ;;
    *) if [ -z "$sub" ]; then sub=$arg; elif [ "$sub" = install ]; then
         name=${arg%%=*}
         if ! dpkg-query -W -f='${Status}' "$name" 2>/dev/null | grep -q "ok installed"; then
           echo "endstate: apt package $name is not in the task's image: the import installs what" \\
                "test.sh names on an apt-get install line; grading is offline" >&2
           exit 100
         fi
       fi ;;
  esac
done
case "$sub" in
  update|install) exit 0 ;;
esac
exec /usr/bin/$(basename "$0") "$@"
"""

_UV_SHIM = """#!/bin/bash
# endstate: grading is offline. uv was installed in the task's image at import, with the
# wheels tests/test.sh installs; uv resolves from those alone, on the image's Python (a
# Python that -p asks for cannot be downloaded here, so -p is dropped).
export UV_OFFLINE=1 UV_NO_INDEX=1 UV_FIND_LINKS=/opt/endstate-verifier/wheels UV_PYTHON_DOWNLOADS=never \\
  UV_NO_PROGRESS=1 UV_CACHE_DIR="${TMPDIR:-/tmp}/endstate-uv-cache"
name=$(basename "$0")
args=(); mode=uv
if [ "$name" = uvx ]; then mode=tool
elif [ "$1" = tool ] && [ "$2" = run ]; then mode=tool; args=(tool run); shift 2
elif [ "$1" = run ]; then mode=tool; args=(run); shift
fi
while [ $# -gt 0 ]; do
  case "$1" in
    -p|--python) echo "endstate: $name runs on the image's Python, not $2 (grading is offline)" >&2; shift 2; continue ;;
    --python=*) shift; continue ;;
  esac
  if [ $mode = tool ]; then
    case "$1" in
      -w|--with|--from|--with-editable|--with-requirements|--index|--index-url|--extra-index-url|-c|--constraints|-f|--find-links)
        args+=("$1" "$2"); shift 2; continue ;;
      -*) ;;
      *) args+=("$@"); break ;;  # the tool and its own arguments, as they are
    esac
  fi
  args+=("$1"); shift
done
exec /opt/endstate-verifier/uv/"$name" "${args[@]}"
"""

_FETCH_SHIM = """#!/bin/bash
# endstate: grading is offline. uv was installed in the task's image at import: its installer
# URL is answered by a script that links that uv where the installer would put it.
name=$(basename "$0")
for arg; do
  case "$arg" in *astral.sh/uv/*install.sh*) astral=1 ;; esac
done
if [ -z "${astral:-}" ]; then
  IFS=: read -ra dirs <<< "$PATH"
  for dir in "${dirs[@]}"; do
    [ "$dir" != /opt/endstate-verifier/bin ] && [ -x "$dir/$name" ] && exec "$dir/$name" "$@"
  done
  echo "endstate: $name is not in the task's image, and grading is offline" >&2
  exit 127
fi
if [ "$name" = curl ]; then out=-; else out=install.sh; fi
prev=""
for arg; do
  case "$prev" in -o|--output|--output-document) out=$arg ;; -O|-[a-zA-Z]*O) [ "$name" = wget ] && out=$arg ;; esac
  case "$arg" in -O-|-[a-zA-Z]*O-) out=- ;; --output=*|--output-document=*) out=${arg#*=} ;; esac
  prev=$arg
done
script='mkdir -p "$HOME/.local/bin" && ln -sf /opt/endstate-verifier/bin/uv /opt/endstate-verifier/bin/uvx "$HOME/.local/bin/"
printf "%s\\n" "export PATH=\\"\\$HOME/.local/bin:\\$PATH\\"" > "$HOME/.local/bin/env"
echo "endstate: uv is the one installed in the task image at import (grading is offline)" >&2'
if [ "$out" = - ]; then printf '%s\\n' "$script"; else printf '%s\\n' "$script" > "$out"; fi
"""

_REDIRECT = re.compile(r"\d*(?:&>>?|>>?&?|<)\s*\S+")
_SEPARATORS = {"&&", "||", ";", "|", "&", "(", ")", "\n"}


def _commands(script: str) -> list[list[str]]:
    """The simple commands of `script`, as words: continued lines joined, redirections and
    comments dropped, split at `&&`, `||`, `;`, `|` and `&`."""
    text = _REDIRECT.sub(" ", re.sub(r"\\\n", " ", script))
    commands: list[list[str]] = []
    for line in text.splitlines():
        if line.lstrip().startswith("#"):
            continue
        try:
            lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
            lexer.whitespace_split = True
            words = list(lexer)
        except ValueError:
            continue
        command: list[str] = []
        for word in [*words, ";"]:
            if word not in _SEPARATORS:
                command.append(word)
            elif command:
                commands.append(_bare(command))
                command = []
    return [c for c in commands if c]


def _bare(command: list[str]) -> list[str]:
    """The command without `sudo`, `env` or leading NAME=value words."""
    words = list(command)
    while words and (words[0] in ("sudo", "env") or re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[0])):
        words = words[1:]
    return words


def apt_packages(script: str) -> list[str]:
    """The Debian packages `script` installs with `apt-get install` or `apt install`, in order.

    Names held in shell variables cannot be read this way and are left out (the verifier
    then fails on them, naming the package, when it runs)."""
    found: list[str] = []
    for command in _commands(script):
        found.extend(name for name in _installed_by(command) if name not in found)
    return found


def _installed_by(command: list[str]) -> list[str]:
    words = command
    if not words or words[0].rsplit("/", 1)[-1] not in ("apt-get", "apt"):
        return []
    rest, skip, sub, names = words[1:], False, None, []
    for word in rest:
        if skip:
            skip = False
        elif word in ("-o", "-c", "-t", "--option", "--config-file", "--target-release"):
            skip = True
        elif word.startswith("-"):
            continue
        elif sub is None:
            sub = word
        elif sub == "install" and "$" not in word and re.fullmatch(r"[a-z0-9][a-z0-9+.:=~-]*", word):
            names.append(word)
    return names


def tools_layer(packages: list[str], uv: bool) -> str:
    """The Dockerfile steps that install the verifier's packages (the network on, as root),
    its shims and, when it runs uv, uv from its wheel; they follow the task's own steps."""
    steps = ["# -- added by `endstate tasks import harbor`: what tests/test.sh installs, installed now",
             "# (grading is offline), and shims answering its own install lines offline.", "USER root"]
    if packages:
        steps.append("RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "
                     + " ".join(shlex.quote(p) for p in packages) + " && rm -rf /var/lib/apt/lists/*")
    steps.append(f"COPY {TOOLS_DIR}/ {TOOLS_HOME}/")
    if uv:
        steps.append(f"RUN cd {TOOLS_HOME} && python3 -m zipfile -e wheels/uv-*.whl /tmp/uv-wheel && mkdir uv "
                     "&& mv /tmp/uv-wheel/uv-*.data/scripts/* uv/ && chmod 755 uv/* && rm -rf /tmp/uv-wheel wheels/uv-*.whl")
    return "\n".join(steps) + "\n"


def shims(uv: bool) -> dict[str, str]:
    """The files of TOOLS_DIR/bin: apt-get and apt; with uv, uv, uvx, and curl and wget
    answering uv's installer URL."""
    files = {"apt-get": _APT_SHIM, "apt": _APT_SHIM}
    if uv:
        files |= {"uv": _UV_SHIM, "uvx": _UV_SHIM, "curl": _FETCH_SHIM, "wget": _FETCH_SHIM}
    return files


class UvUse(NamedTuple):
    """What a test.sh asks of uv: the uv version its installer URL names (or None), the
    requirements its `uvx`/`uv tool run`/`uv pip install` lines name, and the Pythons it asks for."""

    version: str | None
    requirements: list[str]
    pythons: list[str]


#: uvx options that take a value (the next word), before the tool's name.
_UVX_VALUED = {"-w", "--with", "--from", "-p", "--python", "--with-editable", "--with-requirements", "--index",
               "--index-url", "--extra-index-url", "-c", "--constraints", "--find-links", "-f"}


def uv_use(script: str) -> UvUse | None:
    """How `script` uses uv, or None when it does not."""
    installer = re.search(r"astral\.sh/uv/(?:(\d[\w.]*)/)?install\.sh", script)
    used, requirements, pythons = installer is not None, [], []
    for command in _commands(script):
        name, args = command[0].rsplit("/", 1)[-1], command[1:]
        if name == "uv" and args[:2] == ["tool", "run"]:
            name, args = "uvx", args[2:]
        if name == "uvx":
            _uvx(args, requirements, pythons)
        elif name == "uv" and args[:2] == ["pip", "install"]:
            rest = iter(args[2:])
            for word in rest:
                if word in ("-p", "--python", "-r", "--requirement", "-c", "--constraint"):
                    value = next(rest, "")
                    pythons += [value] if word in ("-p", "--python") else []
                elif not word.startswith("-") and "$" not in word:
                    requirements.append(word)
        elif name == "uv":
            words = iter(args)
            pythons += [next(words, "") for word in words if word in ("-p", "--python")]
        else:
            continue
        used = True
    if not used:
        return None
    unique = list(dict.fromkeys(requirements))
    return UvUse(installer[1] if installer else None, unique, list(dict.fromkeys(p for p in pythons if p)))


def _uvx(args: list[str], requirements: list[str], pythons: list[str]) -> None:
    words, tool = iter(args), None
    for word in words:
        option, _, attached = word.partition("=")
        if option in _UVX_VALUED:
            value = attached or next(words, "")
            if option in ("-w", "--with", "--from"):
                requirements.extend(v for v in value.split(",") if v and "$" not in v)
                tool = tool or (value if option == "--from" else None)
            elif option in ("-p", "--python"):
                pythons.append(value)
        elif not word.startswith("-"):
            if tool is None:  # `uvx pytest@8.4.1`: the tool's own package
                requirements.append(word.replace("@", "==", 1))
            return
    return


def download_wheels(use: UvUse, python: str, into: Path) -> list[str]:
    """uv's wheel and the wheels of what `use` installs, for the image's `python` ("3.11")
    on x86-64 Linux, downloaded on this host (pip reaches PyPI); returns their file names."""
    into.mkdir(parents=True, exist_ok=True)
    wanted = [f"uv=={use.version}" if use.version else "uv", *use.requirements]
    ran = subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--only-binary=:all:",
                          "--python-version", python, "--implementation", "cp", "--platform", "manylinux_2_17_x86_64",
                          "--platform", "manylinux2014_x86_64", "--platform", "linux_x86_64", "-d", str(into), *wanted],
                         capture_output=True, text=True, timeout=900)
    if ran.returncode != 0:
        said = (ran.stderr.strip().splitlines() or ["(nothing)"])[-1]
        raise UserError(f"the wheels of {' '.join(wanted)} (what tests/test.sh runs with uv) cannot be downloaded "
                        f"for Python {python}: {said}")
    return sorted(p.name for p in into.iterdir())
