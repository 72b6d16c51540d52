#!/bin/bash
# Prints the greeting /etc/greeter/greeter.conf configures: greeting, name, shout (yes or no).
set -eu
. /etc/greeter/greeter.conf
message="$greeting, $name!"
if [ "$shout" = yes ]; then
  message="${message^^}"
fi
echo "$message"
