#!/bin/bash
# Compare the summary of held-out logs with what it must print.
failed=0
for log in /tests/logs/*.log; do
  want="${log%.log}.want"
  if ! diff -u "$want" <(awk -f /app/summary.awk "$log"); then
    echo "wrong summary of $(basename "$log")"
    failed=1
  fi
done
if [ "$failed" = 0 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
