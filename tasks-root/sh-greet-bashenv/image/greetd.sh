#!/bin/bash
# Answers each request in the spool's in/ with a greeting in out/.
spool=${GREET_SPOOL:-/var/spool/greet}
while :; do
  for request in "$spool"/in/*; do
    [ -f "$request" ] || continue
    name=$(cat "$request")
    printf 'hello %s\n' "$name" > "$spool/out/${request##*/}.tmp"
    mv "$spool/out/${request##*/}.tmp" "$spool/out/${request##*/}"
    rm -f "$request"
  done
  sleep 0.2
done
