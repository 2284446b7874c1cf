#!/usr/bin/env bash
# run.sh CXX INCLUDE_DIR — each case here must fail to compile with the message its first line
# names ("// expect: …"); ok_control.cpp must compile. One line per case.
set -uo pipefail
cxx=$1 inc=$2
dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
status=0
for src in "$dir"/*.cpp; do
  expect=$(head -1 "$src" | sed 's|^// expect: ||')
  out=$("$cxx" -std=c++20 -fsyntax-only -I"$inc" "$src" 2>&1)
  rc=$?
  name=$(basename "$src")
  if [ "${expect%% *}" = "OK" ]; then
    if [ $rc -eq 0 ]; then echo "ok   $name compiles"; else echo "FAIL $name should compile:"; echo "$out" | head -5; status=1; fi
  elif [ $rc -eq 0 ]; then
    echo "FAIL $name compiled but must not"; status=1
  elif grep -q -- "$expect" <<<"$out"; then
    echo "ok   $name: $expect"
  else
    echo "FAIL $name failed without '$expect':"; echo "$out" | grep -m3 error; status=1
  fi
done
exit $status
