[ -d "$1/$2" ] || exit 44
set -o pipefail
tar --create --ignore-failed-read --directory="$1" -- "$2" 2>/dev/null | head -c "$3"
