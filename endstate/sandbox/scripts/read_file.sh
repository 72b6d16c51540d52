real=$(realpath -e -- "$1") || exit 2
case $real in /workspace/*) ;; *) printf '%s' "$real" >&2; exit 3;; esac
[ -d "$real" ] && exit 4
cat -- "$real" || exit 5
printf '%s' "$ENDSTATE_EOF"
