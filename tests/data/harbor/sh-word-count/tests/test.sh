#!/bin/bash
got=$(printf 'one two\nthree\n' | bash /app/count.sh)
if [ "$got" = 3 ]; then echo 1 > /logs/verifier/reward.txt
else echo "count.sh printed '$got', not 3"; echo 0 > /logs/verifier/reward.txt; fi
