"""What runs inside a Docker sandbox: the root shell every command runs in (the *runner*),
the file tools' scripts, and the commands that pack and unpack archives there.

A command runs in a small root shell, the *runner*, which:

- starts the command as user `agent` (uid 1000) through `setpriv`;
- copies at most `output_cap_bytes` of each stream and counts the rest
  (`head -c`, then `wc -c`), so a flood never crosses the socket;
- arms a watchdog that, at the deadline, becomes the agent user and sends
  SIGKILL to every process that user owns (`kill -1`). It is forked before the
  command starts and only `exec`s afterwards, so it still fires when a fork bomb
  has used up the pids limit;
- limits the size of any file the command writes (`ulimit -f`), and watches
  the workspace's size while it runs (`du`, twice a second): past the ceiling
  every process of the agent user is killed and `exec` raises WorkspaceFull;
- notes whether the container's memory cgroup killed a process meanwhile (OOM);
- ends both streams with a trailer carrying a per-command nonce, which the
  agent cannot read (it travels in the root shell's environment), so the
  trailer cannot be forged from inside. The trailer also carries the
  workspace's size, measured after the command, at no extra round trip.

The file tools run as the agent user too (`read_file`, `write_file`, `edit_file`): they
see what the agent may see, and refuse any path that resolves out of the workspace. The
server does the plain case itself in a child that has become the agent user, and hands
every other case to the tool's shell script, which words the errors.
"""

from __future__ import annotations

from endstate.sandbox._base import SANDBOX_ENV, WORKDIR

__all__ = ["AGENT_UID"]

AGENT_UID = 1000
#: How long past a command's own deadline we wait for the runner before deciding
#: the sandbox itself is broken.
_BACKSTOP_S = 30.0

# $1 = output cap in bytes, $2 = seconds allowed, $3 = largest file in 1 KiB blocks,
# $4 = workspace ceiling in bytes, $5 = the command.
# fd 5 is the exec's real stderr; the runner's own chatter goes to /dev/null.
_RUNNER = r"""
nonce=$ENDSTATE_NONCE; unset ENDSTATE_NONCE
cap=$1 limit=$2 fsize=$3 ceiling=$4 cmd=$5
exec 5>&2 2>/dev/null
oom_kills() {
  oom=0
  local file key value
  for file in /sys/fs/cgroup/memory.events /sys/fs/cgroup/memory/memory.oom_control; do
    [ -r "$file" ] || continue
    while read -r key value; do [ "$key" = oom_kill ] && oom=$value; done < "$file"
    return
  done
}
oom_kills; oom_before=$oom
capped() { head -c "$cap"; printf '\n%s %s\n' "$nonce" "$(wc -c)"; }
exec 3> >(capped); out=$!
exec 4> >(exec 3>&-; capped >&5); err=$!
(
  trap 'kill $nap; exit 0' TERM
  sleep "$limit" & nap=$!
  wait $nap
  exec setpriv --reuid=1000 --regid=1000 --clear-groups bash -c 'kill -s KILL -1; exit 99'
) </dev/null >/dev/null 3>&- 4>&- 5>&- &
watchdog=$!
(
  trap 'exit 0' TERM
  exec 6<> <(:)  # a pipe nobody writes to: `read -t` on it sleeps without forking
  while :; do
    read -t 0.5 -u 6
    used=0; read -r used _ < <(du -sxbl /workspace)
    if [ "${used:-0}" -gt "$ceiling" ]; then
      exec setpriv --reuid=1000 --regid=1000 --clear-groups bash -c 'kill -s KILL -1; exit 98'
    fi
  done
) </dev/null >/dev/null 3>&- 4>&- 5>&- &
diskwatch=$!
( ulimit -f "$fsize" && exec setpriv --reuid=1000 --regid=1000 --init-groups bash -c "$cmd" ) \
  </dev/null >&3 2>&4 3>&- 4>&- 5>&- &
wait $!; status=$?
exec 3>&- 4>&-
wait $out $err
kill -TERM $watchdog $diskwatch; wait $watchdog; fired=$?; wait $diskwatch; full=$?
used=0; read -r used _ < <(du -sxbl /workspace)
oom_kills
printf '%s status %s %s %s %s %s\n' "$nonce" "$status" "$fired" "$full" "$used" "$((oom - oom_before))" >&5
"""
_WATCHDOG_FIRED = 99
_DISK_WATCH_FIRED = 98
_MIB = 1024 * 1024

# Runs as the agent user. $1 = the workspace path asked for. Exit 3: it resolves out
# of the workspace; 4: it is a folder; 2: there is no such file. Otherwise cat's own.
#: Ends a file tool's output, so output the engine lost is told from an empty file.
_EOF = b"[endstate-eof-5c1e]"

_READ = r"""
real=$(realpath -e -- "$1") || exit 2
case $real in /workspace/*) ;; *) printf '%s' "$real" >&2; exit 3;; esac
[ -d "$real" ] && exit 4
cat -- "$real" || exit 5
printf '%s' "$ENDSTATE_EOF"
"""

# Runs as the agent user, the new bytes on stdin. $1 = the workspace path, $2 = the
# fixed mtime. Writes through a link that stays inside the workspace; a file that was
# executable stays so; a new file is 0644.
_WRITE = r"""
real=$(realpath -m -- "$1") || exit 2
case $real in /workspace/*) ;; *) printf '%s' "$real" >&2; exit 3;; esac
[ -d "$real" ] && exit 4
mode=644
[ -x "$real" ] && mode=755
mkdir -p -- "${real%/*}" && cat > "$real" && chmod "$mode" -- "$real" && touch -h -d "@$2" -- "$real" || exit 5
printf '%s %s' "$ENDSTATE_EOF" "$(stat -c %s -- "$real")"
"""


#: How the in-sandbox server runs a file tool's script as the agent user, and with what environment.
_AS_AGENT = ["setpriv", f"--reuid={AGENT_UID}", f"--regid={AGENT_UID}", "--init-groups"]
_AGENT_ENV = {**SANDBOX_ENV, "ENDSTATE_EOF": _EOF.decode()}


# Runs as root. $1/$2 = the folder, $3 = most bytes of archive to send. Exit 44: no such folder.
_TAR_FOLDER = r"""
[ -d "$1/$2" ] || exit 44
set -o pipefail
tar --create --ignore-failed-read --directory="$1" -- "$2" 2>/dev/null | head -c "$3"
"""
#: Unpacks an archive (standard input) into the workspace as the agent user: what it writes
#: is the agent's, modes as archived (`put_tree`).
_UNTAR_AS_AGENT = [*_AS_AGENT, "tar", "--extract", "--preserve-permissions", "--no-same-owner",
                   f"--directory={WORKDIR}", "--file=-"]

# Runs as root in a grading container (which grants root CHOWN and FOWNER), the archive
# on stdin; $@ = the folders the archive makes root-owned. Root may not write into a folder
# it does not own, and tar gives a folder its owner only after filling it: those folders
# are made root's first.
_UNTAR_AS_ROOT = r"""
for folder; do
  if [ -d "$folder" ] && [ ! -L "$folder" ]; then chown 0:0 -- "$folder" || exit 1; fi
done
exec tar --extract --preserve-permissions --same-owner --numeric-owner --directory=/ --file=-
"""


#: Archive bytes allowed past a folder's content ceiling (headers and padding).
_TAR_SLACK = 4 * _MIB
