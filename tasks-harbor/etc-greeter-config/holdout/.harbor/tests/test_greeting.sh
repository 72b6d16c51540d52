#!/bin/bash
# The greeter prints what the operators asked for, and its script is the one shipped.
failed=0
got="$(/app/greet.sh 2>&1)"
if [ "$got" != "Welcome, operators!" ]; then
  echo "greet.sh printed '$got', not 'Welcome, operators!'"
  failed=1
fi
if ! cmp -s /app/greet.sh /tests/greet.sh.orig; then
  echo "/app/greet.sh is not the script shipped: the fix belongs in its configuration"
  failed=1
fi
exit "$failed"
