nonce=$ENDSTATE_NONCE uid=${ENDSTATE_AGENT_UID:-1000}; unset ENDSTATE_NONCE ENDSTATE_AGENT_UID
# In a grading container this runs in the harness's own environment (see _runtime.py: PATH holds its
# runtime alone) and the container's is kept aside, as bash words: the command gets it back at its
# last exec, after every program of the harness was found, and the command fenced.
user_env=() reset=()
[ -n "${ENDSTATE_USER_ENV+set}" ] && eval "user_env=($ENDSTATE_USER_ENV)" && reset=(env -i "${user_env[@]}")
unset ENDSTATE_USER_ENV
cap=$1 limit_ms=$2 fsize=$3 ceiling=$4 cmd=$5 wrapper=("${@:6}")
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
os.setgroups([]); os.setresgid(65534, 65534, 65534); os.setresuid(65534, int(sys.argv[2]), 65534)
while True:
    try:
        os.kill(-1, 9)
    except OSError:
        pass
    if select.select([6], [], [], 0.5)[0] and not os.read(6, 1):
        break'
# An agent that works as root (a Harbor task's, see _layer) shares its uid with this runner:
# the killer then signals, again and again, every process the command started, known by the
# OOM score the command's subshell took (1000; lowering it needs a capability the agent lacks).
root_killer='import os, select, sys
os.write(9, sys.argv[1].encode() + b"\n")
me = os.getpid()
def agents():
    for name in os.listdir("/proc"):
        try:
            with open("/proc/" + name + "/oom_score_adj", "rb") as f:
                score = f.read().strip()
            with open("/proc/" + name + "/stat", "rb") as f:
                state = f.read().rsplit(b") ", 1)[1][:1]
            if score == b"1000" and state != b"Z" and int(name) != me:
                yield int(name)
        except (OSError, ValueError, IndexError):
            pass
while True:
    for _ in range(100):
        found = False
        for pid in agents():
            found = True
            try:
                os.kill(pid, 9)
            except OSError:
                pass
        if not found:
            break
    if select.select([6], [], [], 0.5)[0] and not os.read(6, 1):
        break'
# Root keeps Docker's default capabilities but KILL, whatever more the container's harness holds.
bounds=()
if [ "$uid" = 0 ]; then
  killer=$root_killer
  bounds=(--bounding-set=-all,+chown,+dac_override,+fowner,+fsetid,+setuid,+setgid,+net_bind_service,+setfcap,+sys_chroot,+audit_write)
fi
(
  clock; deadline=$((now + limit_ms * 1000))
  while clock; [ "$now" -lt "$deadline" ]; do
    left=$((deadline - now))
    printf -v pause '%d.%06d' $((left / 1000000)) $((left % 1000000))
    read -t "$pause" -u 6; [ $? -le 128 ] && ended 6 && exit 0
  done
  exec python3 -I -S -c "$killer" fired "$uid"
) </dev/null >/dev/null 3>&- 4>&- 5>&- 7>&- 8<&- &
(
  while :; do
    read -t 0.5 -u 6; [ $? -le 128 ] && ended 6 && exit 0
    used=0; read -r used _ < <(du -sxbl /workspace)
    [ "${used:-0}" -gt "$ceiling" ] && exec python3 -I -S -c "$killer" full "$uid"
  done
) </dev/null >/dev/null 3>&- 4>&- 5>&- 7>&- 8<&- &
exec 6<&- 7>&- 9>&-
# The command is the memory cgroup's first choice when it fills the sandbox's memory: the
# runner and its watchers, which say what happened, go on (raising the score needs no privilege).
( ulimit -f "$fsize" || exit; echo 1000 > /proc/self/oom_score_adj
  setpriv=$(type -P setpriv) shell=$(type -P bash)
  [ ${#wrapper[@]} -gt 0 ] && wrapper[0]=$(type -P "${wrapper[0]}")
  [ ${#reset[@]} -gt 0 ] && reset[0]=$(type -P env)
  # `bash` as $0: the shell's own messages read `bash: line 1: ...` whichever path started it (replay matches them)
  exec "${wrapper[@]}" "$setpriv" --reuid="$uid" --regid="$uid" --init-groups "${bounds[@]}" "${reset[@]}" \
    "$shell" -c "$cmd" bash ) \
  </dev/null >&3 2>&4 3>&- 4>&- 5>&- 8<&-
status=$?
exec 3>&- 4>&-
fired=0 full=0
while :; do
  if read -r -u 8 word; then
    case $word in fired) fired=@WATCHDOG_FIRED@ ;; full) full=@DISK_WATCH_FIRED@ ;; esac
  elif ended 8; then
    break
  fi
done
exec 8<&-
used=0; read -r used _ < <(du -sxbl /workspace)
oom_kills
printf '%s status %s %s %s %s %s\n' "$nonce" "$status" "$fired" "$full" "$used" "$((oom - oom_before))" >&5
