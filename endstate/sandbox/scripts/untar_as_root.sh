while [ "$#" -gt 0 ] && [ "$1" != -- ]; do
  if [ -d "$1" ] && [ ! -L "$1" ]; then chown 0:0 -- "$1" || exit 1; fi
  shift
done
shift
printf -v now '%(%s)T' -1  # bash >= 4.2, no fork; inode change times run up to a tick behind the clock
since=$((now - 2))
tar --extract --preserve-permissions --same-owner --numeric-owner --directory=/ --file=- || exit
trees=()
while [ "$#" -gt 0 ] && [ "$1" != -- ]; do trees+=("$1"); shift; done
shift
[ "${#trees[@]}" -eq 0 ] || find "${trees[@]}" -xdev -newerct "@$since" -exec touch -a -h -d @@ATIME@ -- {} + \
  2>/dev/null
touch -a -h -d @@ATIME@ -- "$@" / /.dockerenv /etc /etc/hostname /etc/hosts /etc/resolv.conf /sbin/ \
  /dev /dev/* /tmp /var/tmp /run/lock /home/agent 2>/dev/null
exit 0
