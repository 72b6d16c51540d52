#!/bin/bash
cat > /etc/greeter/greeter.conf <<'CONF'
# The greeter's configuration, read by /app/greet.sh.
greeting=Welcome
name=operators
shout=no
CONF
