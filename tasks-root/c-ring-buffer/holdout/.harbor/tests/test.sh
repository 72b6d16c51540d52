#!/bin/bash
# Build the library with the project's Makefile in a copy of it, link the held-out test
# against it, run it.
build=$(mktemp -d)
cp -r /app/. "$build/"
rm -f "$build"/*.o "$build"/*.a
if make -s -C "$build" libring.a \
   && gcc -Wall -Werror -I"$build" /tests/test_ring.c "$build/libring.a" -o "$build/test_ring" \
   && "$build/test_ring"; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
