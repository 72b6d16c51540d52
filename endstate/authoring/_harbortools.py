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

__all__ = ["SHIM_DIR", "TOOLS_DIR", "apt_packages", "shims", "tools_layer"]

#: Beside the image's Dockerfile: what the layer copies into /opt/endstate-verifier/bin.
TOOLS_DIR = ".endstate-verifier"
#: In the image; the verifier grader puts it first on test.sh's PATH.
SHIM_DIR = "/opt/endstate-verifier/bin"

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

_REDIRECT = re.compile(r"\d*(?:&>>?|>>?&?|<)\s*\S+")
_SEPARATORS = {"&&", "||", ";", "|", "&", "(", ")", "\n"}


def apt_packages(script: str) -> list[str]:
    """The Debian packages `script` installs with `apt-get install` or `apt install`, in order.

    Names held in shell variables cannot be read this way and are left out (the verifier
    then fails on them, naming the package, when it runs)."""
    text = _REDIRECT.sub(" ", re.sub(r"\\\n", " ", script))
    found: list[str] = []
    for line in text.splitlines():
        line = line.split("#", 1)[0] if line.lstrip().startswith("#") else line
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
                continue
            found.extend(name for name in _installed_by(command) if name not in found)
            command = []
    return found


def _installed_by(command: list[str]) -> list[str]:
    words = list(command)
    while words and (words[0] in ("sudo", "env") or re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[0])):
        words = words[1:]  # sudo, or DEBIAN_FRONTEND=noninteractive apt-get ...
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


def tools_layer(packages: list[str]) -> str:
    """The Dockerfile step that installs the verifier's packages (the network on, as root)
    and its apt shims; it follows the task's own steps."""
    install = ""
    if packages:
        install = ("RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "
                   + " ".join(shlex.quote(p) for p in packages) + " && rm -rf /var/lib/apt/lists/*\n")
    return (
        "# -- added by `endstate tasks import harbor`: what tests/test.sh installs, installed now\n"
        "# (grading is offline), and apt answering the verifier's own apt-get lines offline.\n"
        f"USER root\n{install}COPY {TOOLS_DIR}/ {SHIM_DIR}/\n")


def shims() -> dict[str, str]:
    """The files of TOOLS_DIR: apt-get and apt."""
    return {"apt-get": _APT_SHIM, "apt": _APT_SHIM}
