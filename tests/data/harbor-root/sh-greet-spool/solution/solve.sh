#!/bin/bash
set -e
sed -i "s/printf 'hello %s\\\\n'/printf 'hello, %s\\\\n'/" /app/greetd.sh
grep -q "hello, %s" /app/greetd.sh
useradd --system --no-create-home --shell /usr/sbin/nologin greet
mkdir -p /var/spool/greet/in /var/spool/greet/out
chown greet:greet /var/spool/greet/in /var/spool/greet/out
install -m 0755 /app/greetd.sh /usr/local/bin/greetd
setpriv --reuid=greet --regid=greet --init-groups nohup /usr/local/bin/greetd >/dev/null 2>&1 &
