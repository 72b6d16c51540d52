#!/bin/bash
# Talks to the running greet service through its spool, as root (as Harbor runs a verifier).
mkdir -p /logs/verifier
fail() { echo "FAIL: $*"; echo 0 > /logs/verifier/reward.txt; exit 0; }
id greet >/dev/null 2>&1 || fail "no user greet"
for d in in out; do
  [ "$(stat -c %U /var/spool/greet/$d 2>/dev/null)" = greet ] || fail "/var/spool/greet/$d is not greet's"
done
pgrep -u greet -f /usr/local/bin/greetd >/dev/null || fail "greetd is not running as greet"
request=probe-$$
echo "ada" > /var/spool/greet/in/$request
for _ in $(seq 1 50); do
  [ -f /var/spool/greet/out/$request ] && break
  sleep 0.2
done
answer=$(cat /var/spool/greet/out/$request 2>/dev/null)
[ "$answer" = "hello, ada" ] || fail "the service answered '$answer', not 'hello, ada'"
echo PASS
echo 1 > /logs/verifier/reward.txt
