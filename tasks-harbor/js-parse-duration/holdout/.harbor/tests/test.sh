#!/bin/bash
# node's own test runner, on the held-out tests.
if node --test /tests/duration.test.js; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
