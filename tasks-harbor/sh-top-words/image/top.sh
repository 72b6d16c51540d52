#!/bin/bash
# The N most frequent words on standard input, most frequent first.
tr ' ' '\n' | sort | uniq -c | sort -r | head -n "$1"
