#!/usr/bin/env bats

@test "counts are compared as numbers" {
  run bash -c "{ yes alpha | head -n 10; yes beta | head -n 9; } | bash /app/top.sh 2"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "10 alpha" ]
  [ "${lines[1]}" = "9 beta" ]
}

@test "words are runs of letters, without case" {
  run bash -c "printf 'The cat, the DOG; the end.\nDon'\''t stop\n' | bash /app/top.sh 3"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "3 the" ]
  [ "${lines[1]}" = "1 cat" ]
  [ "${lines[2]}" = "1 dog" ]
  [ "${#lines[@]}" -eq 3 ]
}

@test "ties are alphabetical and lines have no leading blanks" {
  run bash -c "printf 'pear apple fig\nfig apple pear\n' | bash /app/top.sh 5"
  [ "$status" -eq 0 ]
  [ "$output" = "$(printf '2 apple\n2 fig\n2 pear')" ]
}
