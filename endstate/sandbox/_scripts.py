"""What runs inside a Docker sandbox: the root shell every command runs in (the *runner*),
the file tools' scripts, and the commands that pack and unpack archives there.

A command runs in a small root shell, the *runner*, which:

- starts the command as user `agent` (uid 1000) through `setpriv`;
- copies at most `output_cap_bytes` of each stream and counts the rest
  (`head -c`, then `wc -c`), so a flood never crosses the socket;
- arms a watchdog that, at the deadline, sends SIGKILL to every process the
  agent user owns (`kill -1` with the agent's uid as its effective uid only, so
  that none of them may signal it back). It is forked before the command starts
  and only `exec`s afterwards, so it still fires when a fork bomb has used up
  the pids limit;
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
from endstate.sandbox._tree import FROZEN_ATIME

__all__ = ["AGENT_UID"]

AGENT_UID = 1000
#: How long past a command's own deadline we wait for the runner before deciding
#: the sandbox itself is broken.
_BACKSTOP_S = 30.0

# $1 = output cap in bytes, $2 = milliseconds allowed, $3 = largest file in 1 KiB blocks,
# $4 = workspace ceiling in bytes, $5 = the command.
# fd 5 is the exec's real stderr; the runner's own chatter goes to /dev/null.
#
# Nothing here waits on a background process with `wait`, and no signal or trap
# ends anything: the runner waits on its command in the foreground, then reads a pipe
# (fds 8, 9) to its end of file. The writers of that pipe are the two output copiers,
# the watchdog and the disk watch; the copiers also hold the pipe (fds 6, 7) whose end
# of file tells both watchers to stop, which comes once no process writes the command's
# output any more, the runner included (it holds fds 3 and 4 until its command has
# ended). So the status line is printed only after both trailers, and the watchdog fires
# both on a command that closes its output and runs on, and on a process of the agent's
# that holds the output open past the command. The watchdog never forks (a fork bomb may
# have used up the pids limit): it sleeps in `read -t` and, at the deadline, `exec`s into
# the killer below.
_RUNNER = r"""
nonce=$ENDSTATE_NONCE; unset ENDSTATE_NONCE
cap=$1 limit_ms=$2 fsize=$3 ceiling=$4 cmd=$5
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
# Two pipes, each opened once read-write and then reopened as its two ends.
exec 3<> <(:); exec 6</proc/self/fd/3 7>/proc/self/fd/3 3>&-
exec 3<> <(:); exec 8</proc/self/fd/3 9>/proc/self/fd/3 3>&-
capped() { head -c "$cap"; printf '\n%s %s\n' "$nonce" "$(wc -c)"; }
exec 3> >(exec 6<&- 8<&-; capped)
exec 4> >(exec 3>&- 6<&- 8<&-; capped >&5)
# A read that returned without a line has met the end of file only if the pipe reads as ready
# (nobody writes lines to these pipes): a read a signal cut short is not taken for it.
ended() { read -t 0 -u "$1"; }
clock() { if [ -n "$EPOCHREALTIME" ]; then now=${EPOCHREALTIME/[.,]/}; else now=$((SECONDS * 1000000)); fi; }
# The killer: say why on fd 9 (first: the other watcher, firing too, may kill this one),
# then kill every process of the agent user, again and again until the output ends. It
# signals with the agent's uid as its effective uid only: its real and saved uids are
# nobody's, so no process of the agent's may signal it back (a loop of `kill -9 -1` would
# otherwise kill the killer first, and the command would outlive its deadline).
killer='import os, select, sys
os.write(9, sys.argv[1].encode() + b"\n")
os.setgroups([]); os.setresgid(65534, 65534, 65534); os.setresuid(65534, 1000, 65534)
while True:
    try:
        os.kill(-1, 9)
    except OSError:
        pass
    if select.select([6], [], [], 0.5)[0] and not os.read(6, 1):
        break'
(
  clock; deadline=$((now + limit_ms * 1000))
  while clock; [ "$now" -lt "$deadline" ]; do
    left=$((deadline - now))
    printf -v pause '%d.%06d' $((left / 1000000)) $((left % 1000000))
    read -t "$pause" -u 6; [ $? -le 128 ] && ended 6 && exit 0
  done
  exec python3 -I -S -c "$killer" fired
) </dev/null >/dev/null 3>&- 4>&- 5>&- 7>&- 8<&- &
(
  while :; do
    read -t 0.5 -u 6; [ $? -le 128 ] && ended 6 && exit 0
    used=0; read -r used _ < <(du -sxbl /workspace)
    [ "${used:-0}" -gt "$ceiling" ] && exec python3 -I -S -c "$killer" full
  done
) </dev/null >/dev/null 3>&- 4>&- 5>&- 7>&- 8<&- &
exec 6<&- 7>&- 9>&-
( ulimit -f "$fsize" && exec setpriv --reuid=1000 --regid=1000 --init-groups bash -c "$cmd" ) \
  </dev/null >&3 2>&4 3>&- 4>&- 5>&- 8<&-
status=$?
exec 3>&- 4>&-
fired=0 full=0
while :; do
  if read -r -u 8 word; then
    case $word in fired) fired=99 ;; full) full=98 ;; esac
  elif ended 8; then
    break
  fi
done
exec 8<&-
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
# on stdin; $@ = the folders the archive makes root-owned, "--", every folder it writes a
# tree into, "--", the folders above those. Root may not write into a folder it does not
# own, and tar gives a folder its owner only after filling it: those folders are made root's
# first. Afterwards what it wrote (what changed in those trees since just before), the
# folders above, and what the container holds that a process may read and that is not the
# image's alone (its root, /dev, the folders the engine puts its own files in: /etc, /sbin
# for docker-init; the tmpfs roots) get the access time FROZEN_ATIME: GNU tar sets access
# times to now, whatever the archive says. (What is the image's alone keeps its times: a
# read changes nothing in a lower layer.)
_UNTAR_AS_ROOT = r"""
while [ "$#" -gt 0 ] && [ "$1" != -- ]; do
  if [ -d "$1" ] && [ ! -L "$1" ]; then chown 0:0 -- "$1" || exit 1; fi
  shift
done
shift
printf -v now '%%(%%s)T' -1  # bash >= 4.2, no fork; inode change times run up to a tick behind the clock
since=$((now - 2))
tar --extract --preserve-permissions --same-owner --numeric-owner --directory=/ --file=- || exit
trees=()
while [ "$#" -gt 0 ] && [ "$1" != -- ]; do trees+=("$1"); shift; done
shift
[ "${#trees[@]}" -eq 0 ] || find "${trees[@]}" -xdev -newerct "@$since" -exec touch -a -h -d @%(atime)d -- {} + \
  2>/dev/null
touch -a -h -d @%(atime)d -- "$@" / /.dockerenv /etc /etc/hostname /etc/hosts /etc/resolv.conf /sbin/ \
  /dev /dev/* /tmp /var/tmp /run/lock /home/agent 2>/dev/null
exit 0
""" % {"atime": FROZEN_ATIME}


#: Archive bytes allowed past a folder's content ceiling (headers and padding).
_TAR_SLACK = 4 * _MIB
