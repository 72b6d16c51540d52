real=$(realpath -m -- "$1") || exit 2
case $real in /workspace/*) ;; *) printf '%s' "$real" >&2; exit 3;; esac
[ -d "$real" ] && exit 4
mode=644
[ -x "$real" ] && mode=755
mkdir -p -- "${real%/*}" && cat > "$real" && chmod "$mode" -- "$real" && touch -h -d "@$2" -- "$real" || exit 5
printf '%s %s' "$ENDSTATE_EOF" "$(stat -c %s -- "$real")"
