#!/bin/bash
# The N most frequent words on standard input, most frequent first.
tr -cs '[:alpha:]' '\n' | tr '[:upper:]' '[:lower:]' | grep -v '^$' \
  | sort | uniq -c | sort -k1,1nr -k2,2 | head -n "$1" | awk '{ print $1, $2 }'
